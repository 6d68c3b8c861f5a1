package annotate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/framelake/framelake/annotate"
)

// TestReviewStats counts a seeded review history by person and day:
// verdicts a reviewer gave, an annotator's jobs judged and rejected (the
// annotator being who submitted), comments received on one's jobs from
// others, and comments resolved, each on the day it happened.
func TestReviewStats(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, names := f.uploadedTask(t, "stats", 4)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 2, Assignees: []string{"ana", "ben"}}, cur); err != nil {
		t.Fatal(err)
	}
	rev2 := annotate.Member{Name: "rev2", Review: true}
	step := func(number int, m annotate.Member, st annotate.JobState) {
		t.Helper()
		if _, err := f.s.SetJobState(f.ctx, taskID, number, annotate.StateChange{State: st}, m); err != nil {
			t.Fatal(err)
		}
	}
	// ana's job 1 is rejected by rev, fixed and accepted; ben's job 2 is
	// accepted by rev2 at once.
	step(1, ana, annotate.JobSubmitted)
	step(1, rev, annotate.JobInReview)
	step(1, rev, annotate.JobRejected)
	step(1, ana, annotate.JobSubmitted)
	step(1, rev, annotate.JobInReview)
	step(1, rev, annotate.JobAccepted)
	step(2, ben, annotate.JobSubmitted)
	step(2, rev2, annotate.JobInReview)
	step(2, rev2, annotate.JobAccepted)
	// rev leaves two comments on ana's frames, ana one on her own (not
	// received); ana resolves one the next day.
	var ids []string
	for _, c := range []struct{ author, frame string }{{"rev", names[0]}, {"rev", names[1]}, {"ana", names[1]}} {
		cm, err := f.s.AddComment(f.ctx, f.proj.ID, c.frame, annotate.NewComment{Text: "box too loose"}, c.author)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cm.ID)
	}
	if _, err := f.s.ResolveComment(f.ctx, ids[0], true, ana); err != nil {
		t.Fatal(err)
	}
	day0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	day1 := day0.Add(24 * time.Hour)
	// The events a minute apart from 10:00 on day0; comments made on day0,
	// resolved the next day.
	ms := day0.UnixMilli()
	if _, err := f.db.W.Exec(`UPDATE job_event SET at = ? + seq * 60000`, ms); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.W.Exec(`UPDATE comment SET created_at = ?, resolved_at = CASE WHEN resolved_by IS NULL
		THEN NULL ELSE ? END`, ms, ms+86400000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		from, to time.Time
		project  string
		want     []string
	}{
		{"both days", day0, day1.Add(24 * time.Hour), "", []string{
			"ana 2026-11-27 reviews 0 judged 2 rejected 1 received 2 resolved 0",
			"ana 2026-11-28 reviews 0 judged 0 rejected 0 received 0 resolved 1",
			"ben 2026-11-27 reviews 0 judged 1 rejected 0 received 0 resolved 0",
			"rev 2026-11-27 reviews 2 judged 0 rejected 0 received 0 resolved 0",
			"rev2 2026-11-27 reviews 1 judged 0 rejected 0 received 0 resolved 0"}},
		{"the first day of the project", day0, day1, f.proj.ID, []string{
			"ana 2026-11-27 reviews 0 judged 2 rejected 1 received 2 resolved 0",
			"ben 2026-11-27 reviews 0 judged 1 rejected 0 received 0 resolved 0",
			"rev 2026-11-27 reviews 2 judged 0 rejected 0 received 0 resolved 0",
			"rev2 2026-11-27 reviews 1 judged 0 rejected 0 received 0 resolved 0"}},
		{"another project", day0, day1.Add(24 * time.Hour), "prj_other", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.s.ReviewStats(f.ctx, c.from, c.to, c.project)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range got {
				lines = append(lines, fmt.Sprintf("%s %s reviews %d judged %d rejected %d received %d resolved %d", d.Who,
					d.Day, d.ReviewsDone, d.JobsReviewed, d.JobsRejected, d.CommentsReceived, d.CommentsResolved))
			}
			if fmt.Sprint(lines) != fmt.Sprint(c.want) {
				t.Errorf("got\n%q\nwant\n%q", lines, c.want)
			}
		})
	}
}
