package appliance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

// BenchmarkDefaultModels measures the system default models end to end
// through jobs: 120 photos (Debian darknet's six samples, twenty times each)
// auto-tagged at 416 px, then embedded; images per second of each job.
func BenchmarkDefaultModels(b *testing.B) {
	e := start(b, appliance.Config{ModelsDir: modelsDir(b)})
	ctx := context.Background()
	var ups []client.UploadFile
	for i := 0; i < 20; i++ {
		for _, p := range []string{"dog.jpg", "person.jpg", "giraffe.jpg", "horses.jpg", "eagle.jpg", "kite.jpg"} {
			ups = append(ups, memFile(fmt.Sprintf("%02d-%s", i, p), photo(b, p)))
		}
	}
	if _, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "bench"}, ups...); err != nil {
		b.Fatal(err)
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection"})
	if err != nil {
		b.Fatal(err)
	}
	timed := func(start func() (client.RunStarted, error)) float64 {
		t0 := time.Now()
		s, err := start()
		if err == nil {
			var j client.Job
			if j, err = e.write.WaitJob(ctx, s.JobID); err == nil && j.Status != "completed" {
				err = fmt.Errorf("job %s: %s", j.Status, j.Error)
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		return float64(len(ups)) / time.Since(t0).Seconds()
	}
	for b.Loop() {
		b.ReportMetric(timed(func() (client.RunStarted, error) {
			return e.write.AutoTagCollection(ctx, colls[0].ID, client.AnalysisOptions{InputResolution: []int{416, 416}})
		}), "tag-images/s")
		b.ReportMetric(timed(func() (client.RunStarted, error) {
			return e.write.GenerateEmbeddingsForCollection(ctx, colls[0].ID, client.AnalysisOptions{})
		}), "embed-images/s")
	}
}
