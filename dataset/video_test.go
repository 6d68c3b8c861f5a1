package dataset

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/jpeg"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// The fixture: walk.mp4, 160x120 at 10 fps, 30 frames of ffmpeg's testsrc
// with a 32x32 patch of luma 8n on frame n (so a frame's content says which
// it is), and two tracks; walk2.mp4, the same frames encoded again (a near
// duplicate with other bytes), without tracks.
const videoTracks = `[
 {"number": 1, "label": "car", "keyframes": [
   {"frame": 2, "x": 10, "y": 40, "width": 20, "height": 10, "attributes": {"parked": true}},
   {"frame": 12, "x": 50, "y": 40, "width": 20, "height": 10},
   {"frame": 22, "x": 90, "y": 40, "width": 20, "height": 10}],
  "outside": [16]},
 {"number": 2, "label": "person", "keyframes": [
   {"frame": 0, "type": "polygon", "polygon": [[0, 0, 10, 0, 10, 10, 0, 10]]},
   {"frame": 20, "type": "polygon", "polygon": [[40, 60, 50, 60, 50, 70, 40, 70]]}]}
]`

type videoFixture struct {
	ctx  context.Context
	db   *sqlitedb.DB
	l    *lake.Lake
	s    *Service
	jobs *job.Queue
	walk lake.File
	// walk2 is the second video's uniqueName.
	walk2 string
}

func newVideoFixture(t *testing.T) *videoFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs ffmpeg")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is required: apt-get install ffmpeg (make test installs it)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "t.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "job", job.Migrations()); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "dataset", Migrations); err != nil {
		t.Fatal(err)
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"),
		SigningKey: []byte("0123456789abcdef0123456789abcdef"), BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	walk, walk2 := filepath.Join(dir, "walk.mp4"), filepath.Join(dir, "walk2.mp4")
	ffmpeg(t, "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=3",
		"-f", "lavfi", "-i", "color=black:s=32x32:r=10:d=3,geq=lum='N*8':cb=128:cr=128",
		"-filter_complex", "[0][1]overlay=0:0", "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p", walk)
	ffmpeg(t, "-i", walk, "-c:v", "libx264", "-crf", "30", "-g", "12", "-pix_fmt", "yuv420p", walk2)
	var ups []lake.Upload
	for _, p := range []string{walk, walk2} {
		ups = append(ups, lake.Upload{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	res, err := l.Add(ctx, lake.AddOptions{Collection: "videos"}, ups)
	if err != nil || len(res.Stored) != 2 || res.Stored[0].FrameCount != 30 || res.Stored[1].FrameCount != 30 {
		t.Fatalf("add: %+v %v", res, err)
	}
	var tracks []lake.Track
	if err := json.Unmarshal([]byte(videoTracks), &tracks); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTracks(ctx, res.Stored[0].UniqueName, lake.Human, "review:walk", tracks); err != nil {
		t.Fatal(err)
	}
	jobs := job.New(db, job.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	s := New(db, l, jobs, Options{Batch: 4}) // a batch of 4: a video's frames span several
	jctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	if err := jobs.Start(jctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop(ctx) }) // before the database closes (cleanups run last first)
	return &videoFixture{ctx: ctx, db: db, l: l, s: s, jobs: jobs, walk: res.Stored[0], walk2: res.Stored[1].UniqueName}
}

func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ffmpeg", append([]string{"-v", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v %s", args, err, out)
	}
}

// build makes a dataset of the lake's videos sampled by vf and returns its
// version and frames.
func (fx *videoFixture) build(t *testing.T, vf VideoFrames, split Split) (Version, []Frame) {
	t.Helper()
	c, err := fx.s.Create(fx.ctx, NewDataset{Name: "walks", Source: Source{ItemType: "video"}, CreatedBy: "me",
		Spec: Spec{Labels: []string{"car", "person"}, Split: split, VideoFrames: &vf}})
	if err != nil {
		t.Fatal(err)
	}
	return fx.wait(t, c)
}

func (fx *videoFixture) wait(t *testing.T, c Created) (Version, []Frame) {
	t.Helper()
	if j, err := fx.jobs.Wait(fx.ctx, c.JobID); err != nil || j.Status != job.Completed {
		t.Fatalf("build: %+v %v", j, err)
	}
	page, err := fx.s.Frames(fx.ctx, c.VersionID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return page.Version, page.Frames
}

// frameOf finds a version's frame by its video's name and frame.
func frameOf(t *testing.T, frames []Frame, video string, n int) Frame {
	t.Helper()
	for _, f := range frames {
		if f.Video == video && f.VideoFrame != nil && *f.VideoFrame == n {
			return f
		}
	}
	t.Fatalf("no frame %d of %s", n, video)
	return Frame{}
}

// shapeKey is what a test checks of a sampled frame's shape.
type shapeKey struct {
	Label        string
	Track        int
	Interpolated bool
	X, Y, W, H   float64
}

func keysOf(f Frame) []shapeKey {
	out := []shapeKey{}
	for _, b := range f.Boxes {
		k := shapeKey{Label: b.Label, Interpolated: b.Interpolated, X: round3(b.X), Y: round3(b.Y), W: round3(b.W), H: round3(b.H)}
		if b.Track != nil {
			k.Track = *b.Track
		}
		out = append(out, k)
	}
	return out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func sampledNumbers(frames []Frame, video string) []int {
	var out []int
	for _, f := range frames {
		if f.Video == video {
			out = append(out, *f.VideoFrame)
		}
	}
	return out
}

// TestVideoBuildSamples: a build of every 5th frame makes an item of each
// sampled frame of both videos, named after the video and the frame, whose
// image is that exact frame (its patch's luma), carrying the tracks'
// keyframes and interpolated shapes with their numbers; an outside span, a
// frame before a track's first keyframe and one after its last carry none.
// Without interpolation only keyframes remain; keyframes samples the frames
// where a track has one; all takes every frame. The statistics count the
// frames and shapes.
func TestVideoBuildSamples(t *testing.T) {
	fx := newVideoFixture(t)
	walk := fx.walk.UniqueName
	v, frames := fx.build(t, VideoFrames{Sample: SampleEvery, Every: 5}, Split{Train: 100})
	if got, want := sampledNumbers(frames, walk), []int{0, 5, 10, 15, 20, 25}; !reflect.DeepEqual(got, want) {
		t.Fatalf("walk's frames %v, want %v", got, want)
	}
	if len(frames) != 12 {
		t.Fatalf("%d frames, want 6 of each video", len(frames))
	}
	car := func(n int, x float64, interp bool) shapeKey {
		return shapeKey{Label: "car", Track: 1, Interpolated: interp, X: x, Y: 40, W: 20, H: 10}
	}
	person := func(n int, interp bool) shapeKey {
		d := float64(n) * 2 // 40 px right and 60 down over 20 frames
		return shapeKey{Label: "person", Track: 2, Interpolated: interp, X: d, Y: float64(n) * 3, W: 10, H: 10}
	}
	want := map[int][]shapeKey{
		0:  {person(0, false)},                  // the car starts at 2
		5:  {car(5, 22, true), person(5, true)}, // 0.3 of the way from 10 to 50
		10: {car(10, 42, true), person(10, true)},
		15: {car(15, 62, true), person(15, true)}, // the car is out of view from 16
		20: {person(20, false)},                   // ... until its keyframe at 22
		25: {},                                    // after both tracks' last keyframes
	}
	for n, w := range want {
		f := frameOf(t, frames, walk, n)
		if got := keysOf(f); !reflect.DeepEqual(got, w) {
			t.Errorf("frame %d shapes %+v, want %+v", n, got, w)
		}
		if wantName := fmt.Sprintf("walk_f%06d.jpg", n); f.Name != wantName || f.UniqueName != fmt.Sprintf("%s_f%06d", walk, n) {
			t.Errorf("frame %d named %q (%s), want %q", n, f.Name, f.UniqueName, wantName)
		}
		fx.checkFrameContent(t, f, n)
	}
	if f := frameOf(t, frames, walk, 5); string(f.Boxes[0].Attributes) != `{"parked":true}` {
		t.Errorf("interpolated car's attributes %s, want the keyframe's before it", f.Boxes[0].Attributes)
	}
	st := v.Stats
	if st.Videos != 2 || st.VideoFrames != 12 || st.TotalFrames != 12 || st.TrackShapes != 8 || st.Interpolated != 6 ||
		!reflect.DeepEqual(st.Shapes, map[string]int{"box": 3, "polygon": 5}) || st.Labels["car"].Boxes != 3 {
		t.Errorf("stats %+v", st)
	}

	_, frames = fx.build(t, VideoFrames{Sample: SampleEvery, Every: 5, Interpolated: new(bool)}, Split{Train: 100})
	for n, w := range want {
		w = slices.DeleteFunc(slices.Clone(w), func(k shapeKey) bool { return k.Interpolated })
		if got := keysOf(frameOf(t, frames, walk, n)); !reflect.DeepEqual(got, w) {
			t.Errorf("without interpolation, frame %d shapes %+v, want %+v", n, got, w)
		}
	}

	v, frames = fx.build(t, VideoFrames{Sample: SampleKeyframes}, Split{Train: 100})
	if got, want := sampledNumbers(frames, walk), []int{0, 2, 12, 20, 22}; !reflect.DeepEqual(got, want) || len(frames) != 5 {
		t.Errorf("keyframes sampled %v (%d frames), want %v of walk alone (walk2 has no tracks)", got, len(frames), want)
	}
	if got, want := keysOf(frameOf(t, frames, walk, 2)), []shapeKey{car(2, 10, false), person(2, true)}; !reflect.DeepEqual(got, want) {
		t.Errorf("keyframe 2 shapes %+v, want %+v", got, want)
	}
	fx.checkFrameContent(t, frameOf(t, frames, walk, 22), 22)

	v, frames = fx.build(t, VideoFrames{Sample: SampleAll}, Split{Train: 100})
	if len(frames) != 60 || v.Stats.VideoFrames != 60 {
		t.Fatalf("all: %d frames, want 60", len(frames))
	}
	for _, n := range []int{1, 16, 17, 29} {
		fx.checkFrameContent(t, frameOf(t, frames, walk, n), n)
	}
	if got := keysOf(frameOf(t, frames, walk, 17)); !reflect.DeepEqual(got, []shapeKey{person(17, true)}) {
		t.Errorf("frame 17 (car outside) shapes %+v", got)
	}
}

// checkFrameContent: a sampled frame's image is that frame of the video:
// its patch has luma 8n (RGB (8n-16)·255/219 in the video's limited range).
func (fx *videoFixture) checkFrameContent(t *testing.T, f Frame, n int) {
	t.Helper()
	b, err := fx.l.Store().ReadAll(fx.ctx, f.blob, f.Ext)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("frame %d: %v", n, err)
	}
	if img.Bounds().Dx() != 160 || img.Bounds().Dy() != 120 || f.Width != 160 || f.Height != 120 {
		t.Errorf("frame %d is %v, recorded %dx%d", n, img.Bounds(), f.Width, f.Height)
	}
	r, _, _, _ := img.At(16, 16).RGBA()
	want := min(255, max(0, (8*n-16)*255/219))
	if grey := int(r >> 8); grey < want-4 || grey > want+4 {
		t.Errorf("frame %d's patch is grey %d, want %d: another frame was extracted", n, grey, want)
	}
}

// TestVideoBuildSplitsByVideo: with a seed that puts the two videos in
// different splits, every frame of each lands in its video's split (the
// split of its uniqueName), and the leakage report names the two videos
// (near-duplicate frames across train and test) and each example's video
// and frame; frames of one video are never paired.
func TestVideoBuildSplitsByVideo(t *testing.T) {
	fx := newVideoFixture(t)
	walk, walk2 := fx.walk.UniqueName, fx.walk2
	split := Split{Train: 50, Test: 50}
	seed := int64(1)
	for split.Of(seed, walk) == split.Of(seed, walk2) {
		seed++
	}
	// The group's seed is drawn at creation: set it, then make the version
	// that counts from it.
	c, err := fx.s.Create(fx.ctx, NewDataset{Name: "split", Source: Source{ItemType: "video"}, CreatedBy: "me",
		Spec: Spec{Labels: []string{"car", "person"}, Split: split, VideoFrames: &VideoFrames{Sample: SampleEvery, Every: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	fx.wait(t, c)
	if _, err := fx.db.W.ExecContext(fx.ctx, `UPDATE dataset_group SET seed = ? WHERE id = ?`, seed, c.DatasetID); err != nil {
		t.Fatal(err)
	}
	// A rebuild in place re-buckets new files from the group's seed; the
	// version's own videos keep their splits, so make a new version.
	c2, err := fx.s.CreateVersion(fx.ctx, c.DatasetID, split, "me")
	if err != nil {
		t.Fatal(err)
	}
	v, frames := fx.wait(t, c2)
	splits := map[string]map[string]int{}
	for _, f := range frames {
		if splits[f.Video] == nil {
			splits[f.Video] = map[string]int{}
		}
		splits[f.Video][f.Split]++
	}
	for _, name := range []string{walk, walk2} {
		if want := split.Of(seed, name); !reflect.DeepEqual(splits[name], map[string]int{want: 10}) {
			t.Errorf("%s's frames by split %v, want all 10 in %s", name, splits[name], want)
		}
	}
	l := v.Stats.Leakage
	if l == nil || l.Frames != 20 || l.Crossing == 0 || len(l.Videos) != 1 {
		t.Fatalf("leakage %+v", l)
	}
	a, b := l.Videos[0].A, l.Videos[0].B
	if !(a == walk && b == walk2 || a == walk2 && b == walk) || l.Videos[0].Pairs != l.Crossing {
		t.Errorf("leaking videos %+v, want walk and walk2 with all %d crossing pairs", l.Videos, l.Crossing)
	}
	full, err := fx.s.Leakage(fx.ctx, v.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Examples) == 0 {
		t.Fatalf("leakage %+v", full)
	}
	for _, e := range full.Examples {
		if e.VideoA == e.VideoB || e.FrameA == nil || e.FrameB == nil || e.A != frameName(e.VideoA, *e.FrameA) {
			t.Errorf("example %+v does not name two videos and their frames", e)
		}
	}
}

// TestVideoBuildRefused: item_type video without video_frames, an unknown
// sample mode and every below 1 are refused naming the field.
func TestVideoBuildRefused(t *testing.T) {
	fx := newVideoFixture(t)
	for _, c := range []struct {
		vf    *VideoFrames
		field string
	}{
		{nil, "video_frames"},
		{&VideoFrames{Sample: "some"}, "video_frames.sample"},
		{&VideoFrames{Sample: SampleEvery}, "video_frames.every"},
		{&VideoFrames{Sample: SampleAll, Every: 3}, "video_frames.every"},
	} {
		_, err := fx.s.Create(fx.ctx, NewDataset{Name: "x", Source: Source{ItemType: "video"}, CreatedBy: "me",
			Spec: Spec{Labels: []string{"car"}, Split: Split{Train: 100}, VideoFrames: c.vf}})
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want an error naming %s", c.vf, err, c.field)
		}
	}
}

// TestVideoExports: YOLO Darknet and COCO of every 5th frame (golden files:
// go test ./dataset -run TestVideoExports -update), and framelake's own COCO
// import reads the COCO download back with every shape's track id and
// keyframe flag.
func TestVideoExports(t *testing.T) {
	fx := newVideoFixture(t)
	v, frames := fx.build(t, VideoFrames{Sample: SampleEvery, Every: 5}, Split{Train: 100})
	for _, f := range []format.ExportType{format.ExportCOCO, format.ExportYOLO} {
		got := fx.download(t, v.ID, f, false)
		golden := filepath.Join("testdata", "golden", "video-"+strings.ToLower(strings.ReplaceAll(string(f), " ", "-"))+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(fx.zipText(t, got)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (make it with -update)", err)
		}
		if g := fx.zipText(t, got); g != string(want) {
			t.Errorf("%s export differs from %s:\n%s", f, golden, g)
		}
	}
	// The round trip: unpack the COCO download with its images and import it.
	dir := t.TempDir()
	archive := fx.download(t, v.ID, format.ExportCOCO, true)
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range zr.File {
		if strings.HasSuffix(e.Name, "/") {
			continue
		}
		rc, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		p := filepath.Join(dir, filepath.FromSlash(e.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type ident struct {
		label    string
		track    float64
		keyframe bool
	}
	read := map[string][]ident{}
	_, err = format.Read(fx.ctx, dir, format.COCO, func(it format.Item) error {
		for _, b := range it.Boxes {
			tid, _ := b.Attributes["track_id"].(float64)
			kf, _ := b.Attributes["keyframe"].(bool)
			read[filepath.Base(it.Media)] = append(read[filepath.Base(it.Media)], ident{b.Label, tid, kf})
		}
		if len(it.Boxes) == 0 {
			read[filepath.Base(it.Media)] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]ident{}
	for _, f := range frames {
		name := f.UniqueName + ".jpg"
		want[name] = nil
		for _, b := range f.Boxes {
			want[name] = append(want[name], ident{b.Label, float64(*b.Track), !b.Interpolated})
		}
	}
	for _, m := range []map[string][]ident{read, want} {
		for _, ids := range m {
			sort.Slice(ids, func(i, j int) bool { return ids[i].track < ids[j].track })
		}
	}
	if !reflect.DeepEqual(read, want) {
		t.Errorf("COCO import read back %v, want %v", read, want)
	}
}

func (fx *videoFixture) download(t *testing.T, versionID string, f format.ExportType, media bool) []byte {
	t.Helper()
	d, err := fx.s.PrepareDownload(fx.ctx, versionID, string(f))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := d.Write(fx.ctx, &buf, media); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipText is an archive's entries, each name and (for text) content, in
// name order, the videos' uniqueNames (drawn at random) written <walk> and
// <walk2>.
func (fx *videoFixture) zipText(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	files := slices.Clone(zr.File)
	slices.SortFunc(files, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range files {
		fmt.Fprintf(&out, "== %s\n", e.Name)
		if strings.HasSuffix(e.Name, "/") {
			continue
		}
		rc, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, _ := io.ReadAll(rc)
		rc.Close()
		out.Write(c)
		if len(c) > 0 && c[len(c)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return strings.NewReplacer(fx.walk.UniqueName, "<walk>", fx.walk2, "<walk2>").Replace(out.String())
}

// TestVideoBuildUpdate: a new version made by an update carries the
// videos in the splits they had and samples them again, with the
// version's video_frames when the update gives none and with its own when
// it does.
func TestVideoBuildUpdate(t *testing.T) {
	fx := newVideoFixture(t)
	v1, frames1 := fx.build(t, VideoFrames{Sample: SampleEvery, Every: 5}, Split{Train: 50, Test: 50})
	splitOf := func(frames []Frame) map[string]string {
		out := map[string]string{}
		for _, f := range frames {
			if s, ok := out[f.Video]; ok && s != f.Split {
				t.Errorf("%s's frames in %s and %s", f.Video, s, f.Split)
			}
			out[f.Video] = f.Split
		}
		return out
	}
	want := splitOf(frames1)
	c, err := fx.s.Update(fx.ctx, Update{VersionID: v1.ID, Source: Source{ItemType: "video"}, NewVersion: true, CreatedBy: "me",
		Spec: Spec{Labels: []string{"car", "person"}, Split: Split{Train: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	v2, frames2 := fx.wait(t, c)
	if got := splitOf(frames2); !reflect.DeepEqual(got, want) || len(frames2) != 12 || v2.VideoFrames == nil || v2.VideoFrames.Every != 5 {
		t.Errorf("update: %d frames, splits %v (want %v), video_frames %+v", len(frames2), got, want, v2.VideoFrames)
	}
	c, err = fx.s.Update(fx.ctx, Update{VersionID: v2.ID, Source: Source{ItemType: "video"}, CreatedBy: "me",
		Spec: Spec{Labels: []string{"car"}, Split: Split{Train: 100}, VideoFrames: &VideoFrames{Sample: SampleKeyframes}}})
	if err != nil {
		t.Fatal(err)
	}
	_, frames3 := fx.wait(t, c)
	if got := sampledNumbers(frames3, fx.walk.UniqueName); !reflect.DeepEqual(got, []int{2, 12, 22}) || len(frames3) != 3 {
		t.Errorf("rebuilt with the car's keyframes: %v (%d frames), want 2, 12, 22", got, len(frames3))
	}
	if got := splitOf(frames3); got[fx.walk.UniqueName] != want[fx.walk.UniqueName] {
		t.Errorf("rebuilt walk in %s, was %s", got[fx.walk.UniqueName], want[fx.walk.UniqueName])
	}
}
