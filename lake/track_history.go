package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// A track's edits are kept in the frames' history as every other shape's
// are: a change per frame whose keyframes changed, listing the keyframes of
// the operation's tracks on that frame, each with its track's number
// ("track"). Interpolated shapes are computed, so they are not history; a
// format import (MOT, CVAT, Label Studio) is not either, as an image label
// import is not. Outside spans are a track's, not a frame's shapes, and a
// restore leaves them as they are.

// trackKeyframeShapes lists by frame the keyframes of the operation's tracks
// on a video (of numbers only when numbers is not nil), as history shapes,
// read in tx.
func trackKeyframeShapes(ctx context.Context, tx *sql.Tx, fileSeq int64, operation string, numbers []int) (map[int][]string, error) {
	q := `SELECT t.number, t.label, t.type, k.frame, k.x, k.y, k.w, k.h, k.confidence, k.attributes, k.geometry, k.area
		FROM track t JOIN track_keyframe k ON k.track_seq = t.seq WHERE t.file_seq = ? AND t.operation = ?`
	args := []any{fileSeq, operation}
	if numbers != nil {
		q += ` AND t.number IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(numbers))
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("track history: %w", err)
	}
	defer rows.Close()
	out := map[int][]string{}
	for rows.Next() {
		var k Box
		var number int
		var typ, attrs string
		var geometry sql.NullString
		var area sql.NullFloat64
		if err := rows.Scan(&number, &k.Label, &typ, &k.Frame, &k.X, &k.Y, &k.W, &k.H, &k.Confidence, &attrs, &geometry,
			&area); err != nil {
			return nil, fmt.Errorf("track history: %w", err)
		}
		if err := k.loadShape(typ, geometry, area); err != nil {
			return nil, fmt.Errorf("track history: track %d frame %d: %w", number, k.Frame, err)
		}
		k.Attributes = json.RawMessage(attrs)
		k.roundCoords()
		out[k.Frame] = append(out[k.Frame], trackShapeJSON(k, number))
	}
	return out, rows.Err()
}

// trackShapeJSON is a keyframe's history JSON: shapeJSON's with the track's
// number, keys sorted.
func trackShapeJSON(k Box, number int) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(shapeJSON(k)), &m) // just marshalled
	m["track"] = number
	j, _ := json.Marshal(m)
	return string(j)
}

// recordTrackChanges keeps a change for every frame whose keyframes differ
// between before and after (trackKeyframeShapes of the same tracks).
func recordTrackChanges(ctx context.Context, tx *sql.Tx, fileSeq int64, operation string, before, after map[int][]string) error {
	frames := make([]int, 0, len(before)+len(after))
	for f := range before {
		frames = append(frames, f)
	}
	for f := range after {
		if _, ok := before[f]; !ok {
			frames = append(frames, f)
		}
	}
	slices.Sort(frames)
	for _, f := range frames {
		b, a := before[f], after[f]
		slices.Sort(b)
		slices.Sort(a)
		if err := recordChange(ctx, tx, fileSeq, f, operation, b, a); err != nil {
			return err
		}
	}
	return nil
}

// trackKey is a keyframe's shape in a restored version: which track, and
// the shape itself.
type trackKey struct {
	Track int `json:"track"`
	Box
}

// isTrackVersion tells a change's shapes of track keyframes from a frame's
// own shapes: they carry their track's number.
func isTrackVersion(shapes []json.RawMessage) bool {
	for _, s := range shapes {
		var probe struct {
			Track *int `json:"track"`
		}
		if json.Unmarshal(s, &probe) == nil && probe.Track != nil {
			return true
		}
	}
	return false
}

// restoreTrackFrame writes the keyframes of one frame of a video back to
// version (shapes of trackKey): every track of the operation loses its
// keyframe there and gets the version's, a track the version names that is
// gone comes back with that keyframe, and a track left with no keyframe is
// removed. One transaction, recorded as a change like any other edit;
// check, when not nil, is asked inside it before anything is written.
func (l *Lake) restoreTrackFrame(ctx context.Context, uniqueName, operation string, frame int, version []json.RawMessage, check RestoreCheck) error {
	tracks, err := l.Tracks(ctx, uniqueName, []string{operation})
	if err != nil {
		return err
	}
	at := map[int]int{} // number -> index in tracks
	for i, t := range tracks {
		at[t.Number] = i
	}
	touched := map[int]bool{}
	for i := range tracks {
		t := &tracks[i]
		if n := len(t.Keyframes); n > 0 {
			t.Keyframes = slices.DeleteFunc(t.Keyframes, func(k Box) bool { return k.Frame == frame })
			if len(t.Keyframes) != n {
				touched[t.Number] = true
			}
		}
	}
	for _, raw := range version {
		var k trackKey
		if err := json.Unmarshal(raw, &k); err != nil {
			return fmt.Errorf("restore: a keyframe of frame %d: %w", frame, err)
		}
		k.Frame, k.Area = frame, nil
		i, ok := at[k.Track]
		if !ok {
			typ := k.Geometry.Type
			if typ == "" {
				typ = shape.Box
			}
			tracks = append(tracks, Track{Number: k.Track, Label: k.Label, Type: typ, Outside: []int{}})
			i = len(tracks) - 1
			at[k.Track] = i
		}
		tracks[i].Keyframes = append(tracks[i].Keyframes, k.Box)
		slices.SortFunc(tracks[i].Keyframes, func(a, b Box) int { return a.Frame - b.Frame })
		touched[k.Track] = true
	}
	var keep []Track
	var gone []int
	for n := range touched {
		if t := tracks[at[n]]; len(t.Keyframes) > 0 {
			keep = append(keep, t)
		} else {
			gone = append(gone, n)
		}
	}
	read := map[int]string{} // the tracks written, as read above: number -> id
	for n := range touched {
		if i, ok := at[n]; ok && tracks[i].ID != "" {
			read[n] = tracks[i].ID
		}
	}
	guard := func(ctx context.Context, tx *sql.Tx, before []Track) error {
		// The frame's tracks were read before the write's transaction: one
		// edited or removed in between would be overwritten or brought back.
		changed := len(before) != len(read)
		for _, t := range before {
			changed = changed || read[t.Number] != t.ID
		}
		if changed {
			return errs.New(errs.FailedPrecondition, "changeId", "frame %d's tracks changed while they were restored; nothing was "+
				"restored: try again", frame)
		}
		if check != nil {
			return check(ctx, tx)
		}
		return nil
	}
	return l.replaceTracks(ctx, uniqueName, Human, operation, keep, gone, guard)
}
