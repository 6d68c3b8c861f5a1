package lake

import (
	"context"
	"database/sql"
	"time"

	"github.com/framelake/framelake/lake/query"
)

// DrivenBySet is exported for the tests of package lake_test.
var DrivenBySet = drivenBySet

// PageSQL is the statement ListFiles runs for a page (in the Page shape).
func (l *Lake) PageSQL(sel Selection, idx, size int, s Sort) (string, []any, error) {
	c, err := l.plan(context.Background(), sel, query.Page, defaultStr(s.Field, "date_modified"), true)
	if err != nil {
		return "", nil, err
	}
	return pageSQL(c, s, idx, size, "", false)
}

// CountSQL is the statement Count runs.
func (l *Lake) CountSQL(sel Selection) (string, []any, error) {
	c, err := l.plan(context.Background(), sel, query.Count, "", true)
	return `SELECT count(*) FROM ` + c.source() + ` WHERE ` + c.fullWhere(), c.allArgs(), err
}

// Fallbacks is how many listings ran out of their page budget.
func (l *Lake) Fallbacks() int64 { return l.fallbacks.Load() }

// WalkSeqs lists the seqs of the first size files of sel with walk, under
// budget, calling each before every row is scanned.
func (l *Lake) WalkSeqs(sel Selection, size int, budget time.Duration, each func()) ([]int64, error) {
	var seqs []int64
	err := l.walk(context.Background(), sel, 0, size, Sort{}, query.Files, "f.seq", budget, func(rows *sql.Rows) error {
		each()
		var seq int64
		err := rows.Scan(&seq)
		seqs = append(seqs, seq)
		return err
	}, func() { seqs = nil })
	return seqs, err
}
