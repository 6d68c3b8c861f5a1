package web_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// BenchmarkVideoTaskFrame steps through a video by the lake's frames route
// (a curator's key, as the lake's workspace does) and by a project's (an
// annotator holding the task's job, task mode), side by side in one run:
// a frame far from the last (cold), the next one at once, and the one
// after once the decode run is done (prefetched). Task mode adds the
// project's checks (its member, the video in one of its tasks) to the same
// decode, so its figures are the lake's plus that (docs/tracks.md).
//
//	go test ./web -run '^$' -bench VideoTaskFrame -benchtime 10x
func BenchmarkVideoTaskFrame(b *testing.B) {
	ctx, a := serveAppliance(b, appliance.Config{JobWorkers: -1})
	clip := filepath.Join(b.TempDir(), "clip.mp4")
	// 640x360 at 30 fps for 60 s, a keyframe every 60 frames as the bench video.
	if err := testmedia.Video(clip, 640, 360, 30, 60); err != nil {
		b.Skip(err)
	}
	res, err := a.Lake.Add(ctx, lake.AddOptions{}, []lake.Upload{{Name: "clip.mp4",
		Open: func() (io.ReadCloser, error) { return os.Open(clip) }}})
	if err != nil || len(res.Stored) != 1 {
		b.Fatalf("%+v %v", res, err)
	}
	v := res.Stored[0]
	p, err := a.Annotate.CreateProject(ctx, annotate.NewProject{Name: "clips", ContentType: annotate.Video,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		b.Fatal(err)
	}
	task, err := a.Annotate.CreateVideoTask(ctx, p.ID, annotate.NewVideoTask{Video: v.UniqueName})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Keys.CreateUser(ctx, "ana", "a long password", auth.Annotator); err != nil {
		b.Fatal(err)
	}
	if _, err := a.Keys.SetMember(ctx, p.ID, "ana", auth.Annotator); err != nil {
		b.Fatal(err)
	}
	if _, err := a.Annotate.CreateJobs(ctx, task.ID, annotate.JobPlan{Size: v.FrameCount, Assignees: []string{"ana"}},
		annotate.Member{Name: "cur", Curate: true}); err != nil {
		b.Fatal(err)
	}
	ak, asecret, err := a.Keys.CreateUserKey(ctx, "ana", "key-ana", "", 0)
	if err != nil {
		b.Fatal(err)
	}
	ck, csecret, err := a.Keys.Create(ctx, "cur", auth.Write, 0)
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + a.Addr() + "/api/v1"
	lakeURL := base + "/lake/files/" + url.PathEscape(v.UniqueName) + "/frames/"
	taskURL := base + "/projects/" + p.ID + "/videos/" + url.PathEscape(v.UniqueName) + "/frames/"
	get := func(u, key, secret string, n int) time.Duration {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", u+strconv.Itoa(n), nil)
		req.Header.Set("key", key)
		req.Header.Set("secret", secret)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s%d: %d", u, n, resp.StatusCode)
		}
		return time.Since(t0)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var sums [2][3]time.Duration // lake, task × cold, next, prefetched
	for b.Loop() {
		for i, r := range [][3]string{{lakeURL, ck.Key, csecret}, {taskURL, ak.Key, asecret}} {
			n := 1 + rng.IntN(v.FrameCount-20)
			sums[i][0] += get(r[0], r[1], r[2], n)
			sums[i][1] += get(r[0], r[1], r[2], n+1)
			time.Sleep(300 * time.Millisecond) // the person looks at the frame; the run finishes
			sums[i][2] += get(r[0], r[1], r[2], n+2)
		}
	}
	n := float64(b.N)
	for i, name := range []string{"lake", "task"} {
		b.ReportMetric(float64(sums[i][0].Microseconds())/n/1000, name+"-cold-ms")
		b.ReportMetric(float64(sums[i][1].Microseconds())/n/1000, name+"-next-ms")
		b.ReportMetric(float64(sums[i][2].Microseconds())/n/1000, name+"-prefetched-ms")
	}
}
