// Package tests3 starts a real S3-compatible server on loopback for tests:
// Versity's S3 gateway (versitygw) over a temp folder with its posix
// backend, built from its Go module by `make s3server` (part of make test).
// Tests find it through FRAMELAKE_S3_SERVER, else at
// build/versitygw/<version>/versitygw of the repository. A missing binary
// fails the test: it is a real part.
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

// Version is the versitygw module version the Makefile builds.
const Version = "v1.8.0"

// The one identity the server knows (its root user, from its flags); the
// tests put the same pair in the environment of what they start.
const (
	AccessKey = "framelake-test"
	SecretKey = "framelake-test-secret-key"
)

// Server is a running versitygw.
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
// use; tests keep apart by bucket. It is killed with the test binary
// (Pdeathsig), its folder removed by Stop from TestMain when the package
// has one, else left in the temp folder.
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

// Binary is the server program the tests run.
func Binary() (string, error) {
	if p := os.Getenv("FRAMELAKE_S3_SERVER"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			p := filepath.Join(dir, "build", "versitygw", Version, "versitygw")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("tests3: no versitygw at %s: run `make s3server` (make test does)", p)
			}
			return p, nil
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
		} else {
			break
		}
	}
	return "", fmt.Errorf("tests3: no repository above the working folder, and FRAMELAKE_S3_SERVER is not set")
}

// Start starts a versitygw on a free loopback port, serving buckets as
// folders of a new temp folder (whose file system must keep extended
// attributes, where versitygw keeps object metadata), and waits until it
// stores an object.
func Start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "framelake-s3-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), dir: dir}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if s.log, err = os.Create(filepath.Join(dir, "versitygw.log")); err != nil {
		return nil, err
	}
	// Only the root user, no web UI, no admin port, no events: the S3 gateway.
	s.cmd = exec.Command(bin, append([]string{"--port", "127.0.0.1:" + strconv.Itoa(port), "--access", AccessKey,
		"--secret", SecretKey, "--region", "us-east-1", "--quiet"}, serverFlags(data)...)...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
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

// serverFlags are the options the tests serve dir with, after the port and the
// identity. Two differ from versitygw's defaults, and both are what a
// production S3 service does:
//   - --keep-alive: versitygw closes every connection after one answer
//     unless told otherwise, so each PUT of an import dialled a new TCP
//     connection, which cost 0.2 ms of CPU a PUT in the client and more in
//     the server (BenchmarkBucketPut in lake). S3 services keep
//     connections open, and every client expects them to.
//   - posix --data-integrity-etag: the ETag of a PUT is the checksum the
//     request carried ("SHA256-<base64>" for framelake's puts) instead of
//     an MD5 the server computes besides, a fifth of its CPU a PUT. S3's
//     ETag is opaque (multipart and KMS-encrypted objects have none that is
//     an MD5), framelake never reads it, and the server still checks the
//     body against the SHA-256 it was sent, the check a blob's name needs.
//
// It does not sync objects to disk (versitygw never fsyncs), so a crash of
// the machine may lose what it acknowledged: a test server on a temp folder.
func serverFlags(dir string) []string {
	return []string{"--keep-alive", "posix", "--data-integrity-etag", dir}
}

// wait polls until a bucket can be made and an object stored in it.
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
	return fmt.Errorf("tests3: versitygw not ready after %s: %v\n%s", limit, err, log)
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

// CPU is the CPU time (user and system) the server process has used so
// far, for benchmarks that count the server's share; 0 when unknown.
func (s *Server) CPU() time.Duration {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis; utime and stime are
	// the 14th and 15th of the line, in clock ticks of 1/100 s on Linux.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// Client is a client of the server with the test identity.
func (s *Server) Client() *minio.Client { return s.c }

// freePort finds a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
