package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkAnnotateUI times the annotation workspace and the review grid in
// headless Chromium against the real binary (web/ui/test/annotatebench.mjs):
// a 1920x1080 frame with 200 boxes drawn, from navigation (a deep link) and
// from the next-frame key (wall time and the renderer's CPU time), medians
// of 7 rounds; and the review's patch grid of 10,000 boxes (50 frames of
// 1280x720, 200 boxes each) scrolled one view at a time, counting the blank
// patches in view 500 ms after each step, with the server's CPU per crop. It
// then checks that the crops were cut from the thumbnail cache: one 512 px
// thumbnail a frame in the data folder's cache, and a crop asked again with
// its ETag answered 304. Run it with -benchtime=1x.
func BenchmarkAnnotateUI(b *testing.B) {
	node, ui := needBrowser(b)
	s := startUIServer(b)
	bench := s.benchTask(b)
	review := s.boxedTask(b, "review", 50, 1280, 720, 200, []string{"car"})
	review["label"], review["boxes"] = "car", 10000
	expect, _ := json.Marshal(map[string]any{"bench": bench, "review": review})
	for b.Loop() {
		cmd := exec.Command(node, "test/annotatebench.mjs")
		cmd.Dir = ui
		cmd.Env = append(os.Environ(), "BASE="+s.base, "KEY="+s.admin["key"], "SECRET="+s.admin["secret"], "EXPECT="+string(expect))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cpu0 := cpuTicks(b, s.pid)
		res, err := cmd.Output()
		serverCPU := float64(cpuTicks(b, s.pid)-cpu0) * 10 // ms: 100 ticks a second
		if err != nil {
			b.Fatalf("annotatebench.mjs: %v\n%s%s", err, res, stderr.String())
		}
		var fig struct {
			DeepLinkMs, NextFrameMs, NextFrameCPUMs []float64
			Scroll                                  struct {
				Boxes, Steps, CropRequests, CropAgain, CropRefetch int
				BlankAt500, FillMs                                 []float64
			}
		}
		if err := json.Unmarshal(res, &fig); err != nil {
			b.Fatalf("annotatebench.mjs printed %q: %v", res, err)
		}
		b.Logf("%s", res)
		b.ReportMetric(midMs(fig.DeepLinkMs), "deep-link-ms")
		b.ReportMetric(midMs(fig.NextFrameMs), "next-frame-ms")
		b.ReportMetric(midMs(fig.NextFrameCPUMs), "next-frame-renderer-cpu-ms")
		b.ReportMetric(slices.Max(fig.Scroll.BlankAt500), "max-blank-patches-at-500ms")
		b.ReportMetric(midMs(fig.Scroll.FillMs), "scroll-fill-median-ms")
		b.ReportMetric(slices.Max(fig.Scroll.FillMs), "scroll-fill-max-ms")
		b.ReportMetric(float64(fig.Scroll.CropAgain), "crops-shown-again")
		b.ReportMetric(float64(fig.Scroll.CropRefetch), "crops-fetched-again")
		// The server's CPU over the whole run, nearly all of it the crops: a
		// figure the other processes on a shared machine do not inflate.
		b.ReportMetric(serverCPU/float64(fig.Scroll.CropRequests), "server-cpu-ms/crop")
	}
	thumbs, _ := filepath.Glob(filepath.Join(s.data, "thumbs", "512", "*", "*.jpg"))
	if len(thumbs) < 50 {
		b.Fatalf("%d thumbnails of 512 px cached, want one for each of the 50 review frames", len(thumbs))
	}
	var page struct{ Patches []struct{ CropURL string } }
	s.call(b, s.admin, "GET", "/api/v1/lake/patches?label=car&pageSize=1&taskId="+review["taskId"].(string), "", nil, &page)
	first, err := http.Get(page.Patches[0].CropURL)
	if err != nil {
		b.Fatal(err)
	}
	first.Body.Close()
	req, _ := http.NewRequest("GET", page.Patches[0].CropURL, nil)
	req.Header.Set("If-None-Match", first.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified || !strings.Contains(first.Header.Get("Cache-Control"), "immutable") {
		b.Fatalf("a crop asked again: %d, Cache-Control %q", again.StatusCode, first.Header.Get("Cache-Control"))
	}
	b.Logf("%d thumbnails of 512 px in the cache for 10,000 crops; a crop asked again with its ETag: 304; Cache-Control %q",
		len(thumbs), first.Header.Get("Cache-Control"))
}

// midMs is the median of ms (sorted in place).
func midMs(ms []float64) float64 {
	slices.Sort(ms)
	return ms[len(ms)/2]
}

// cpuTicks reads a live process's user and system CPU time in clock ticks.
func cpuTicks(b *testing.B, pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return u + st
}
