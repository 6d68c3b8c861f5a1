package propagate

import (
	"context"
	"strings"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/lake"
)

// TestWriteGuard: a propagation writes only into the track it started from.
// Asked inside the write with the track as it is then, its guard refuses a
// track deleted or edited (written anew, with a new id) while the job ran,
// naming what happened and that nothing was written, and lets the same
// track through. A project's propagation on a server that cannot read the
// jobs is refused rather than written unchecked.
func TestWriteGuard(t *testing.T) {
	r := Request{UniqueName: "clip", Operation: "review:walk", Number: 7, From: 12}
	after := lake.Track{ID: "trk_a", Number: 7}
	s := &Service{}
	for _, c := range []struct {
		before []lake.Track
		want   string
	}{
		{nil, "track 7 of clip was deleted while it was propagated from frame 12: its 3 propagated keyframes were not written"},
		{[]lake.Track{{ID: "trk_b", Number: 7}}, "track 7 of clip was edited while it was propagated from frame 12"},
		{[]lake.Track{{ID: "trk_a", Number: 7}}, ""},
	} {
		err := s.writeGuard(r, after, 3)(context.Background(), nil, c.before)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("before %v: %v, want %q", c.before, err, c.want)
		}
	}
	r.Editor = &annotate.Member{Name: "ana", Annotate: true}
	if err := s.writeGuard(r, after, 3)(context.Background(), nil, []lake.Track{after}); err == nil {
		t.Error("a project's propagation without the jobs to ask was let through")
	}
}
