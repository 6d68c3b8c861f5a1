package lake

import (
	"context"
	"fmt"
	"slices"
)

// MakeChangeLog makes the writer's change log now, as a deep page does.
func MakeChangeLog(l *Lake) { l.makeChangeLog(context.Background()) }

// SetDeferSourceLog turns off (or on) the deferred logging of new files'
// sources in an import's insert and returns the function that puts it back:
// off, the log's triggers log them row by row.
func SetDeferSourceLog(on bool) (restore func()) {
	old := deferSourceLog
	deferSourceLog = on
	return func() { deferSourceLog = old }
}

// ChangeLogRows are the writer's change log's rows, sorted, each as its
// table, group, kind, file name, whether its key is the file's updated_at
// now, and its sign; and the rows the deferral table holds.
func ChangeLogRows(l *Lake) (rows []string, deferred int, err error) {
	rs, err := l.db.W.Query(`SELECT c.tbl, coalesce(c.grp, ''), coalesce(c.kind, ''), coalesce(f.name, ''),
		coalesce(c.k = f.updated_at, 0), c.d FROM temp.anchor_change c LEFT JOIN main.file f ON f.seq = c.s`)
	if err != nil {
		return nil, 0, err
	}
	defer rs.Close()
	for rs.Next() {
		var tbl, grp, kind, name string
		var now bool
		var d int
		if err := rs.Scan(&tbl, &grp, &kind, &name, &now, &d); err != nil {
			return nil, 0, err
		}
		rows = append(rows, fmt.Sprint(tbl, " ", grp, " ", kind, " ", name, " ", now, " ", d))
	}
	slices.Sort(rows)
	err = l.db.W.QueryRow(`SELECT count(*) FROM temp.anchor_change_defer`).Scan(&deferred)
	return rows, deferred, err
}
