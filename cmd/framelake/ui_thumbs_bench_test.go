package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testphotos"
	"github.com/framelake/framelake/internal/vips"
)

// BenchmarkThumbGrid200 loads a grid of 200 cold thumbnails from the real
// binary: 200 distinct 1920x1080 JPEGs of real photos (the 13 of package
// testphotos, each encoded at 16 qualities) imported into a new data folder,
// then their 256 px thumbnails requested all at once, none cached yet (a
// browser sends six at a time over HTTP/1.1; all at once is the harder
// case). It reports the server's peak resident set, its CPU time per
// thumbnail (user and system, from /proc), the wall time of the grid and the
// one-minute load average.
func BenchmarkThumbGrid200(b *testing.B) {
	const n = 200
	media, data := b.TempDir(), b.TempDir()
	for i := range n {
		photo := testphotos.Read(b, testphotos.Files[i%len(testphotos.Files)])
		img, _, _, err := vips.ThumbnailJPEG(photo, 1920, 1080, 70+i/len(testphotos.Files))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(media, fmt.Sprintf("p%03d.jpg", i)), img, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if out, err := exec.Command(bin, "import", media, "--data", data, "--json").CombinedOutput(); err != nil {
		b.Fatalf("import: %v %s", err, out)
	}
	out, err := exec.Command(bin, "keys", "create", "--data", data, "--name", "bench", "--role", "read", "--json").Output()
	var key map[string]string
	if err != nil || json.Unmarshal(out, &key) != nil {
		b.Fatalf("keys create: %v %s", err, out)
	}
	for b.Loop() {
		os.RemoveAll(filepath.Join(data, "thumbs"))
		addr := freeAddr(b)
		srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		waitHealthy(b, "http://"+addr)
		pid := srv.Process.Pid
		urls := thumbURLs(b, "http://"+addr, key, n)
		cpu0 := procCPU(b, pid)
		t0 := time.Now()
		var wg sync.WaitGroup
		errc := make(chan error, n)
		for _, u := range urls {
			wg.Go(func() {
				resp, err := http.Get(u)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("%s: %s", u, resp.Status)
					}
				}
				errc <- err
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				b.Fatal(err)
			}
		}
		wall, cpu := time.Since(t0), procCPU(b, pid)-cpu0
		b.ReportMetric(float64(wall.Milliseconds()), "grid-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/n, "server-cpu-ms/thumb")
		b.ReportMetric(float64(peakRSS(b, pid))/1024, "server-peak-RSS-MB")
		b.ReportMetric(loadAvg(), "load")
		srv.Process.Kill()
		srv.Wait()
	}
}

// thumbURLs lists the lake's first n images and returns their 256 px
// thumbnail links, as the grid asks for them.
func thumbURLs(b *testing.B, base string, key map[string]string, n int) []string {
	req, _ := http.NewRequest("GET", base+"/api/v1/lake/items?pageIndex=0&pageSize="+strconv.Itoa(n), nil)
	req.Header.Set("key", key["key"])
	req.Header.Set("secret", key["secret"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Items []struct {
			ThumbURL string `json:"thumbUrl"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Items) != n {
		b.Fatalf("lake items: %v, %d items of %d", err, len(page.Items), n)
	}
	var urls []string
	for _, it := range page.Items {
		u := thumbSize.ReplaceAllString(it.ThumbURL, "/thumbs/256/")
		if !strings.HasPrefix(u, "http") {
			u = base + u
		}
		urls = append(urls, u)
	}
	return urls
}

var thumbSize = regexp.MustCompile(`/thumbs/\d+/`)

// procCPU is the user and system CPU time of process pid.
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime and stime are 14 and 15.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}
