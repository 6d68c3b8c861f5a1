package lake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"

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
	b, err := OpenBucket(ctx, url)
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
