package lake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestTrackEditsInHistory: a person's edit of a track is a change of every
// frame whose keyframes it changed, with the keyframe's track number; an
// import writes none; restoring a change puts that frame's keyframes back
// (as a new change), and a deleted track's keyframes come back with it.
func TestTrackEditsInHistory(t *testing.T) {
	ctx := lake.WithActor(context.Background(), lake.Actor{Who: "ana", Via: "web app"})
	l, v, in := trackedVideo(t, "p1") // SetTracks: recorded
	changes := func(frame int) []lake.Change {
		t.Helper()
		got, err := l.History(ctx, lake.HistoryQuery{UniqueName: v.UniqueName, Frame: &frame, Operations: []string{"p1"}})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	keyframesAt := func(frame int) string {
		t.Helper()
		tracks, err := l.Tracks(ctx, v.UniqueName, []string{"p1"})
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, tr := range tracks {
			for _, k := range tr.Keyframes {
				if k.Frame == frame {
					out += fmt.Sprintf("%d:%s@%g,%g ", tr.Number, k.Label, k.X, k.Y)
				}
			}
		}
		return out
	}
	// tracksJSON's keyframes: track 1 at 2, 6, 12; track 2 at 0, 10.
	for _, f := range []int{0, 2, 6, 10, 12} {
		if n := len(changes(f)); n != 1 {
			t.Fatalf("frame %d: %d changes after the tracks were set, want 1", f, n)
		}
	}
	if n := len(changes(4)); n != 0 {
		t.Fatalf("frame 4 (interpolated) has %d changes, want none", n)
	}
	var added map[string]any
	if err := json.Unmarshal(changes(6)[0].Added[0], &added); err != nil || added["track"] != 1.0 || added["label"] != "car" {
		t.Fatalf("frame 6's change adds %s, want track 1's car keyframe (%v)", changes(6)[0].Added[0], err)
	}

	// Move track 1's keyframe at 6: one change, on frame 6 only.
	moved := in[0]
	moved.Keyframes = append([]lake.Box(nil), in[0].Keyframes...)
	moved.Keyframes[1].Y = 40
	if _, err := l.SetTrack(ctx, v.UniqueName, lake.Human, "p1", moved); err != nil {
		t.Fatal(err)
	}
	if n6, n2 := len(changes(6)), len(changes(2)); n6 != 2 || n2 != 1 {
		t.Fatalf("after moving frame 6's keyframe: %d changes on 6 (want 2), %d on 2 (want 1)", n6, n2)
	}
	if got := keyframesAt(6); got != "1:car@30,40 " {
		t.Fatalf("frame 6 after the move: %q", got)
	}
	// Restore the first version of frame 6: the keyframe goes back, as a new change.
	first := changes(6)[1] // newest first
	if err := l.RestoreChange(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if got := keyframesAt(6); got != "1:car@30,10 " {
		t.Fatalf("frame 6 after the restore: %q, want track 1 back at 30,10", got)
	}
	if n := len(changes(6)); n != 3 {
		t.Fatalf("the restore made %d changes on frame 6, want a third", n-2)
	}

	// Delete track 2: its keyframes' frames (0, 10) each get a change; a
	// restore of frame 0's first version brings the track back there.
	if err := l.DeleteTrack(ctx, v.UniqueName, "p1", 2); err != nil {
		t.Fatal(err)
	}
	if n := len(changes(0)); n != 2 || keyframesAt(0) != "" {
		t.Fatalf("after deleting track 2: %d changes on frame 0 (want 2), keyframes %q", n, keyframesAt(0))
	}
	if err := l.RestoreChange(ctx, changes(0)[1].ID); err != nil {
		t.Fatal(err)
	}
	if got := keyframesAt(0); got != "2:person@0,0 " {
		t.Fatalf("frame 0 after restoring its first version: %q, want track 2's person", got)
	}

	// An import writes no history.
	if err := l.ImportTracks(ctx, v.UniqueName, lake.Human, "import:mot", in); err != nil {
		t.Fatal(err)
	}
	frame := 2
	got, err := l.History(ctx, lake.HistoryQuery{UniqueName: v.UniqueName, Frame: &frame, Operations: []string{"import:mot"}})
	if err != nil || len(got) != 0 {
		t.Fatalf("an import made %d changes (%v), want none", len(got), err)
	}
}
