// Package tests3 starts a real S3-compatible server on loopback for tests:
// SeaweedFS's `weed mini` (master, volume, filer and S3 gateway in one
// process), built from its Go module by `make weed` (part of make test).
// Tests find it through FRAMELAKE_WEED, else at build/weed/<version>/weed
// of the repository. A missing binary fails the test: it is a real part.
package tests3

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Version is the SeaweedFS module version the Makefile builds.
const Version = "v0.0.0-20261109003541-7506e5f91cd6"

// The one identity the server knows (an admin, from its environment); the
// tests put the same pair in the environment of what they start.
const (
	AccessKey = "framelake-test"
	SecretKey = "framelake-test-secret-key"
)

// Server is a running weed mini.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT of the S3 gateway
	dir      string
	cmd      *exec.Cmd
	log      *os.File
	c        *minio.Client
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// Shared returns one server for the whole test binary, started on first
// use (weed mini takes seconds to start); tests keep apart by bucket. It
// is killed with the test binary (Pdeathsig), its folder removed by Stop
// from TestMain when the package has one, else left in the temp folder.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// StopShared stops the shared server, if one was started.
func StopShared() {
	if shared != nil {
		shared.Stop()
	}
}

// Binary is the weed program the tests run.
func Binary() (string, error) {
	if p := os.Getenv("FRAMELAKE_WEED"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			p := filepath.Join(dir, "build", "weed", Version, "weed")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("tests3: no SeaweedFS at %s: run `make weed` (make test does)", p)
			}
			return p, nil
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
		} else {
			break
		}
	}
	return "", fmt.Errorf("tests3: no repository above the working folder, and FRAMELAKE_WEED is not set")
}

// Start starts a weed mini on free loopback ports in a new temp folder and
// waits until its S3 gateway answers.
func Start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "framelake-weed-")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(ports[4]), dir: dir}
	args := []string{"mini", "-dir=" + filepath.Join(dir, "data"), "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + strconv.Itoa(ports[0]), "-volume.port=" + strconv.Itoa(ports[1]),
		"-filer.port=" + strconv.Itoa(ports[2]), "-s3.port.grpc=" + strconv.Itoa(ports[3]),
		"-s3.port=" + strconv.Itoa(ports[4]), "-master.telemetry=false", "-webdav=false", "-admin.ui=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.iam=false"}
	// weed's gRPC ports default to the HTTP port + 10000: freePorts checked those.
	args = append(args, "-master.port.grpc="+strconv.Itoa(ports[0]+10000), "-volume.port.grpc="+strconv.Itoa(ports[1]+10000),
		"-filer.port.grpc="+strconv.Itoa(ports[2]+10000))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	if s.log, err = os.Create(filepath.Join(dir, "weed.log")); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+AccessKey, "AWS_SECRET_ACCESS_KEY="+SecretKey)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("tests3: start %s: %w", bin, err)
	}
	if s.c, err = minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), BucketLookup: minio.BucketLookupPath}); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.wait(60 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// wait polls until a bucket can be made and listed: the gateway answers
// before the filer and a volume are ready to hold anything.
func (s *Server) wait(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.probe(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if s.cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(s.log.Name())
	if len(log) > 4000 {
		log = log[len(log)-4000:]
	}
	return fmt.Errorf("tests3: weed mini not ready after %s: %v\n%s", limit, err, log)
}

func (s *Server) probe(ctx context.Context) error {
	resp, err := http.Get(s.Endpoint)
	if err != nil {
		return err
	}
	resp.Body.Close()
	const b = "framelake-ready"
	if ok, err := s.c.BucketExists(ctx, b); err != nil {
		return err
	} else if !ok {
		if err := s.c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			return err
		}
	}
	_, err = s.c.PutObject(ctx, b, "probe", strings.NewReader("ok"), 2, minio.PutObjectOptions{})
	return err
}

// Stop kills the server and removes its folder.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd.Wait()
	}
	if s.log != nil {
		s.log.Close()
	}
	os.RemoveAll(s.dir)
}

var bucketSeq struct {
	sync.Mutex
	n int
}

// Bucket makes a new empty bucket for the test and returns its media URL,
// s3://NAME/PREFIX?endpoint=...&region=us-east-1. The caller's process needs
// Env's variables (SetEnv does that for in-process lakes).
func (s *Server) Bucket(t testing.TB, prefix string) string {
	t.Helper()
	bucketSeq.Lock()
	bucketSeq.n++
	name := fmt.Sprintf("t%d-%d", os.Getpid(), bucketSeq.n)
	bucketSeq.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("tests3: make bucket: %v", err)
	}
	u := "s3://" + name
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint + "&region=us-east-1"
}

// Env is the environment a framelake process needs to reach the server.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=us-east-1"}
}

// SetEnv puts Env in this process's environment for the test.
func (s *Server) SetEnv(t testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Objects lists the object keys of the bucket a media URL names, under its prefix.
func (s *Server) Objects(t testing.TB, mediaURL string) []string {
	t.Helper()
	rest := strings.TrimPrefix(mediaURL, "s3://")
	rest, _, _ = strings.Cut(rest, "?")
	name, prefix, _ := strings.Cut(rest, "/")
	var out []string
	for o := range s.c.ListObjects(context.Background(), name, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("tests3: list: %v", o.Err)
		}
		out = append(out, o.Key)
	}
	return out
}

// Client is a client of the server with the test identity.
func (s *Server) Client() *minio.Client { return s.c }

// freePorts finds n free loopback ports whose +10000 (weed's gRPC ports)
// are free too.
func freePorts(n int) ([]int, error) {
	var out []int
	var hold []net.Listener
	defer func() {
		for _, l := range hold {
			l.Close()
		}
	}()
	for tries := 0; len(out) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p+10000 > 65535 {
			l.Close()
			continue
		}
		g, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			l.Close()
			continue
		}
		hold = append(hold, l, g)
		out = append(out, p)
	}
	if len(out) < n {
		return nil, fmt.Errorf("tests3: no %d free port pairs", n)
	}
	return out, nil
}
