package lake

import (
	"context"
	"database/sql"
	"sort"
	"time"
)

// IdleGap is the longest pause between two changes of one person that
// counts as editing: active time is the sum of the gaps between a person's
// consecutive changes that are at most IdleGap long (a pause past it is a
// break, and counts nothing), each on the day of the later change. A lone
// change counts nothing: active time is a lower bound.
const IdleGap = 5 * time.Minute

// EditDay is what one person changed on one day (UTC): frames (a file's
// frame of one operation) changed, shapes added and removed, changes, and
// active editing time (IdleGap).
type EditDay struct {
	Who     string        `json:"user"`
	Day     string        `json:"day"` // 2026-11-29, UTC
	Frames  int           `json:"frames"`
	Shapes  int           `json:"shapes"` // shapes added (a moved box is one)
	Removed int           `json:"shapesRemoved"`
	Changes int           `json:"changes"`
	Active  time.Duration `json:"-"`
}

// EditStatsQuery selects the changes counted: in [From, To), of one
// project's answer and its copies when Project is set.
type EditStatsQuery struct {
	From, To time.Time
	Project  string
}

// EditStats counts people's changes of frames' shapes by person and day,
// ordered by person then day.
func (l *Lake) EditStats(ctx context.Context, q EditStatsQuery) ([]EditDay, error) {
	sqlText := `SELECT who, at, file_seq, frame, operation, json_array_length(added), json_array_length(removed)
		FROM frame_change WHERE at >= ? AND at < ?`
	args := []any{millis(q.From), millis(q.To)}
	if q.Project != "" {
		sqlText += ` AND (operation = ? OR substr(operation, 1, ?) = ?)`
		args = append(args, q.Project, len(q.Project)+5, q.Project+"/copy")
	}
	type frameKey struct {
		fileSeq   int64
		frame     int
		operation string
	}
	days := map[[2]string]*EditDay{}
	frames := map[[2]string]map[frameKey]bool{}
	last := map[string]int64{}
	err := l.scanRows(ctx, sqlText+` ORDER BY who, at, seq`, args, func(rows *sql.Rows) error {
		var who, op string
		var at, fileSeq int64
		var frame, added, removed int
		if err := rows.Scan(&who, &at, &fileSeq, &frame, &op, &added, &removed); err != nil {
			return err
		}
		k := [2]string{who, fromMillis(at).Format(time.DateOnly)}
		d := days[k]
		if d == nil {
			d = &EditDay{Who: who, Day: k[1]}
			days[k], frames[k] = d, map[frameKey]bool{}
		}
		d.Changes++
		d.Shapes += added
		d.Removed += removed
		frames[k][frameKey{fileSeq, frame, op}] = true
		if prev, ok := last[who]; ok && time.Duration(at-prev)*time.Millisecond <= IdleGap {
			d.Active += time.Duration(at-prev) * time.Millisecond
		}
		last[who] = at
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]EditDay, 0, len(days))
	for k, d := range days {
		d.Frames = len(frames[k])
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Who != out[j].Who {
			return out[i].Who < out[j].Who
		}
		return out[i].Day < out[j].Day
	})
	return out, nil
}
