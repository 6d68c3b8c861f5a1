package lake

import (
	"context"

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
	return pageSQL(c, s, idx, size, "")
}

// CountSQL is the statement Count runs.
func (l *Lake) CountSQL(sel Selection) (string, []any, error) {
	c, err := l.plan(context.Background(), sel, query.Count, "", true)
	return `SELECT count(*) FROM ` + c.source() + ` WHERE ` + c.fullWhere(), c.allArgs(), err
}
