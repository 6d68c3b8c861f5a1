package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake/shape"
)

// BoxTrack is a track of boxes as a format import reads it (a MOT gt.txt):
// the same track as a Track of box keyframes without confidence, in a form
// a million keyframes fit in without a Box each. A Box is 250 bytes of
// mostly empty fields and pointers; filling 900,000 of them, and the
// garbage collector walking them, was a third of a MOT import's CPU.
type BoxTrack struct {
	Number  int
	Label   string
	Outside []int
	Keys    []BoxKey
}

// BoxKey is one keyframe of a BoxTrack: a box on a frame, and its
// attributes, a JSON object ("" for none). Keyframes that share their
// attributes may share the string: it is checked once.
type BoxKey struct {
	Frame      int
	X, Y, W, H float64
	Attributes string
}

// Track is t in the general form, as ImportTracks takes it.
func (t BoxTrack) Track() Track {
	out := Track{Number: t.Number, Label: t.Label, Type: shape.Box, Outside: t.Outside, Keyframes: make([]Box, len(t.Keys))}
	for i, k := range t.Keys {
		out.Keyframes[i] = Box{Frame: k.Frame, X: k.X, Y: k.Y, W: k.W, H: k.H}
		if k.Attributes != "" {
			out.Keyframes[i].Attributes = json.RawMessage(k.Attributes)
		}
	}
	if n := len(t.Keys); n > 0 {
		out.FirstFrame, out.LastFrame = t.Keys[0].Frame, t.Keys[n-1].Frame
	}
	return out
}

// ImportBoxTracks is ImportTracks for tracks of boxes: the same checks, the
// same rows and the same refusals (a refused track is checked again as a
// Track, so its error names the same field), kept out of the frames'
// history. The keyframes are checked and written without a Box each.
func (l *Lake) ImportBoxTracks(ctx context.Context, uniqueName string, source Source, operation string, tracks []BoxTrack) error {
	f, err := l.trackedVideo(ctx, uniqueName, source, operation)
	if err != nil {
		return err
	}
	if !settleBoxTracks(tracks, f.FrameCount, f.Width, f.Height) {
		general := make([]Track, len(tracks))
		for i, t := range tracks {
			general[i] = t.Track()
		}
		if _, err := settleTracks(general, f.FrameCount, f.Width, f.Height); err != nil {
			return err
		}
		return fmt.Errorf("import tracks: refused as boxes, accepted as tracks") // the two checks disagree: a bug
	}
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM track WHERE file_seq = ? AND operation = ?`, f.seq, operation); err != nil {
			return fmt.Errorf("set tracks: %w", err)
		}
		return writeBoxTracks(ctx, tx, f.seq, source, operation, tracks)
	})
}

// settleBoxTracks is settleTracks for box tracks: it rounds each key's box
// as the general path stores it and normalises its attributes, and says
// whether every track passes. It names nothing: the caller checks a refused
// set again as Tracks for the error.
func settleBoxTracks(tracks []BoxTrack, frames, width, height int) bool {
	if len(tracks) > MaxTracksPerVideo {
		return false
	}
	numbers, keyframes := make(map[int]bool, len(tracks)), 0
	for _, t := range tracks {
		if numbers[t.Number] || t.Number < 0 || len(t.Keys) == 0 {
			return false
		}
		numbers[t.Number] = true
		if keyframes += len(t.Keys); keyframes > MaxKeyframesPerVideo {
			return false
		}
	}
	ok := make([]bool, len(tracks))
	eachParallel(len(tracks), func(i int) { ok[i] = settleBoxKeys(&tracks[i], frames, width, height) })
	for _, o := range ok {
		if !o {
			return false
		}
	}
	return true
}

func settleBoxKeys(t *BoxTrack, frames, width, height int) bool {
	var given, normal string // the last attributes checked, as given and as stored
	for j := range t.Keys {
		k := &t.Keys[j]
		if k.Frame < 0 || (frames > 0 && k.Frame >= frames) || (j > 0 && k.Frame <= t.Keys[j-1].Frame) {
			return false
		}
		if checkBox("", Box{Label: t.Label, X: k.X, Y: k.Y, W: k.W, H: k.H}, width, height) != nil {
			return false
		}
		if j == 0 || k.Attributes != given {
			n, err := normalizeObject("", json.RawMessage(k.Attributes))
			if err != nil {
				return false
			}
			given, normal = k.Attributes, n
		}
		k.Attributes = normal
		k.X, k.Y, k.W, k.H = RoundCoord(k.X), RoundCoord(k.Y), roundSize(k.W), roundSize(k.H)
	}
	first, last := t.Keys[0].Frame, t.Keys[len(t.Keys)-1].Frame
	for j, o := range t.Outside {
		if (j > 0 && o <= t.Outside[j-1]) || o <= first || o > last || t.keyAt(o) {
			return false
		}
	}
	if t.Outside == nil {
		t.Outside = []int{}
	}
	return true
}

// keyAt says whether t has a keyframe on frame (its keys are in order).
func (t *BoxTrack) keyAt(frame int) bool {
	lo, hi := 0, len(t.Keys)
	for lo < hi {
		m := (lo + hi) / 2
		if t.Keys[m].Frame < frame {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(t.Keys) && t.Keys[lo].Frame == frame
}

// writeBoxTracks is writeTracks for settled box tracks.
func writeBoxTracks(ctx context.Context, tx *sql.Tx, fileSeq int64, source Source, operation string, tracks []BoxTrack) error {
	tw, err := newTrackWriter(ctx, tx, fileSeq, source, operation)
	if err != nil {
		return err
	}
	defer tw.close()
	for _, t := range tracks {
		seq, err := tw.track(ctx, id.New("trk"), t.Number, t.Label, shape.Box, t.Keys[0].Frame, t.Keys[len(t.Keys)-1].Frame, len(t.Keys), t.Outside)
		if err != nil {
			return err
		}
		for _, k := range t.Keys {
			if err := tw.keys.add(ctx, keyframeValues{seq: seq, frame: int64(k.Frame), x: k.X, y: k.Y, w: k.W, h: k.H,
				attrs: k.Attributes}); err != nil {
				return err
			}
		}
	}
	return tw.finish(ctx)
}
