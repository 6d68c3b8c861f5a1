package appliance_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// BenchmarkAugmentedBuild is the dataset figure: a version of 1,000 1920x1080
// JPEG frames, all in the training split, each with three boxes and two
// augmented outputs of a flip and a rotation, created with the client
// function and built by the job, timed from the request until the job has
// completed. Run it alone (2 cores):
//
//	go test ./appliance/ -run '^$' -bench AugmentedBuild -benchtime 1x -timeout 30m
//
// frames/s counts source frames; out-frames/s the augmented ones written.
func BenchmarkAugmentedBuild(b *testing.B) {
	const n = 1000
	a, cl, _ := startBench(b)
	ctx := context.Background()
	coll := benchFrames(b, a.Lake, n)
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"},
		AugmentationList: json.RawMessage(`{"IMAGE_LEVEL": [
			{"id": "FLIP_IMAGE", "properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}]},
			{"id": "IMAGE_ROTATION", "properties": [{"id": "PERCENTAGE_SCALE", "values": [-15, 15]}]}]}`)}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		res, err := cl.CreateDatasetFromCollection(ctx, fmt.Sprintf("bench-%d", i), coll, spec)
		if err != nil {
			b.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		j, err := cl.WaitJob(wctx, res.JobID)
		cancel()
		if err != nil || j.Status != "completed" {
			b.Fatalf("build: %+v %v", j, err)
		}
	}
	elapsed, cpu := b.Elapsed().Seconds(), (cpuTime() - cpu0).Seconds()
	b.StopTimer()
	v, err := cl.DatasetList(ctx)
	// A frame whose two outputs drew the same steps (both the flip alone)
	// keeps one of them: a few per thousand.
	if err != nil || v[0].VersionList[0].Stats.AugmentedFrames < 2*n*49/50 || v[0].VersionList[0].Stats.AugmentedFrames > 2*n {
		b.Fatalf("built %+v %v", v, err)
	}
	out := 0
	for _, g := range v {
		out += g.VersionList[0].Stats.AugmentedFrames
	}
	b.ReportMetric(float64(n*b.N)/elapsed, "frames/s")
	b.ReportMetric(float64(out)/elapsed, "out-frames/s")
	b.ReportMetric(float64(n*b.N)/cpu, "frames/cpu-s")
}

// benchFrames stores n 1920x1080 JPEGs (100 distinct images, each under ten
// names: every output still differs, as outputs are drawn per uniqueName)
// with three car boxes each in a collection, and returns its id.
func benchFrames(b *testing.B, l *lake.Lake, n int) string {
	b.Helper()
	ctx := context.Background()
	imgs := make([][]byte, 100)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(imgs); i += 2 {
				imgs[i] = testmedia.JPEG(1920, 1080, i+1)
			}
		})
	}
	wg.Wait()
	var stored []lake.File
	for start := 0; start < n; start += 100 {
		var ups []lake.Upload
		for i := start; i < min(n, start+100); i++ {
			img := imgs[i%len(imgs)]
			ups = append(ups, lake.Upload{Name: fmt.Sprintf("f%04d.jpg", i),
				Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }})
		}
		res, err := l.Add(ctx, lake.AddOptions{Collection: "bench"}, ups)
		if err != nil || len(res.Stored) != len(ups) {
			b.Fatalf("add: %d stored, %+v %v", len(res.Stored), res.Rejected, err)
		}
		stored = append(stored, res.Stored...)
	}
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		for _, f := range stored {
			boxes := []lake.Box{{Label: "car", X: 100, Y: 200, W: 300, H: 150},
				{Label: "car", X: 900, Y: 500, W: 200, H: 200}, {Label: "car", X: 1500, Y: 800, W: 300, H: 250}}
			if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Human, "prj_bench", 0, boxes); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	c, err := l.CollectionByName(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return c.ID
}
