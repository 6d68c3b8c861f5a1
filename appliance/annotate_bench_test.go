package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
)

// startBench runs a real appliance on a loopback port and returns it with a
// write client and its key.
func startBench(b *testing.B) (*appliance.Appliance, *client.Client, [2]string) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := appliance.Open(ctx, appliance.Config{DataDir: b.TempDir(), Addr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	b.Cleanup(func() {
		cancel()
		<-done
		a.Close()
	})
	k, secret, err := a.Keys.Create(ctx, "bench", auth.Write, 0)
	if err != nil {
		b.Fatal(err)
	}
	return a, client.New(a.BaseURL(), k.Key, secret), [2]string{k.Key, secret}
}

// cpuTime is the CPU time (user + system) this process has used: client and
// server run in it, so frames per CPU-second is steadier than the wall rate
// on a machine shared with other work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fiveBoxes(w, h float64) []client.Box {
	out := make([]client.Box, 5)
	for i := range out {
		out[i] = client.Box{Label: "car", X: float64(i) * w / 6, Y: float64(i) * h / 6, Width: w / 8, Height: h / 8}
	}
	return out
}

// BenchmarkUploadFrames uploads 1,000 640x480 JPEG frames with 5 boxes each
// over HTTP from 4 concurrent clients into one session (target: 300 frames/s).
//
//	go test ./appliance/ -run '^$' -bench UploadFrames -benchtime 3x
func BenchmarkUploadFrames(b *testing.B) {
	const total, clients = 1000, 4
	_, c, _ := startBench(b)
	ctx := context.Background()
	pid, err := c.CreateProject(ctx, client.Project{Name: "bench", ContentType: client.ContentVideo,
		Labels: []client.Label{{Name: "car"}}})
	if err != nil {
		b.Fatal(err)
	}
	frames := make([][]byte, total)
	for i := range frames {
		frames[i] = testmedia.JPEG(640, 480, i)
	}
	boxes := fiveBoxes(640, 480)
	var wall, cpu time.Duration
	uploaded, round := 0, 0
	for b.Loop() {
		round++
		up, err := c.InitializeUpload(ctx, pid, fmt.Sprintf("clip-%d", round), total)
		if err != nil {
			b.Fatal(err)
		}
		t0, c0 := time.Now(), cpuTime()
		var wg sync.WaitGroup
		for w := range clients {
			wg.Go(func() {
				for i := w; i < total; i += clients {
					f := client.Frame{File: memFile(fmt.Sprintf("frame-%04d.jpg", i), frames[i]), SequenceNo: &i, Boxes: boxes}
					if _, err := c.UploadFrame(ctx, up.UploadID, f); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		wall += time.Since(t0)
		cpu += cpuTime() - c0
		uploaded += total
	}
	b.ReportMetric(float64(uploaded)/wall.Seconds(), "frames/s")
	b.ReportMetric(float64(uploaded)/cpu.Seconds(), "frames/cpu-s")
}

// BenchmarkDownloadAnnotations reads a page of 50 tasks x 100 frames (5 boxes
// each) with Download Annotations over HTTP (target: median under 200 ms).
//
//	go test ./appliance/ -run '^$' -bench DownloadAnnotations -benchtime 30x
func BenchmarkDownloadAnnotations(b *testing.B) {
	const tasks, perTask = 50, 100
	a, _, key := startBench(b)
	ctx := context.Background()
	p, err := a.Annotate.CreateProject(ctx, annotate.NewProject{Name: "bench", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		b.Fatal(err)
	}
	var boxes []annotate.Box
	for _, cb := range fiveBoxes(160, 120) {
		boxes = append(boxes, annotate.Box{Label: cb.Label, X: cb.X, Y: cb.Y, Width: cb.Width, Height: cb.Height})
	}
	var wg sync.WaitGroup
	for t := range tasks {
		sess, err := a.Annotate.InitializeUpload(ctx, p.ID, fmt.Sprintf("task-%02d", t), perTask)
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for i := range perTask {
				img := testmedia.JPEG(160, 120, t*perTask+i)
				if _, err := a.Annotate.UploadFrame(ctx, sess.ID, annotate.Frame{Name: "f.jpg", Boxes: boxes,
					Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		if t%8 == 7 {
			wg.Wait()
		}
	}
	wg.Wait()
	d, err := a.Annotate.Download(ctx, annotate.DownloadQuery{ProjectID: p.ID, PageSize: tasks})
	var last []annotate.Annotation
	if err == nil && len(d.Data) == tasks && len(d.Data[tasks-1].Frames) == perTask {
		err = json.Unmarshal(d.Data[tasks-1].Frames[perTask-1].Annotations, &last)
	}
	if err != nil || len(d.Data) != tasks || len(d.Data[tasks-1].Frames) != perTask || len(last) != len(boxes) {
		b.Fatalf("page is not %d tasks x %d frames x %d boxes: %v", tasks, perTask, len(boxes), err)
	}
	url := a.BaseURL() + "/api/v1/projects/" + p.ID + "/annotations?pageIndex=0.0&pageSize=50"
	get := func() int {
		req, _ := http.NewRequest("GET", url, nil)
		req.SetBasicAuth(key[0], key[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("download: %v %v", resp, err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return int(n)
	}
	size := get()
	var times []time.Duration
	c0 := cpuTime()
	for b.Loop() {
		t0 := time.Now()
		get()
		times = append(times, time.Since(t0))
	}
	cpu := cpuTime() - c0
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(times)), "cpu-ms/op")
	b.ReportMetric(float64(size)/(1<<20), "MiB/page")
}
