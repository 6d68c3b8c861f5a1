package annotate_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// BenchmarkJobsHandOut1000 is issue 35's figure: a 1,000-frame task cut into
// 50 jobs of 20 and handed out, once round-robin to 10 annotators at the cut
// and once by 50 "next job" pulls (go test ./annotate -run '^$' -bench
// JobsHandOut -benchtime 5x; the issue asks under 1 s).
func BenchmarkJobsHandOut1000(b *testing.B) {
	f := open(b, annotate.Image)
	var ups []lake.Upload
	for i := range 1000 {
		img := testmedia.JPEG(32, 24, 1000+i) // each frame its own bytes, so the lake keeps 1,000 files
		ups = append(ups, lake.Upload{Name: fmt.Sprintf("b%04d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }})
	}
	res, err := f.l.Add(f.ctx, lake.AddOptions{Collection: "bench"}, ups)
	if err != nil || len(res.Stored) != 1000 {
		b.Fatalf("add: %v %d", err, len(res.Stored))
	}
	var names []string
	for _, fl := range res.Stored {
		names = append(names, fl.UniqueName)
	}
	task, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{UniqueNames: names})
	if err != nil || task.FrameCount != 1000 {
		b.Fatalf("task: %v %+v", err, task)
	}
	var people []string
	for i := range 10 {
		people = append(people, fmt.Sprintf("p%02d", i))
	}
	b.Run("round-robin", func(b *testing.B) {
		for b.Loop() {
			jobs, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 20, Assignees: people, Replace: true}, cur)
			if err != nil || len(jobs) != 50 {
				b.Fatalf("cut: %v %d", err, len(jobs))
			}
		}
	})
	b.Run("pulled", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 20, Replace: true}, cur); err != nil {
				b.Fatal(err)
			}
			for i := range 50 {
				if _, err := f.s.NextJob(f.ctx, f.proj.ID, fmt.Sprintf("a%02d", i)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
