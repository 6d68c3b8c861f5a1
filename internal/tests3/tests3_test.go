package tests3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestS3ServerKeepsConnections: twenty PUTs one after another travel on one
// TCP connection, as with any S3 service; versitygw's default closed each
// after its answer, so an import dialled once a file.
func TestS3ServerKeepsConnections(t *testing.T) {
	srv := Shared(t)
	var dials atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	c, err := minio.New(strings.TrimPrefix(srv.Endpoint, "http://"), &minio.Options{Transport: tr,
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), BucketLookup: minio.BucketLookupPath, TrailingHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	url := srv.Bucket(t, "")
	name := strings.TrimPrefix(url[:strings.Index(url, "?")], "s3://")
	ctx := context.Background()
	for i := range 20 {
		body := bytes.Repeat([]byte{byte(i)}, 160_000)
		sum := sha256.Sum256(body)
		info, err := c.PutObject(ctx, name, fmt.Sprintf("o%d", i), bytes.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{DisableContentSha256: true,
				UserMetadata: map[string]string{"x-amz-checksum-sha256": base64.StdEncoding.EncodeToString(sum[:])}})
		if err != nil {
			t.Fatal(err)
		}
		if want := "SHA256-" + base64.StdEncoding.EncodeToString(sum[:]); info.ETag != want {
			t.Fatalf("ETag %q, want %q: the checksum sent, not an MD5 the server computes", info.ETag, want)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("20 PUTs dialled %d connections, want 1", n)
	}
}
