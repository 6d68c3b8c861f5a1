package lake

import (
	"bytes"
	"context"
	"database/sql"
	"image"
	"image/jpeg"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framelake/framelake/internal/sqlitedb"
)

// historyLake opens a lake holding one 640x480 frame.
func historyLake(tb testing.TB) (*Lake, int64) {
	ctx := context.Background()
	dir := tb.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "h.db"), sqlitedb.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", Migrations); err != nil {
		tb.Fatal(err)
	}
	l, err := Open(ctx, db, Options{MediaDir: filepath.Join(dir, "media"), SigningKey: []byte("0123456789abcdef0123"), BaseURL: "http://x"})
	if err != nil {
		tb.Fatal(err)
	}
	var img bytes.Buffer
	_ = jpeg.Encode(&img, image.NewGray(image.Rect(0, 0, 640, 480)), nil)
	res, err := l.Add(ctx, AddOptions{}, []Upload{{Name: "f.jpg", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(img.Bytes())), nil
	}}})
	if err != nil || len(res.Stored) != 1 {
		tb.Fatal(res, err)
	}
	return l, res.Stored[0].seq
}

// editSession draws 20 boxes, saving after each, then adjusts each once,
// and returns the history's bytes over the frame's shapes' bytes. Every
// change's replayed version must be what was saved.
func editSession(tb testing.TB, l *Lake, seq int64) float64 {
	ctx := WithActor(context.Background(), Actor{Who: "ana", Via: "web app"})
	var boxes []Box
	var saved [][]string
	save := func() {
		if err := l.db.Tx(ctx, func(tx *sql.Tx) error {
			return ReplaceBoxes(ctx, tx, seq, Human, "prj_1", 0, boxes)
		}); err != nil {
			tb.Fatal(err)
		}
		now, err := l.Boxes(ctx, BoxQuery{FileSeqs: []int64{seq}})
		if err != nil {
			tb.Fatal(err)
		}
		saved = append(saved, shapeJSONs(now))
	}
	for i := range 20 {
		boxes = append(boxes, Box{Label: "car", X: float64(i * 30), Y: 40, W: 25, H: 20})
		save()
	}
	for i := range boxes {
		boxes[i].X += 2.5
		save()
	}
	changes, err := l.History(ctx, HistoryQuery{Limit: 1000})
	if err != nil || len(changes) != len(saved) {
		tb.Fatalf("%d changes for %d saves: %v", len(changes), len(saved), err)
	}
	for i, c := range changes { // newest first
		v, err := l.FrameVersion(ctx, c.ID)
		if err != nil {
			tb.Fatal(err)
		}
		got := make([]string, len(v))
		for j, s := range v {
			got[j] = string(s)
		}
		slices.Sort(got)
		if want := saved[len(saved)-1-i]; !slices.Equal(got, want) {
			tb.Fatalf("version after save %d:\n%v\nwant\n%v", len(saved)-i, got, want)
		}
	}
	var history, frame int
	if err := l.db.R.QueryRowContext(ctx, `SELECT coalesce(sum(length(coalesce(base, '')) + length(removed) + length(added)), 0)
		FROM frame_change`).Scan(&history); err != nil {
		tb.Fatal(err)
	}
	for _, s := range saved[len(saved)-1] {
		frame += len(s)
	}
	return float64(history) / float64(frame)
}

// TestHistoryReplays: every version of a session reads back as it was
// saved, adjustments kept as patches, and the whole history costs less than
// twice the frame's shapes.
func TestHistoryReplays(t *testing.T) {
	l, seq := historyLake(t)
	if r := editSession(t, l, seq); r > 2 {
		t.Errorf("the history of a session is %.2fx the frame's shapes", r)
	}
}

// BenchmarkHistorySession is issue 35's "the history costs no more than 2x
// the frame's own storage for a typical editing session": a person draws 20
// boxes on a frame, saving after each, then adjusts each of them once (40
// saves). It reports the history's bytes over the frame's shapes' bytes
// (their JSON as the history keeps them).
func BenchmarkHistorySession(b *testing.B) {
	var ratio float64
	for b.Loop() {
		l, seq := historyLake(b)
		ratio = editSession(b, l, seq)
	}
	b.ReportMetric(ratio, "history/frame")
}
