package doccheck

import (
	"archive/zip"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The checks here need the framelake binary: they build it once (about a
// minute with a cold build cache; a link, about 10 CPU-seconds, with a warm
// one), so -short leaves them out. Under make test they take the binary it
// built for the end-to-end suite (FRAMELAKE_TEST_BIN, as cmd/framelake does).

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	builtDir  string // the folder of a binary built here, removed after the tests
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

func framelakeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the framelake binary: left out under -short")
	}
	buildOnce.Do(func() {
		if binPath = os.Getenv("FRAMELAKE_TEST_BIN"); binPath != "" {
			return
		}
		dir, err := os.MkdirTemp("", "doccheck-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtDir = dir
		binPath = filepath.Join(dir, "framelake")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/framelake").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var helpFlag = regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`)

// flagsOf runs "framelake <cmd...> -h" and returns the flags it lists, or
// the error text when the command is not one the binary has.
func flagsOf(bin string, cmd []string) (map[string]bool, string) {
	out, _ := exec.Command(bin, append(append([]string{}, cmd...), "-h")...).CombinedOutput()
	text := string(out)
	flags := map[string]bool{"h": true, "help": true}
	for _, m := range helpFlag.FindAllStringSubmatch(text, -1) {
		flags[m[1]] = true
	}
	if len(flags) == 2 && (strings.Contains(text, "unknown") || !strings.Contains(text, "Usage of")) {
		return nil, text // not a command, or a group whose commands come next
	}
	return flags, ""
}

// TestFramelakeExamplesUseRealFlags: every framelake command line of README
// and docs/ names a command the binary has and only flags that command
// lists in its -h. A renamed flag or command fails here.
func TestFramelakeExamplesUseRealFlags(t *testing.T) {
	bin := framelakeBin(t)
	known := map[string]map[string]bool{}
	n := 0
	for _, b := range shellBlocks(t) {
		if b.marker == "skip" {
			continue
		}
		for _, words := range commands(b.text) {
			for i, w := range words {
				if w != "framelake" && w != "bin/framelake" && !strings.HasSuffix(w, "/bin/framelake") {
					continue
				}
				args := words[i+1:]
				if len(args) == 0 || strings.HasPrefix(args[0], "-") || strings.ToUpper(args[0]) == args[0] {
					break // a mention such as "framelake COMMAND"
				}
				n++
				where := fmt.Sprintf("%s (block at line %d): framelake %s", b.doc, b.line, strings.Join(args, " "))
				// The command is its leading words up to the first that
				// "-h" accepts: keys create, eval run, media migrate, ...
				var cmd []string
				var flags map[string]bool
				for _, a := range args {
					if strings.HasPrefix(a, "-") {
						break
					}
					cmd = append(cmd, a)
					key := strings.Join(cmd, " ")
					if f, ok := known[key]; ok {
						flags = f
						break
					}
					if f, _ := flagsOf(bin, cmd); f != nil {
						known[key], flags = f, f
						break
					}
					if len(cmd) == 2 {
						break
					}
				}
				if flags == nil {
					t.Errorf("%s: the binary has no such command", where)
					break
				}
				for _, a := range args[len(cmd):] {
					if !strings.HasPrefix(a, "-") || a == "-" {
						continue
					}
					name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
					if !flags[name] {
						t.Errorf("%s: framelake %s has no flag -%s", where, strings.Join(cmd, " "), name)
					}
				}
				break
			}
		}
	}
	if n < 30 {
		t.Errorf("found %d framelake command lines; the documents hold more than 30", n)
	}
	t.Logf("%d framelake command lines checked", n)
}

// TestReadmeTour runs README's ten-line tour (the block marked "doccheck:
// run") as a bash script against the real binary, in a new folder on a free
// port, as a user would after make run: it must exit 0 and leave tour.zip
// with the COCO annotations of the three splits.
func TestReadmeTour(t *testing.T) {
	bin := framelakeBin(t)
	for _, need := range []string{"curl", "jq", "bash"} {
		if _, err := exec.LookPath(need); err != nil {
			t.Fatalf("the tour needs %s (make deps installs it): %v", need, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var tour string
	for _, b := range blocksOf("README.md", string(readme)) {
		if b.marker == "run" {
			tour = b.text
		}
	}
	if tour == "" {
		t.Fatal(`README has no block marked <!-- doccheck: run ... -->`)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dir, "bin", "framelake")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	script := "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n" +
		strings.ReplaceAll(tour, "127.0.0.1:8080", addr) + "\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the tour did not finish in 3 minutes:\n%s", out)
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
		t.Fatalf("the tour failed: %v\n%s\nserve.log:\n%s", err, out, log)
	}
	if !strings.Contains(string(out), `[{"count":2}]`) {
		t.Errorf("the tour's count is not the [{\"count\":2}] README shows:\n%s", out)
	}
	z, err := zip.OpenReader(filepath.Join(dir, "tour.zip"))
	if err != nil {
		t.Fatalf("tour.zip: %v\n%s", err, out)
	}
	defer z.Close()
	found := map[string]bool{}
	for _, f := range z.File {
		found[f.Name] = true
	}
	for _, want := range []string{"tour-1.0-coco/train/annotations.json", "tour-1.0-coco/valid/annotations.json",
		"tour-1.0-coco/test/annotations.json"} {
		if !found[want] {
			t.Errorf("tour.zip lacks %s (README says it holds it); it has %v", want, found)
		}
	}
}
