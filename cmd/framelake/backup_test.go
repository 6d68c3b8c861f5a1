package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestBackupDuringUploadStorm backs a data folder up while concurrent
// uploads run through the real server, restores it into a new folder that
// `framelake check` passes, and checks that a server on it serves every
// upload answered 2xx before the backup started, with the same bytes.
func TestBackupDuringUploadStorm(t *testing.T) {
	data, dest, restored := t.TempDir(), filepath.Join(t.TempDir(), "bk"), filepath.Join(t.TempDir(), "restored")
	s := startServer(t, data)
	key, secret := writeKey(t, data)
	ctx := context.Background()
	c := client.New(s.base, key, secret)
	ok := &acked{files: map[string]string{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				b := testmedia.JPEG(160, 120, w*100000+i)
				res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "storm"}, bytesFile(fmt.Sprintf("s%d-%d.jpg", w, i), b))
				if err != nil || len(res.Stored) != 1 {
					t.Errorf("upload: %+v %v", res, err)
					return
				}
				ok.add(res.Stored[0].UniqueName, sum(b))
			}
		})
	}
	for len(ok.snapshot()) < 40 {
		time.Sleep(20 * time.Millisecond)
	}
	before := ok.snapshot()
	out, err := run(t, "backup", "--data", data, "--out", dest)
	during := len(ok.snapshot()) - len(before)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v %s", err, out)
	}
	t.Logf("%s(%d uploads answered before, %d during the backup)", out, len(before), during)
	if out, err := run(t, "restore", "--from", dest, "--data", data); err == nil || !strings.Contains(out, "not empty") {
		t.Fatalf("restore over a folder in use: %v %s", err, out)
	}
	if out, err := run(t, "backup", "--data", data, "--out", filepath.Join(data, "bk")); err == nil {
		t.Fatalf("backup into its own data folder: %s", out)
	}
	if out, err := run(t, "restore", "--from", dest, "--data", filepath.Join(dest, "r")); err == nil {
		t.Fatalf("restore into its own backup: %s", out)
	}
	if out, err := run(t, "restore", "--from", dest, "--data", restored); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	mustCheck(t, restored)
	mustCheck(t, data) // the live folder, read-only while its server runs
	s.stop(t)

	r := startServer(t, restored)
	rc := client.New(r.base, key, secret) // the keys came with the database
	verifyFiles(t, rc, before)
	counts, err := rc.GetItemCountFromLake(ctx, "image", "", nil)
	if err != nil || len(counts) == 0 || counts[0].Count < len(before) {
		t.Fatalf("restored count %+v %v, want at least %d", counts, err, len(before))
	}
	for _, f := range []string{"url-signing.key", "admin-key.json"} {
		a, _ := os.ReadFile(filepath.Join(data, f))
		b, err := os.ReadFile(filepath.Join(restored, f))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s not restored as it was: %v", f, err)
		}
	}
	r.stop(t)
	mustCheck(t, restored)
}
