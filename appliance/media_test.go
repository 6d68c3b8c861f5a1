package appliance_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/tests3"
)

// onBothMedia runs a media-touching test twice: with media in the data
// folder, and in a bucket of a real S3-compatible server on loopback
// (versitygw, internal/tests3), so every path that reads or writes media
// is exercised through both stores.
func onBothMedia(t *testing.T, test func(t *testing.T, cfg appliance.Config)) {
	t.Run("local", func(t *testing.T) { test(t, appliance.Config{}) })
	t.Run("bucket", func(t *testing.T) {
		srv := tests3.Shared(t)
		srv.SetEnv(t)
		test(t, appliance.Config{Media: srv.Bucket(t, "media")})
	})
}

// TestMediaRedirect: with MediaRedirect, a bucket lake's signed media link
// (checked as before) redirects to a presigned object URL that serves the bytes.
func TestMediaRedirect(t *testing.T) {
	srv := tests3.Shared(t)
	srv.SetEnv(t)
	e := start(t, appliance.Config{Media: srv.Bucket(t, ""), MediaRedirect: true})
	img := testmedia.JPEG(32, 24, 3)
	res, err := e.write.UploadFiles(context.Background(), client.UploadOptions{}, memFile("a.jpg", img))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(res.Stored[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if to := resp.Header.Get("Location"); resp.StatusCode != 302 || !strings.HasPrefix(to, srv.Endpoint+"/") {
		t.Fatalf("media link: %d to %q", resp.StatusCode, to)
	}
	resp, err = http.Get(res.Stored[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, img) {
		t.Errorf("followed: %d, %d bytes", resp.StatusCode, len(got))
	}
	if resp, _ := noFollow.Get(strings.Replace(res.Stored[0].URL, "sig=", "sig=x", 1)); resp.StatusCode != 401 {
		t.Errorf("tampered link: %d", resp.StatusCode)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	tests3.StopShared()
	if migratedDir != "" {
		os.RemoveAll(migratedDir)
	}
	os.Exit(code)
}
