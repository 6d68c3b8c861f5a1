package appliance_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
)

// serveAt runs an appliance on dir until the returned stop is called.
func serveAt(t *testing.T, dir string, ttl time.Duration) (*appliance.Appliance, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, Addr: "127.0.0.1:0", URLTTL: ttl,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	return a, func() { cancel(); <-done; a.Close() }
}

func fetchStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		for _, bad := range []string{"/tmp/", "sqlite", "SELECT", "goroutine ", ".go:"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s: error body leaks %q: %s", u, bad, b)
			}
		}
	}
	return resp.StatusCode
}

// TestSignedLinksCannotBeBent: a media link opens its one file until its
// expiry; with its exp and sig moved to another file, its exp changed, or
// past its expiry it is refused; after keys rotate-signing and a restart
// every link signed before is refused and new ones work.
func TestSignedLinksCannotBeBent(t *testing.T) {
	dir := t.TempDir()
	a, stop := serveAt(t, dir, 2*time.Second)
	ctx := context.Background()
	k, s, err := a.Keys.Create(ctx, "w", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	cl := client.New(a.BaseURL(), k.Key, s)
	res, err := cl.UploadFiles(ctx, client.UploadOptions{Collection: "c"},
		memFile("a.jpg", testmedia.JPEG(16, 16, 1)), memFile("b.jpg", testmedia.JPEG(16, 16, 2)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	link, other := res.Stored[0].URL, res.Stored[1]
	if got := fetchStatus(t, link); got != 200 {
		t.Fatalf("the link itself: %d", got)
	}
	u, _ := url.Parse(link)
	q := u.Query()
	exp := q.Get("exp")
	bent := map[string]string{
		"another file":         strings.Replace(link, res.Stored[0].UniqueName, other.UniqueName, 1),
		"another file escaped": strings.Replace(link, res.Stored[0].UniqueName, url.PathEscape(other.UniqueName+"/../"+res.Stored[0].UniqueName), 1),
		"later exp":            strings.Replace(link, "exp="+exp, "exp="+exp+"0", 1),
		"exp with a sign":      strings.Replace(link, "exp="+exp, "exp=-"+exp, 1),
		"sig cut":              link[:len(link)-2],
		"sig of a blob path":   strings.Replace(link, "/media/", "/media-blob/", 1),
		"no sig":               strings.Split(link, "&sig=")[0],
	}
	for what, u := range bent {
		if got := fetchStatus(t, u); got != 401 && got != 404 {
			t.Errorf("%s: %d for %s", what, got, u)
		}
	}
	time.Sleep(time.Until(time.Unix(mustInt(t, exp), 0)) + 1100*time.Millisecond)
	if got := fetchStatus(t, link); got != 401 {
		t.Errorf("past its expiry: %d", got)
	}
	stop()

	// Rotation: links signed with the old key stop working after a restart.
	a, stop = serveAt(t, dir, time.Hour)
	d, err := client.New(a.BaseURL(), k.Key, s).GetFileDetails(ctx, other.UniqueName, nil)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := d["url"].(string)
	if got := fetchStatus(t, old); got != 200 {
		t.Fatalf("a fresh link: %d", got)
	}
	stop()
	if err := appliance.RotateSigningKey(dir); err != nil {
		t.Fatal(err)
	}
	a, stop = serveAt(t, dir, time.Hour)
	defer stop()
	oldOnNewServer := strings.Replace(old, strings.SplitN(old, "/media/", 2)[0], a.BaseURL(), 1)
	if got := fetchStatus(t, oldOnNewServer); got != 401 {
		t.Errorf("a link signed before the rotation: %d", got)
	}
	d, err = client.New(a.BaseURL(), k.Key, s).GetFileDetails(ctx, other.UniqueName, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := d["url"].(string); fetchStatus(t, u) != 200 {
		t.Errorf("a link signed after the rotation does not open: %s", u)
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
