package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
)

// The kill harness: each operation runs against the real binary, which is
// killed with SIGKILL at random moments, restarted and checked through the
// API and with `framelake check`. FRAMELAKE_KILL_POINTS sets the kill
// points per operation (default 3, so `make test` stays fast; README,
// "Durability", gives the full run); FRAMELAKE_KILL_IMPORT_FILES the size
// of the import (default 300; 2000 in the full run).

func killPoints() int { return envInt("FRAMELAKE_KILL_POINTS", 3) }

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// server is a `framelake serve` subprocess.
type server struct {
	cmd  *exec.Cmd
	base string
	log  *logBuffer
}

func startServer(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	addr := freeAddr(t)
	s := &server{base: "http://" + addr, log: &logBuffer{}}
	s.cmd = exec.Command(bin, append([]string{"serve", "--data", data, "--addr", addr}, extra...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	waitHealthy(t, s.base)
	return s
}

func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("server did not stop cleanly: %v\n%s", err, s.log.String())
	}
}

// writeKey makes a write key on data (a server may be running on it).
func writeKey(t *testing.T, data string) (key, secret string) {
	t.Helper()
	return namedWriteKey(t, data, "crash")
}

// namedWriteKey is writeKey with the key's name, which the web app shows.
func namedWriteKey(t *testing.T, data, name string) (key, secret string) {
	t.Helper()
	out, err := run(t, "keys", "create", "--data", data, "--name", name, "--role", "write", "--json")
	var k map[string]string
	if err != nil || json.Unmarshal([]byte(out), &k) != nil {
		t.Fatalf("keys create: %v %s", err, out)
	}
	return k["key"], k["secret"]
}

// mustCheck runs `framelake check` and fails unless it finds no problem.
func mustCheck(t *testing.T, data string, extra ...string) {
	t.Helper()
	out, err := run(t, append([]string{"check", "--data", data}, extra...)...)
	if err != nil {
		t.Fatalf("framelake check %v: %v\n%s", extra, err, out)
	}
}

// killAt kills s after a random time in [lo, hi).
func killAt(s *server, lo, hi time.Duration) {
	time.Sleep(lo + rand.N(hi-lo))
	s.kill()
}

// acked records what the server answered 2xx: a file's uniqueName and the
// SHA-256 of the bytes sent.
type acked struct {
	mu    sync.Mutex
	files map[string]string
}

func (a *acked) add(name, sum string) {
	a.mu.Lock()
	a.files[name] = sum
	a.mu.Unlock()
}

func (a *acked) snapshot() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]string, len(a.files))
	for k, v := range a.files {
		out[k] = v
	}
	return out
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func bytesFile(name string, b []byte) client.UploadFile {
	return client.UploadFile{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

// verifyFiles checks that every acknowledged file is served whole: its
// details answer and its media link returns the bytes that were sent.
func verifyFiles(t *testing.T, c *client.Client, files map[string]string) {
	t.Helper()
	ctx := context.Background()
	for name, want := range files {
		d, err := c.GetFileDetails(ctx, name, nil)
		if err != nil {
			t.Fatalf("file %s answered 2xx before the kill is gone: %v", name, err)
		}
		u, _ := d["url"].(string)
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || sum(b) != want {
			t.Fatalf("file %s: media answered %d with %d bytes not the ones sent (%v)", name, resp.StatusCode, len(b), err)
		}
	}
}

// tally counts kill points per operation for the report.
type tally struct{ tried, survived int }

func (k *tally) report(t *testing.T, op string) {
	t.Logf("kill points: %s: %d tried, %d survived", op, k.tried, k.survived)
}

// TestKillFrameUploads kills the server during concurrent frame uploads to
// a project; every frame answered 2xx is there after a restart, whole.
func TestKillFrameUploads(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	key, secret := writeKey(t, data)
	ctx := context.Background()
	pid, err := client.New(s.base, key, secret).CreateProject(ctx, client.Project{Name: "crash",
		ContentType: client.ContentImage, Labels: []client.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	ok := &acked{files: map[string]string{}}
	var k tally
	seed := 0
	for point := range killPoints() {
		c := client.New(s.base, key, secret)
		up, err := c.InitializeUpload(ctx, pid, fmt.Sprintf("batch-%d", point), 100000)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range 4 {
			seed += 1000
			wg.Go(func() {
				for i := 0; ; i++ {
					b := testmedia.JPEG(160, 120, seed+i)
					res, err := c.UploadFrame(ctx, up.UploadID, client.Frame{File: bytesFile(fmt.Sprintf("f%d-%d-%d.jpg", point, w, i), b)})
					if err != nil {
						return // the kill
					}
					ok.add(res.UniqueName, sum(b))
				}
			})
		}
		killAt(s, 100*time.Millisecond, 1500*time.Millisecond)
		wg.Wait()
		k.tried++
		s = startServer(t, data)
		verifyFiles(t, client.New(s.base, key, secret), ok.snapshot())
		s.stop(t)
		mustCheck(t, data)
		s = startServer(t, data)
		k.survived++
	}
	t.Logf("%d frames answered 2xx across the kills", len(ok.files))
	k.report(t, "frame uploads")
}

// TestKillMetadataPatches kills the server during a storm of metadata
// patches: each file keeps the last value answered 2xx, or the one in
// flight at the kill.
func TestKillMetadataPatches(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	key, secret := writeKey(t, data)
	ctx := context.Background()
	var ups []client.UploadFile
	for i := range 6 {
		ups = append(ups, bytesFile(fmt.Sprintf("m%d.jpg", i), testmedia.JPEG(64, 48, 7000+i)))
	}
	res, err := client.New(s.base, key, secret).UploadFiles(ctx, client.UploadOptions{Collection: "meta"}, ups...)
	if err != nil || len(res.Stored) != len(ups) {
		t.Fatalf("upload: %+v %v", res, err)
	}
	last := make([]int, len(ups)) // last value answered 2xx, per file
	var k tally
	for range killPoints() {
		c := client.New(s.base, key, secret)
		var wg sync.WaitGroup
		for i, f := range res.Stored {
			wg.Go(func() {
				for v := last[i] + 1; ; v++ {
					if _, err := c.PatchFileMetadata(ctx, f.UniqueName, map[string]any{"n": v, "note": strconv.Itoa(v)}); err != nil {
						return
					}
					last[i] = v
				}
			})
		}
		killAt(s, 100*time.Millisecond, 1000*time.Millisecond)
		wg.Wait()
		k.tried++
		s = startServer(t, data)
		c = client.New(s.base, key, secret)
		for i, f := range res.Stored {
			d, err := c.GetFileDetails(ctx, f.UniqueName, map[string]bool{"n": true, "note": true})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := d["n"].(float64)
			if int(n) != last[i] && int(n) != last[i]+1 || d["note"] != strconv.Itoa(int(n)) {
				t.Fatalf("file %s: metadata n=%v note=%v after the kill, last answered %d", f.UniqueName, d["n"], d["note"], last[i])
			}
			last[i] = int(n)
		}
		s.stop(t)
		mustCheck(t, data)
		s = startServer(t, data)
		k.survived++
	}
	t.Logf("%v patches answered per file", last)
	k.report(t, "metadata patches")
}

// TestKillImport kills `framelake import --data` at random moments; `check
// --repair` then fixes what the kill left (blobs placed, rows not yet
// committed), a re-run completes the import with every file once.
func TestKillImport(t *testing.T) {
	media := t.TempDir()
	n := envInt("FRAMELAKE_KILL_IMPORT_FILES", 300)
	if err := testmedia.WriteJPEGs(media, n, 320, 240); err != nil {
		t.Fatal(err)
	}
	var k tally
	for range killPoints() {
		data := t.TempDir()
		imp := exec.Command(bin, "import", media, "--data", data, "--collection", "crash", "--batch", "32")
		if err := imp.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill once a random share of the files is in (0: before the first commit).
		db, target := filepath.Join(data, "framelake.db"), rand.N(n*9/10)
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end) && countFiles(t, db, true) < target; {
			time.Sleep(5 * time.Millisecond)
		}
		imp.Process.Signal(syscall.SIGKILL)
		imp.Wait()
		k.tried++
		landed := countFiles(t, db, true)
		if _, err := os.Stat(filepath.Join(data, "framelake.db")); err == nil {
			mustCheck(t, data, "--repair")
			mustCheck(t, data)
		}
		out, err := run(t, "import", media, "--data", data, "--collection", "crash", "--json")
		if err != nil {
			t.Fatalf("re-run: %v %s", err, out)
		}
		if c := countFiles(t, filepath.Join(data, "framelake.db"), false); c != n {
			t.Fatalf("after the re-run: %d files, want %d (%s)", c, n, out)
		}
		checkConsistent(t, data)
		mustCheck(t, data)
		t.Logf("killed with %d of %d files in", landed, n)
		k.survived++
	}
	k.report(t, fmt.Sprintf("import of %d files", n))
}

// TestKillDatasetBuild kills the server while it builds a dataset with
// augmentations; at the restart the build resumes (or fails with a reason
// and a retry completes it) into a version whole, never half built.
func TestKillDatasetBuild(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	key, secret := writeKey(t, data)
	ctx := context.Background()
	var ups []client.UploadFile
	const frames = 48
	for i := range frames {
		ups = append(ups, bytesFile(fmt.Sprintf("d%d.jpg", i), testmedia.JPEG(640, 480, 9000+i)))
	}
	c := client.New(s.base, key, secret)
	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "ds"}, ups...)
	if err != nil || len(res.Stored) != frames {
		t.Fatalf("upload: %+v %v", res, err)
	}
	coll := collectionID(t, data)
	const flipAndBlur = `{"IMAGE_LEVEL": [{"id": "FLIP_IMAGE", "properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}]},
		{"id": "IMAGE_BLUR", "properties": [{"id": "BLUR", "values": [1, 3]}]}]}`
	var k tally
	resumed := 0
	for point := range killPoints() {
		c := client.New(s.base, key, secret)
		b, err := c.CreateDatasetFromCollection(ctx, fmt.Sprintf("crash-%d", point), coll, client.DatasetSpec{
			SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}, AugmentationList: json.RawMessage(flipAndBlur)})
		if err != nil {
			t.Fatal(err)
		}
		killAt(s, 5*time.Millisecond, 500*time.Millisecond)
		k.tried++
		s = startServer(t, data)
		c = client.New(s.base, key, secret)
		j, err := c.WaitJob(ctx, b.JobID)
		if err == nil && j.Status != "completed" {
			t.Logf("build job %s after the kill: %s (%s); retrying", j.ID, j.Status, j.Error)
			if _, err = c.RetryDatasetVersion(ctx, b.VersionID); err == nil {
				v, _ := c.DatasetVersion(ctx, b.VersionID)
				j, err = c.WaitJob(ctx, v.JobID)
			}
		}
		if err != nil || j.Status != "completed" {
			t.Fatalf("build after the kill: %+v %v", j, err)
		}
		if j.Attempts > 1 {
			resumed++ // the kill interrupted it running
		}
		v, err := c.DatasetVersion(ctx, b.VersionID)
		if err != nil || v.Status != "ready" || v.StatsSummary.TotalFrames < frames {
			t.Fatalf("version after the kill: %+v %v", v, err)
		}
		s.stop(t)
		mustCheck(t, data)
		s = startServer(t, data)
		k.survived++
	}
	t.Logf("%d of %d builds were killed running and resumed", resumed, k.tried)
	k.report(t, "dataset build with augmentations")
}

// collectionID reads the one collection's id from the database.
func collectionID(t *testing.T, data string) string {
	t.Helper()
	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.R.QueryRow("SELECT id FROM collection LIMIT 1").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestKillEmbeddingInsert kills the server during concurrent embedding
// batches (each with a session, so a job records it): every batch answered
// 2xx is there with its job, and no batch is there in part.
func TestKillEmbeddingInsert(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	key, secret := writeKey(t, data)
	ctx := context.Background()
	const workers, per = 4, 8
	var ups []client.UploadFile
	for i := range workers * per {
		ups = append(ups, bytesFile(fmt.Sprintf("e%d.jpg", i), testmedia.JPEG(32, 24, 5000+i)))
	}
	res, err := client.New(s.base, key, secret).UploadFiles(ctx, client.UploadOptions{Collection: "emb"}, ups...)
	if err != nil || len(res.Stored) != len(ups) {
		t.Fatalf("upload: %+v %v", res, err)
	}
	names := func(w int) []string {
		var out []string
		for _, f := range res.Stored[w*per : (w+1)*per] {
			out = append(out, f.UniqueName)
		}
		return out
	}
	last := make([]int, workers)
	var jobs []string
	var mu sync.Mutex
	var k tally
	for range killPoints() {
		c := client.New(s.base, key, secret)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for v := last[w] + 1; ; v++ {
					var list []client.Embedding
					for i, n := range names(w) {
						list = append(list, client.Embedding{UniqueName: n, Embeddings: []float32{float32(v), float32(i + 1), 1, 1}})
					}
					out, err := c.InsertImageEmbeddingsBatch(ctx, list, "crash-emb", 4, fmt.Sprintf("s%d-%d", w, v))
					if err != nil {
						return
					}
					mu.Lock()
					last[w], jobs = v, append(jobs, out.JobID)
					mu.Unlock()
				}
			})
		}
		killAt(s, 100*time.Millisecond, 1000*time.Millisecond)
		wg.Wait()
		k.tried++
		s = startServer(t, data)
		c = client.New(s.base, key, secret)
		for w := range workers {
			got, missing, err := c.GetEmbeddingVector(ctx, names(w), "crash-emb")
			if err != nil || len(missing) > 0 && last[w] > 0 {
				t.Fatalf("vectors of worker %d: %v missing %v", w, err, missing)
			}
			for i, e := range got {
				v := int(e.Embeddings[0])
				if v != int(got[0].Embeddings[0]) || v != last[w] && v != last[w]+1 || int(e.Embeddings[1]) != i+1 {
					t.Fatalf("worker %d file %d: vector %v, last batch answered %d: a batch in part", w, i, e.Embeddings, last[w])
				}
			}
			if len(got) > 0 {
				last[w] = int(got[0].Embeddings[0])
			}
		}
		for _, id := range jobs {
			if j, err := c.Job(ctx, id); err != nil || j.Status != "completed" {
				t.Fatalf("job %s of an answered batch: %+v %v", id, j, err)
			}
		}
		s.stop(t)
		mustCheck(t, data)
		s = startServer(t, data)
		k.survived++
	}
	t.Logf("batches answered per worker: %v", last)
	k.report(t, "embedding insert")
}
