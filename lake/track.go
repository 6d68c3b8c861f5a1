package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake/shape"
)

// Track is one object followed through a video's frames (docs/tracks.md).
// Its shape is drawn at keyframes; between two keyframes it is interpolated
// when read (shape.Between), never stored. From each frame in Outside the
// object is out of view until the next keyframe. A track begins at its
// first keyframe and ends at its last.
type Track struct {
	ID         string     `json:"id,omitempty"`
	Number     int        `json:"number"` // the track's id in its video, per operation (MOT's id)
	Label      string     `json:"label"`
	Type       shape.Type `json:"type"` // every keyframe's type
	Source     Source     `json:"source"`
	Operation  string     `json:"operation"`
	Keyframes  []Box      `json:"keyframes"`
	Outside    []int      `json:"outside"`
	FirstFrame int        `json:"firstFrame"`
	LastFrame  int        `json:"lastFrame"`
}

// Limits of one video's tracks.
const (
	MaxTracksPerVideo    = 10000
	MaxKeyframesPerVideo = 2_000_000 // a 18,000-frame video with 100 objects on every frame
)

// TrackShape is a track's shape on one frame: a keyframe, or interpolated
// between two.
type TrackShape struct {
	Track        string `json:"track"` // the track's id
	Number       int    `json:"number"`
	Interpolated bool   `json:"interpolated"`
	Box
}

// At is the track's shape on frame, and false when the object is not in
// view there: before its first keyframe, after its last, or inside an
// outside span. Attributes are the earlier keyframe's.
func (t *Track) At(frame int) (TrackShape, bool) {
	k := sort.Search(len(t.Keyframes), func(i int) bool { return t.Keyframes[i].Frame > frame }) - 1
	if k < 0 || frame > t.Keyframes[len(t.Keyframes)-1].Frame {
		return TrackShape{}, false
	}
	a := t.Keyframes[k]
	for _, o := range t.Outside {
		if o > a.Frame && o <= frame {
			return TrackShape{}, false
		}
	}
	out := TrackShape{Track: t.ID, Number: t.Number, Box: a}
	if a.Frame == frame {
		return out, true
	}
	b := t.Keyframes[k+1]
	ra, rb := shape.Rect{X: a.X, Y: a.Y, W: a.W, H: a.H}, shape.Rect{X: b.X, Y: b.Y, W: b.W, H: b.H}
	g, r := shape.NewBetween(a.Geometry, b.Geometry, ra, rb).At(float64(frame-a.Frame) / float64(b.Frame-a.Frame))
	out.Geometry, out.X, out.Y, out.W, out.H = g, r.X, r.Y, r.W, r.H
	out.Frame, out.ID, out.Interpolated = frame, "", true
	if g.Type != shape.Box && g.Type != "" {
		out.Area = nil // measured where stored; an interpolated shape's area is not
	}
	out.roundCoords()
	return out, true
}

// keyframeRow is what the table stores of a keyframe besides its box.
type keyframeRow struct {
	shapeRow
	attrs string
}

// settleTracks checks tracks for a video of frames frames (0 when unknown)
// and width×height pixels, derives each keyframe's box and each track's
// span, and returns the keyframes' stored columns by track. Tracks settle
// in parallel (a MOT file is a million keyframes); the first refused, in
// the order given, is the error.
func settleTracks(tracks []Track, frames, width, height int) ([][]keyframeRow, error) {
	if len(tracks) > MaxTracksPerVideo {
		return nil, errs.Invalid("tracks", "%d tracks: a video has at most %d", len(tracks), MaxTracksPerVideo)
	}
	numbers, keyframes := map[int]int{}, 0
	for i, t := range tracks {
		field := fmt.Sprintf("tracks[%d]", i)
		if j, dup := numbers[t.Number]; dup {
			return nil, errs.Invalid(field, "%s: number %d is tracks[%d]'s too: numbers are unique in a video", field, t.Number, j)
		}
		numbers[t.Number] = i
		if t.Number < 0 {
			return nil, errs.Invalid(field, "%s: number must be 0 or more, got %d", field, t.Number)
		}
		if len(t.Keyframes) == 0 {
			return nil, errs.Invalid(field, "%s: a track needs at least one keyframe", field)
		}
		if keyframes += len(t.Keyframes); keyframes > MaxKeyframesPerVideo {
			return nil, errs.Invalid("tracks", "more than %d keyframes in one video", MaxKeyframesPerVideo)
		}
	}
	rows := make([][]keyframeRow, len(tracks))
	fails := make([]error, len(tracks))
	eachParallel(len(tracks), func(i int) {
		field := fmt.Sprintf("tracks[%d]", i)
		if rows[i], fails[i] = settleKeyframes(field, &tracks[i], frames, width, height); fails[i] == nil {
			fails[i] = checkOutside(field, &tracks[i])
		}
	})
	for _, err := range fails {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// eachParallel calls do(i) for i in 0..n-1 on every core.
func eachParallel(n int, do func(i int)) {
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		})
	}
	wg.Wait()
}

func settleKeyframes(field string, t *Track, frames, width, height int) ([]keyframeRow, error) {
	rows := make([]keyframeRow, len(t.Keyframes))
	// Field names are made only for an error: a MOT import settles a million keyframes.
	for j := range t.Keyframes {
		k := &t.Keyframes[j]
		kf := func() string { return fmt.Sprintf("%s.keyframes[%d]", field, j) }
		k.Label = t.Label
		switch {
		case k.Frame < 0 || (frames > 0 && k.Frame >= frames):
			return nil, errs.Invalid(kf(), "%s: frame %d is outside the video's frames 0..%d", kf(), k.Frame, frames-1)
		case j > 0 && k.Frame <= t.Keyframes[j-1].Frame:
			return nil, errs.Invalid(kf(), "%s: frame %d does not follow frame %d: keyframes are listed by frame, once each",
				kf(), k.Frame, t.Keyframes[j-1].Frame)
		}
		typ, err := shape.ParseType(string(k.Type))
		if err != nil {
			return nil, errs.Invalid(kf(), "%s: %v", kf(), err)
		}
		if typ == shape.Class {
			return nil, errs.Invalid(kf(), "%s: a class labels a whole frame and has no track", kf())
		}
		if j > 0 && typ != t.Keyframes[0].Type {
			return nil, errs.Invalid(kf(), "%s: a %s in a track of %ss: a track keeps one type", kf(), typ, t.Keyframes[0].Type)
		}
		k.Type = typ
		given := *k
		if rows[j].shapeRow, err = k.settle("", width, height, false); err != nil {
			_, err = given.settle(kf(), width, height, false) // the same check, now naming the keyframe
			return nil, err
		}
		if rows[j].attrs, err = normalizeObject("", k.Attributes); err != nil {
			_, err = normalizeObject(kf()+".attributes", k.Attributes)
			return nil, err
		}
		k.roundCoords()
	}
	t.Type = t.Keyframes[0].Type
	t.FirstFrame, t.LastFrame = t.Keyframes[0].Frame, t.Keyframes[len(t.Keyframes)-1].Frame
	return rows, nil
}

// checkOutside: outside frames are listed in order, between the track's
// first and last keyframes, never on a keyframe.
func checkOutside(field string, t *Track) error {
	for j, o := range t.Outside {
		of := fmt.Sprintf("%s.outside[%d]", field, j)
		switch {
		case j > 0 && o <= t.Outside[j-1]:
			return errs.Invalid(of, "%s: frame %d does not follow frame %d: outside frames are listed in order", of, o, t.Outside[j-1])
		case o <= t.FirstFrame || o > t.LastFrame:
			return errs.Invalid(of, "%s: frame %d is not inside the track (frames %d..%d): a track starts at its first keyframe and ends at its last",
				of, o, t.FirstFrame, t.LastFrame)
		case slices.ContainsFunc(t.Keyframes, func(k Box) bool { return k.Frame == o }):
			return errs.Invalid(of, "%s: frame %d is a keyframe: the object cannot be both drawn and out of view", of, o)
		}
	}
	if t.Outside == nil {
		t.Outside = []int{}
	}
	return nil
}

// SetTracks makes a video's tracks from operation exactly tracks, in one
// transaction: the operation's other tracks on the video are removed.
// Nothing is written when a track is refused.
func (l *Lake) SetTracks(ctx context.Context, uniqueName string, source Source, operation string, tracks []Track) error {
	return l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{whole: true, record: true})
}

// ImportTracks is SetTracks for a format import (MOT, CVAT, Label Studio):
// the same write, kept out of the frames' history as an image label import
// is (track_history.go).
func (l *Lake) ImportTracks(ctx context.Context, uniqueName string, source Source, operation string, tracks []Track) error {
	return l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{whole: true})
}

// replaceTracks writes tracks and removes the operation's tracks numbered
// gone, in one transaction kept in the history: a restore's write.
func (l *Lake) replaceTracks(ctx context.Context, uniqueName string, source Source, operation string, tracks []Track, gone []int, guard TrackGuard) error {
	return l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{record: true, gone: gone, guard: guard})
}

// trackWrite says how putTracks writes: all of the operation's tracks
// (whole) or those given and gone; kept in the frames' history or not.
type trackWrite struct {
	whole, record bool
	gone          []int
	guard         TrackGuard // nil: none
}

// SetTrack replaces the operation's track of t's number on the video (or
// adds it), leaving its other tracks as they are: what an edit in the
// workspace or a propagation writes. t comes back with its id and span.
func (l *Lake) SetTrack(ctx context.Context, uniqueName string, source Source, operation string, t Track) (Track, error) {
	tracks := []Track{t}
	err := l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{record: true})
	return tracks[0], err
}

// DeleteTrack removes the operation's track number from the video.
func (l *Lake) DeleteTrack(ctx context.Context, uniqueName, operation string, number int) error {
	return l.DeleteTrackIf(ctx, uniqueName, operation, number, nil)
}

// DeleteTrackIf is DeleteTrack when guard, asked inside the delete's
// transaction with the track as it is there, allows it.
func (l *Lake) DeleteTrackIf(ctx context.Context, uniqueName, operation string, number int, guard TrackGuard) error {
	f, err := l.File(ctx, uniqueName)
	if err != nil {
		return err
	}
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := guardTracks(ctx, tx, f.seq, operation, []int{number}, guard); err != nil {
			return err
		}
		before, err := trackKeyframeShapes(ctx, tx, f.seq, operation, []int{number})
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM track WHERE file_seq = ? AND operation = ? AND number = ?`, f.seq, operation, number)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errs.NotFoundf("%s has no track %d from %q", uniqueName, number, operation)
		}
		if err := recordTrackChanges(ctx, tx, f.seq, operation, before, nil); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE file SET updated_at = ? WHERE seq = ?`, millis(time.Now()), f.seq)
		return err
	})
}

// trackedVideo checks a tracks write's source and operation and answers
// the video it names.
func (l *Lake) trackedVideo(ctx context.Context, uniqueName string, source Source, operation string) (File, error) {
	if operation == "" || len(operation) > 200 {
		return File{}, errs.Invalid("operation", "operation must be 1 to 200 bytes")
	}
	if source != Human && source != Machine {
		return File{}, errs.Invalid("source", "source must be human or machine, got %q", source)
	}
	f, err := l.File(ctx, uniqueName)
	if err != nil {
		return File{}, err
	}
	if f.Type != Video {
		return File{}, errs.Invalid("uniqueName", "%s is a %s: tracks follow objects through a video's frames", uniqueName, f.Type)
	}
	return f, nil
}

// putTracks checks and writes tracks: all of the operation's tracks on the
// video when whole, else only those of the numbers given.
func (l *Lake) putTracks(ctx context.Context, uniqueName string, source Source, operation string, tracks []Track, w trackWrite) error {
	f, err := l.trackedVideo(ctx, uniqueName, source, operation)
	if err != nil {
		return err
	}
	rows, err := settleTracks(tracks, f.FrameCount, f.Width, f.Height)
	if err != nil {
		return err
	}
	var numbers []int // nil: all of the operation's
	if !w.whole {
		numbers = append(make([]int, 0, len(tracks)+len(w.gone)), w.gone...)
		for _, t := range tracks {
			numbers = append(numbers, t.Number)
		}
	}
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := guardTracks(ctx, tx, f.seq, operation, numbers, w.guard); err != nil {
			return err
		}
		var before map[int][]string
		if w.record {
			if before, err = trackKeyframeShapes(ctx, tx, f.seq, operation, numbers); err != nil {
				return err
			}
		}
		q, args := `DELETE FROM track WHERE file_seq = ? AND operation = ?`, []any{f.seq, operation}
		if numbers != nil {
			q += ` AND number IN (SELECT value FROM json_each(?))`
			args = append(args, jsonArray(numbers))
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("set tracks: %w", err)
		}
		if err := writeTracks(ctx, tx, f.seq, source, operation, tracks, rows); err != nil || !w.record {
			return err
		}
		after, err := trackKeyframeShapes(ctx, tx, f.seq, operation, numbers)
		if err != nil {
			return err
		}
		return recordTrackChanges(ctx, tx, f.seq, operation, before, after)
	})
}

const insertTrackSQL = `INSERT INTO track (id, file_seq, number, label, source, operation, type,
		first_frame, last_frame, keyframes, outside, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`

// writeTracks inserts tracks and their keyframes (the old ones are gone).
func writeTracks(ctx context.Context, tx *sql.Tx, fileSeq int64, source Source, operation string, tracks []Track, rows [][]keyframeRow) error {
	tw, err := newTrackWriter(ctx, tx, fileSeq, source, operation)
	if err != nil {
		return err
	}
	defer tw.close()
	for i := range tracks {
		t := &tracks[i]
		t.ID, t.Source, t.Operation = id.New("trk"), source, operation
		seq, err := tw.track(ctx, t.ID, t.Number, t.Label, t.Type, t.FirstFrame, t.LastFrame, len(t.Keyframes), t.Outside)
		if err != nil {
			return err
		}
		for j, k := range t.Keyframes {
			if err := tw.keys.add(ctx, keyframeValues{seq: seq, frame: int64(k.Frame), x: k.X, y: k.Y, w: k.W, h: k.H,
				conf: k.Confidence, area: k.Area, attrs: rows[i][j].attrs, geometry: rows[i][j].geometry}); err != nil {
				return err
			}
		}
	}
	return tw.finish(ctx)
}

// trackWriter inserts a video's new tracks, a row each, and their
// keyframes (keys), then marks the video changed (finish).
type trackWriter struct {
	tx           *sql.Tx
	fileSeq, now int64
	source       Source
	operation    string
	insert       *sql.Stmt
	keys         *keyframeWriter
}

func newTrackWriter(ctx context.Context, tx *sql.Tx, fileSeq int64, source Source, operation string) (*trackWriter, error) {
	insert, err := tx.PrepareContext(ctx, insertTrackSQL)
	if err != nil {
		return nil, err
	}
	return &trackWriter{tx: tx, fileSeq: fileSeq, now: millis(time.Now()), source: source, operation: operation,
		insert: insert, keys: &keyframeWriter{tx: tx}}, nil
}

// track inserts a track's row and gives its seq, for its keyframes.
func (tw *trackWriter) track(ctx context.Context, trackID string, number int, label string, typ shape.Type, first, last, keyframes int, outside []int) (int64, error) {
	out, _ := json.Marshal(outside)
	var seq int64
	if err := tw.insert.QueryRowContext(ctx, trackID, tw.fileSeq, number, label, tw.source, tw.operation, typ,
		first, last, keyframes, string(out), tw.now, tw.now).Scan(&seq); err != nil {
		return 0, fmt.Errorf("set tracks: %w", err)
	}
	return seq, nil
}

// finish writes the keyframes still held and marks the video changed.
func (tw *trackWriter) finish(ctx context.Context) error {
	if err := tw.keys.flush(ctx); err != nil {
		return err
	}
	_, err := tw.tx.ExecContext(ctx, `UPDATE file SET updated_at = ? WHERE seq = ?`, tw.now, tw.fileSeq)
	return err
}

func (tw *trackWriter) close() {
	tw.keys.close()
	tw.insert.Close()
}

// Tracks reads a video's tracks, from the operations given (all when nil),
// ordered by operation and number, each with its keyframes.
func (l *Lake) Tracks(ctx context.Context, uniqueName string, operations []string) ([]Track, error) {
	f, err := l.File(ctx, uniqueName)
	if err != nil {
		return nil, err
	}
	return readTracks(ctx, l.db.R, f.seq, operations, nil)
}

// querier is a connection pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readTracks reads the tracks of a video (by its seq) from the operations
// given (all when nil) and of the numbers given (all when nil), on q: the
// readers' pool, or a write's transaction (a track write's guard reads
// what the write replaces there, track_guard.go).
func readTracks(ctx context.Context, q querier, fileSeq int64, operations []string, numbers []int) ([]Track, error) {
	which := ` FROM track t WHERE t.file_seq = ?`
	args := []any{fileSeq}
	if operations != nil {
		which += ` AND t.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(operations))
	}
	if numbers != nil {
		which += ` AND t.number IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(numbers))
	}
	var out []Track
	index := map[int64]int{}
	err := queryEach(ctx, q, `SELECT t.seq, t.id, t.number, t.label, t.type, t.source, t.operation, t.first_frame,
		t.last_frame, t.keyframes, t.outside`+which+` ORDER BY t.operation, t.number`, args, func(rows *sql.Rows) error {
		var t Track
		var seq int64
		var n int
		var outside string
		if err := rows.Scan(&seq, &t.ID, &t.Number, &t.Label, &t.Type, &t.Source, &t.Operation, &t.FirstFrame,
			&t.LastFrame, &n, &outside); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(outside), &t.Outside); err != nil {
			return fmt.Errorf("track %s: outside: %w", t.ID, err)
		}
		t.Keyframes = make([]Box, 0, n)
		index[seq] = len(out)
		out = append(out, t)
		return nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	// The keyframes in their table's order (track, frame), without the
	// track's columns on every row.
	err = queryEach(ctx, q, `SELECT k.track_seq, k.frame, k.x, k.y, k.w, k.h, k.confidence, k.attributes, k.geometry, k.area
		FROM track_keyframe k WHERE k.track_seq IN (SELECT t.seq`+which+`) ORDER BY k.track_seq, k.frame`, args,
		func(rows *sql.Rows) error {
			var seq int64
			var k Box
			var attrs string
			var geometry sql.NullString
			var area sql.NullFloat64
			if err := rows.Scan(&seq, &k.Frame, &k.X, &k.Y, &k.W, &k.H, &k.Confidence, &attrs, &geometry, &area); err != nil {
				return err
			}
			t := &out[index[seq]]
			if err := k.loadShape(string(t.Type), geometry, area); err != nil {
				return fmt.Errorf("track %s frame %d: %w", t.ID, k.Frame, err)
			}
			k.Label, k.Source, k.Operation, k.Attributes, k.FileSeq = t.Label, t.Source, t.Operation, json.RawMessage(attrs), fileSeq
			k.roundCoords()
			t.Keyframes = append(t.Keyframes, k)
			return nil
		})
	return out, err
}

func queryEach(ctx context.Context, q querier, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// scanTracks reads rows of a track joined with its keyframes, ordered by
// track then frame, into tracks.
func (l *Lake) scanTracks(ctx context.Context, q string, args []any, fileSeq int64) ([]Track, error) {
	var out []Track
	last := int64(-1)
	err := l.scanRows(ctx, q, args, func(rows *sql.Rows) error {
		var t Track
		var seq int64
		var outside, attrs string
		var k Box
		var geometry sql.NullString
		var area sql.NullFloat64
		if err := rows.Scan(&seq, &t.ID, &t.Number, &t.Label, &t.Type, &t.Source, &t.Operation, &t.FirstFrame,
			&t.LastFrame, &outside, &k.Frame, &k.X, &k.Y, &k.W, &k.H, &k.Confidence, &attrs, &geometry, &area); err != nil {
			return err
		}
		if seq != last {
			if err := json.Unmarshal([]byte(outside), &t.Outside); err != nil {
				return fmt.Errorf("track %s: outside: %w", t.ID, err)
			}
			out = append(out, t)
			last = seq
		}
		cur := &out[len(out)-1]
		if err := k.loadShape(string(cur.Type), geometry, area); err != nil {
			return fmt.Errorf("track %s frame %d: %w", cur.ID, k.Frame, err)
		}
		k.Label, k.Source, k.Operation, k.Attributes, k.FileSeq = cur.Label, cur.Source, cur.Operation, json.RawMessage(attrs), fileSeq
		k.roundCoords()
		cur.Keyframes = append(cur.Keyframes, k)
		return nil
	})
	return out, err
}

// FrameTracks is every track's shape on one frame of a video: keyframes
// and interpolated shapes, by operation and number. It reads each track's
// row and the keyframes either side of the frame, never a whole track.
func (l *Lake) FrameTracks(ctx context.Context, uniqueName string, frame int, operations []string) ([]TrackShape, error) {
	f, err := l.File(ctx, uniqueName)
	if err != nil {
		return nil, err
	}
	q := `SELECT t.seq, t.id, t.number, t.label, t.type, t.source, t.operation, t.first_frame, t.last_frame, t.outside,
		k.frame, k.x, k.y, k.w, k.h, k.confidence, k.attributes, k.geometry, k.area
		FROM track t JOIN track_keyframe k ON k.track_seq = t.seq
		WHERE t.file_seq = ?1 AND t.first_frame <= ?2 AND t.last_frame >= ?2
		  AND (k.frame = (SELECT max(frame) FROM track_keyframe WHERE track_seq = t.seq AND frame <= ?2)
		    OR k.frame = (SELECT min(frame) FROM track_keyframe WHERE track_seq = t.seq AND frame > ?2))`
	args := []any{f.seq, frame}
	if operations != nil {
		q += ` AND t.operation IN (SELECT value FROM json_each(?3))`
		args = append(args, jsonArray(operations))
	}
	tracks, err := l.scanTracks(ctx, q+` ORDER BY t.operation, t.number, k.frame`, args, f.seq)
	if err != nil {
		return nil, err
	}
	out := []TrackShape{}
	for i := range tracks {
		if s, ok := tracks[i].At(frame); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// keyframesPerInsert is how many keyframes one INSERT writes: a statement a
// row costs more than the row (a MOT file is a million of them).
const keyframesPerInsert = 100

// slimAfter is the rows a batch of one track's keyframes must hold to be
// written on its own when the next track begins; a shorter one takes the
// next track's rows too (tracks of a few keyframes, CVAT's, share a batch).
const slimAfter = 16

// keyframeValues are one keyframe's columns.
type keyframeValues struct {
	seq, frame int64
	x, y, w, h float64
	conf, area *float64
	attrs      string
	geometry   sql.NullString
}

// keyframeWriter writes keyframes in multi-row INSERTs, each full-size one
// a prepared statement reused. A batch of one track's keyframes without
// confidence, geometry or area (a box import's: MOT, CVAT) is slim: the
// track's seq is bound once (?1) and the empty columns are NULL in the SQL,
// so a row binds 6 arguments, not 10. database/sql's conversion of each
// argument and the driver's binding of it were half of a MOT import's
// write (2.2 of 4.4 CPU-s for 900,000 keyframes, 2026-11-29).
type keyframeWriter struct {
	tx   *sql.Tx
	rows []keyframeValues
	slim bool         // every row so far is of rows[0]'s track, without confidence, geometry or area
	full [2]*sql.Stmt // prepared full-size statements: general, slim
	args []any
}

func (w *keyframeWriter) add(ctx context.Context, v keyframeValues) error {
	bare := v.conf == nil && v.area == nil && !v.geometry.Valid
	if len(w.rows) > 0 && w.slim && v.seq != w.rows[0].seq && len(w.rows) >= slimAfter {
		if err := w.flush(ctx); err != nil {
			return err
		}
	}
	if len(w.rows) == 0 {
		w.slim = true
	}
	w.slim = w.slim && bare && v.seq == w.rows0(v).seq
	w.rows = append(w.rows, v)
	if len(w.rows) == keyframesPerInsert {
		return w.flush(ctx)
	}
	return nil
}

// rows0 is the batch's first row (v when the batch is empty).
func (w *keyframeWriter) rows0(v keyframeValues) keyframeValues {
	if len(w.rows) > 0 {
		return w.rows[0]
	}
	return v
}

func (w *keyframeWriter) flush(ctx context.Context) (err error) {
	n := len(w.rows)
	if n == 0 {
		return nil
	}
	w.args = w.args[:0]
	if w.slim {
		w.args = append(w.args, w.rows[0].seq)
	}
	// Values of the driver's own types: database/sql converts any other (an
	// int, a pointer, a NullString) by reflection, a second of a MOT import.
	for _, v := range w.rows {
		if w.slim {
			w.args = append(w.args, v.frame, v.x, v.y, v.w, v.h, v.attrs)
			continue
		}
		var conf, area, geometry any
		if v.conf != nil {
			conf = *v.conf
		}
		if v.area != nil {
			area = *v.area
		}
		if v.geometry.Valid {
			geometry = v.geometry.String
		}
		w.args = append(w.args, v.seq, v.frame, v.x, v.y, v.w, v.h, conf, v.attrs, geometry, area)
	}
	kind := 0
	if w.slim {
		kind = 1
	}
	switch {
	case n < keyframesPerInsert:
		_, err = w.tx.ExecContext(ctx, insertKeyframes(n, w.slim), w.args...)
	case w.full[kind] == nil:
		if w.full[kind], err = w.tx.PrepareContext(ctx, insertKeyframes(n, w.slim)); err != nil {
			return err
		}
		fallthrough
	default:
		_, err = w.full[kind].ExecContext(ctx, w.args...)
	}
	if err != nil {
		return fmt.Errorf("set tracks: %w", err)
	}
	w.rows = w.rows[:0]
	return nil
}

func (w *keyframeWriter) close() {
	for _, st := range w.full {
		if st != nil {
			st.Close()
		}
	}
}

// insertKeyframes is the INSERT of n keyframes, slim or not (see
// keyframeWriter).
func insertKeyframes(n int, slim bool) string {
	row := `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?),`
	if slim {
		row = `(?1, ?, ?, ?, ?, ?, NULL, ?, NULL, NULL),`
	}
	q := `INSERT INTO track_keyframe (track_seq, frame, x, y, w, h, confidence, attributes, geometry, area) VALUES ` +
		strings.Repeat(row, n)
	return q[:len(q)-1]
}

// TrackCounts counts the tracks (of every operation) of each of the files
// seqs, for a page of a listing: one range of the track table's
// (file_seq, operation, number) index a file. Files without tracks are absent.
func (l *Lake) TrackCounts(ctx context.Context, seqs []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(seqs) == 0 {
		return out, nil
	}
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT file_seq, count(*) FROM track WHERE file_seq IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(seqs)), ",")+`) GROUP BY file_seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var n int
		if err := rows.Scan(&seq, &n); err != nil {
			return nil, err
		}
		out[seq] = n
	}
	return out, rows.Err()
}
