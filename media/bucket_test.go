package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/tests3"
)

// TestBucketPutChecksHash: the server stores an object only when its bytes
// have the SHA-256 its key names; a body that differs is refused and leaves
// no object.
func TestBucketPutChecksHash(t *testing.T) {
	ctx := context.Background()
	srv := tests3.Shared(t)
	srv.SetEnv(t)
	url := srv.Bucket(t, "put")
	b, err := openBucket(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("the bytes a key names")
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if err := b.putReader(ctx, hash, "jpg", bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatalf("put with its own hash: %v", err)
	}
	other := []byte("other bytes, same length")
	otherSum := sha256.Sum256(other)
	wrong := hex.EncodeToString(otherSum[:])
	if err := b.putReader(ctx, wrong, "jpg", bytes.NewReader(body), int64(len(body))); err == nil {
		t.Fatal("the server stored bytes under a hash they do not have")
	}
	if _, ok, err := b.stat(ctx, wrong, "jpg"); ok || err != nil {
		t.Fatalf("refused put left an object (%v, %v)", ok, err)
	}
	rc, err := b.open(ctx, hash, "jpg")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, body) {
		t.Fatalf("read back %q", got)
	}
}

// TestBucketOneRequestEach: storing a blob is one PUT, also past the
// 16 MiB where minio-go would cut it into parts, and reading a whole blob,
// as the stage cache and ReadAll do, is one GET (no HEAD before it); a
// missing blob is NotFound.
func TestBucketOneRequestEach(t *testing.T) {
	ctx := context.Background()
	srv := tests3.Shared(t)
	srv.SetEnv(t)
	b, err := openBucket(ctx, srv.Bucket(t, "get"))
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	tr := &countingTransport{base: http.DefaultTransport, methods: &methods}
	if b.c, err = minio.New(strings.TrimPrefix(srv.Endpoint, "http://"), &minio.Options{Transport: tr,
		Creds: credentials.NewStaticV4(tests3.AccessKey, tests3.SecretKey, ""), Region: "us-east-1",
		BucketLookup: minio.BucketLookupPath, TrailingHeaders: true}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("blob "), 17<<20/5)
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if err := b.putBytes(ctx, hash, "jpg", body); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(methods, []string{"PUT"}) {
		t.Errorf("storing a 17 MiB blob sent %v, want one PUT", methods)
	}
	methods = nil
	rc, err := b.get(ctx, hash, "jpg")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	if !slices.Equal(methods, []string{"GET"}) {
		t.Errorf("reading a blob sent %v, want one GET", methods)
	}
	if _, err := b.get(ctx, strings.Repeat("cd", 32), "jpg"); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("missing blob: %v, want not found", err)
	}
}

type countingTransport struct {
	base    http.RoundTripper
	methods *[]string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	*c.methods = append(*c.methods, r.Method)
	return c.base.RoundTrip(r)
}
