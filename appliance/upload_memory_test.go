package appliance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/testmedia"
)

// paddedJPEG is a valid JPEG of at least size bytes: comment segments pad it.
func paddedJPEG(size, seed int) []byte {
	img := testmedia.JPEG(16, 16, seed)
	var b bytes.Buffer
	b.Write(img[:2]) // start of image
	pad := bytes.Repeat([]byte{'x'}, 0xFFFF-2)
	for b.Len()+len(img) < size {
		b.Write([]byte{0xFF, 0xFE, 0xFF, 0xFF}) // a comment of the longest length
		b.Write(pad)
	}
	b.Write(img[2:])
	return b.Bytes()
}

// streamParts writes a multipart body of n file parts of part's bytes into a
// pipe, so the test's own memory does not grow with the body.
func streamParts(n int, part []byte, extra string) (string, io.ReadCloser) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for i := range n {
			w, err := mw.CreateFormFile("files", fmt.Sprintf("f%03d.jpg", i))
			if err == nil {
				_, err = w.Write(part)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		if extra != "" {
			mw.WriteField(extra, "x")
		}
		pw.CloseWithError(mw.Close())
	}()
	return mw.FormDataContentType(), pr
}

// peakLiveHeap measures the live heap every 20 ms until stop is called and
// returns how far it rose above where it started.
func peakLiveHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}} // marked live by the last GC
	live := func() uint64 {
		runtime.GC()
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := live()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				peak = max(peak, live())
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return max(peak, live()) - base
	}
}

// uploadTemps counts the upload temp files in the data folder.
func uploadTemps(t *testing.T, e *env) int {
	t.Helper()
	n := 0
	filepath.WalkDir(e.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "upload-") {
			n++
		}
		return nil
	})
	return n
}

// TestUploadMemoryBounded: an upload of 64 one-MiB images (a body sixteen
// times the memory a request may keep of its parts) is stored whole while
// the server's live heap stays far below the body's size, and its temp
// files are gone after.
//
// Storing the files takes longer than the short body window given here: a
// body's read deadline must not outlive the body and cancel the request.
func TestUploadMemoryBounded(t *testing.T) {
	e := start(t, appliance.Config{BodyTimeout: 200 * time.Millisecond, BodyMinBytes: 1})
	const parts = 64
	ctype, body := streamParts(parts, paddedJPEG(1<<20, 1), "")
	stop := peakLiveHeap()
	status, _, raw := e.send(t, "POST", "/api/v1/lake/files", ctype, body)
	grew := stop()
	var res struct{ Stored []json.RawMessage }
	if err := json.Unmarshal(raw, &res); err != nil || status != 200 || len(res.Stored) != parts {
		t.Fatalf("upload: %d, %d stored (%v); want 200 and %d stored", status, len(res.Stored), err, parts)
	}
	t.Logf("%d parts of 1 MiB: live heap rose by %.1f MiB at most", parts, float64(grew)/(1<<20))
	// Kept before the parts went to disk: all 64 MiB in the form, and again
	// in ingest until the last part was probed. Now 4 MiB of parts and the
	// few files being probed: 20 to 40 MiB here, as for 192 parts.
	if grew > 48<<20 {
		t.Errorf("live heap rose by %.1f MiB during a 64 MiB upload; want under 48", float64(grew)/(1<<20))
	}
	if n := uploadTemps(t, e); n != 0 {
		t.Errorf("%d upload temp files left after a stored upload", n)
	}
}

// TestUploadTempsRemoved: the temp files of an upload's parts are removed
// when the form turns out bad and when the client goes away mid-body.
func TestUploadTempsRemoved(t *testing.T) {
	e := start(t, appliance.Config{})
	part := paddedJPEG(1<<20, 2)
	ctype, body := streamParts(8, part, "bogus")
	if status, _, raw := e.send(t, "POST", "/api/v1/lake/files", ctype, body); status != 400 {
		t.Errorf("unknown field after the files: %d %s; want 400", status, raw)
	}
	if n := uploadTemps(t, e); n != 0 {
		t.Errorf("%d upload temp files left after a refused form", n)
	}

	c := dial(t, e)
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	uploadHead(e, c, 64<<20, mw.FormDataContentType())
	for i := range 8 {
		w, _ := mw.CreateFormFile("files", fmt.Sprintf("f%d.jpg", i))
		w.Write(part)
		c.Write(head.Bytes())
		head.Reset()
	}
	waitFor(t, "an upload temp file", func() bool { return uploadTemps(t, e) > 0 })
	c.Close()
	waitFor(t, "no upload temp files after the client left", func() bool { return uploadTemps(t, e) == 0 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}
