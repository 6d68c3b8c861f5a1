package lake

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestEditStats counts a seeded history by person and day: frames changed,
// shapes added and removed, and active time, where a pause over IdleGap
// counts nothing and the first change of a run counts nothing either.
func TestEditStats(t *testing.T) {
	ctx := context.Background()
	l, seq := historyLake(t)
	day := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	n := 0
	seed := func(who string, at time.Time, frame int, op string, added, removed int) {
		n++
		add, rem := "[]", "[]"
		if added > 0 {
			add = "[" + repeat(`{"label":"car"}`, added) + "]"
		}
		if removed > 0 {
			rem = "[" + repeat(`"0011223344556677"`, removed) + "]"
		}
		if _, err := l.db.W.ExecContext(ctx, `INSERT INTO frame_change (id, file_seq, frame, operation, at, who, via, base,
			removed, added) VALUES (?, ?, ?, ?, ?, ?, 'web app', NULL, ?, ?)`, fmt.Sprintf("chg_%d", n), seq, frame, op,
			millis(at), who, rem, add); err != nil {
			t.Fatal(err)
		}
	}
	m := time.Minute
	// ana: three saves a minute apart (2 min active), a break of 10 minutes,
	// then two saves 4 minutes apart (4 min more), on two frames of prj_a.
	seed("ana", day, 0, "prj_a", 2, 0)
	seed("ana", day.Add(1*m), 0, "prj_a", 1, 1)
	seed("ana", day.Add(2*m), 1, "prj_a", 3, 0)
	seed("ana", day.Add(12*m), 1, "prj_a", 1, 1)
	seed("ana", day.Add(16*m), 1, "prj_a/copy1", 1, 0)
	// ana the next day: one save 2 minutes after midnight of a save at 23:59.
	seed("ana", day.Add(15*time.Hour-m), 2, "prj_b", 1, 0)
	seed("ana", day.Add(15*time.Hour+2*m), 2, "prj_b", 0, 1)
	// bo: one lone save, no active time.
	seed("bo", day.Add(30*m), 0, "prj_a", 5, 0)

	for _, c := range []struct {
		name string
		q    EditStatsQuery
		want []string
	}{
		{"everything", EditStatsQuery{From: day.Add(-time.Hour), To: day.Add(48 * time.Hour)}, []string{
			"ana 2026-11-28 frames 4 shapes 9 removed 2 changes 6 active 6m0s",
			"ana 2026-11-29 frames 1 shapes 0 removed 1 changes 1 active 3m0s",
			"bo 2026-11-28 frames 1 shapes 5 removed 0 changes 1 active 0s"}},
		{"one project and its copies", EditStatsQuery{From: day, To: day.Add(48 * time.Hour), Project: "prj_a"}, []string{
			"ana 2026-11-28 frames 3 shapes 8 removed 2 changes 5 active 6m0s",
			"bo 2026-11-28 frames 1 shapes 5 removed 0 changes 1 active 0s"}},
		{"a range that starts mid-run", EditStatsQuery{From: day.Add(2 * m), To: day.Add(13 * m)}, []string{
			"ana 2026-11-28 frames 1 shapes 4 removed 1 changes 2 active 0s"}},
		{"nothing in range", EditStatsQuery{From: day.Add(-48 * time.Hour), To: day.Add(-24 * time.Hour)}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := l.EditStats(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range got {
				lines = append(lines, fmt.Sprintf("%s %s frames %d shapes %d removed %d changes %d active %s", d.Who, d.Day,
					d.Frames, d.Shapes, d.Removed, d.Changes, d.Active))
			}
			if fmt.Sprint(lines) != fmt.Sprint(c.want) {
				t.Errorf("got\n%q\nwant\n%q", lines, c.want)
			}
		})
	}
}

func repeat(item string, n int) string {
	s := item
	for range n - 1 {
		s += "," + item
	}
	return s
}
