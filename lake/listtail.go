package lake

import (
	"context"
	"strconv"
	"strings"

	"github.com/framelake/framelake/lake/query"
)

// fromTail reports whether page idx of a listing of every file of sel's type
// lies in the listing's second half, by the type's count of at most keptTTL
// ago: a guess that only picks the faster end; the page itself is exact.
func (l *Lake) fromTail(ctx context.Context, sel Selection, target query.Target, idx, size int) bool {
	if target != query.Files || idx*size < l.opt.DeepPage || strings.TrimSpace(sel.Query) != "" || sel.Filter != nil ||
		sel.CollectionID != "" || IsCollectionType(sel.ItemType) {
		return false
	}
	n, err := l.estimateTotal(ctx, Selection{ItemType: sel.ItemType})
	return err == nil && 2*idx*size > n
}

// tailPageSQL is page idx of every file of a type (c bare) read from the
// far end: the sort index walked the other way, skipping the rows after the
// page instead of those before it. OFFSET steps through each row it skips,
// so "go to item 900,000" of a million walked 900,000 index entries (150-220
// ms of CPU) and now walks 100,000. The count of the type is read in the
// same statement, so the page is the one the forward walk gives.
func tailPageSQL(c compiled, s Sort, idx, size int, cols, order string) (string, []any, error) {
	back := Sort{Field: s.Field, Order: "ASC"}
	if strings.EqualFold(s.Order, "ASC") {
		back.Order = "DESC"
	}
	border, err := orderBy(back, c.target)
	if err != nil {
		return "", nil, err
	}
	off, n := strconv.Itoa(idx*size), strconv.Itoa(size)
	// A bare selection's one argument is its type, for the count and the walk.
	return `WITH total(n) AS MATERIALIZED (` + typeCountSQL + `)
		SELECT ` + cols + ` FROM file f WHERE f.seq IN (SELECT f.seq FROM file f WHERE ` + c.where + ` ORDER BY ` + border +
		` LIMIT max(0, min(` + n + `, (SELECT n FROM total) - ` + off + `))
		OFFSET max(0, (SELECT n FROM total) - ` + off + ` - ` + n + `)) ORDER BY ` + order, append(c.args[:1:1], c.args...), nil
}

// typeCountSQL counts the files of one type (its one argument) from the
// counts triggers keep (migration 008).
const typeCountSQL = `SELECT coalesce((SELECT files FROM type_files WHERE type = ?), 0)`
