package lake

import (
	"context"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/query"
)

// driver is a set of files that carries copies of its files' sort keys and is
// indexed by them (migrations 002 and 014): the files of a collection, the
// files whose metadata key has a value, or the files with a box of a label. A listing that must be inside such a set
// walks the set's own index in sort order, so a page costs the same at any
// depth and a rare value does not walk the whole file index. Its table is
// aliased d; d.file_seq is the file.
type driver struct {
	from  string
	where string // conditions on d alone
	args  []any
	cols  map[string]string // sort field → d's copy of the column
}

var (
	collectionSortCols = map[string]string{"date_modified": "d.updated_at", "date_created": "d.created_at",
		"name": "d.name", "size": "d.size", "video_index": "d.video_index"}
	// file_meta and label_file copy only the default sort's key: one index
	// per value is enough for the grid; other sorts probe the set per file.
	metaSortCols = map[string]string{"date_modified": "d.updated_at"}
)

// driverOf picks the set that drives a listing of files of sel sorted by
// sortField ("" for a count, which any set serves), and returns e without the
// conjunct the set stands for. A nil driver means the listing walks file's
// own indexes.
func (l *Lake) driverOf(ctx context.Context, sel Selection, e query.Expr, sortField string) (*driver, query.Expr, error) {
	if sel.CollectionID != "" {
		coll, err := l.Collection(ctx, sel.CollectionID)
		if err != nil {
			return nil, e, err
		}
		if _, ok := collectionSortCols[sortField]; !ok && sortField != "" {
			return nil, e, nil
		}
		return &driver{from: "collection_file d", where: "d.collection_seq = ?", args: []any{coll.seq},
			cols: collectionSortCols}, e, nil
	}
	xs := conjuncts(e)
	if nameEquality(xs) { // the name index finds a file or two: nothing beats it
		return nil, e, nil
	}
	for i, x := range xs {
		cmp, ok := x.(query.Compare)
		if !ok || cmp.Op != query.Eq {
			continue
		}
		var d *driver
		switch {
		case cmp.Field.Name == "collection" && inSort(collectionSortCols, sortField):
			seq := int64(0) // no such collection: an empty set
			coll, err := l.CollectionByName(ctx, cmp.Value.Text)
			if err == nil {
				seq = coll.seq
			} else if errs.CodeOf(err) != errs.NotFound {
				return nil, e, err
			}
			d = &driver{from: "collection_file d", where: "d.collection_seq = ?", args: []any{seq}, cols: collectionSortCols}
		case cmp.Field.Name == "metadata" && query.MetaIndexed(cmp.Value) && inSort(metaSortCols, sortField):
			v, err := query.MetaLiteral(cmp.Field, cmp.Value)
			if err != nil {
				return nil, e, err
			}
			d = &driver{from: "file_meta d", where: "d.key = ? AND d.value = ?", args: []any{cmp.Field.Key, v}, cols: metaSortCols}
		case cmp.Field.Name == "annotation.label" && cmp.Field.Key == "" && cmp.Field.Arg == nil && inSort(metaSortCols, sortField):
			// A label click: its page, count and sample read label_file's
			// (label, type, updated_at) range alone (issue 31 item 21).
			d = &driver{from: "label_file d", where: "d.label = ?", args: []any{cmp.Value.Text}, cols: metaSortCols}
		default:
			continue
		}
		rest := append(append([]query.Expr(nil), xs[:i]...), xs[i+1:]...)
		switch len(rest) {
		case 0:
			return d, nil, nil
		case 1:
			return d, rest[0], nil
		}
		return d, query.And{X: rest}, nil
	}
	return nil, e, nil
}

func inSort(cols map[string]string, field string) bool {
	_, ok := cols[field]
	return ok || field == ""
}

// conjuncts lists the operands of a top-level AND, or e alone.
func conjuncts(e query.Expr) []query.Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case query.And:
		return x.X
	}
	return []query.Expr{e}
}

// nameEquality reports whether a conjunct pins the file name to one or a few
// values, which index file_type_name finds directly.
func nameEquality(xs []query.Expr) bool {
	for _, x := range xs {
		switch x := x.(type) {
		case query.Compare:
			if x.Field.Name == "name" && x.Op == query.Eq {
				return true
			}
		case query.In:
			if x.Field.Name == "name" {
				return true
			}
		}
	}
	return false
}

// source is the FROM clause of c: the driving set joined to its files, or
// the set alone when nothing is asked of the file beyond it.
func (c compiled) source() string {
	switch {
	case c.drive == nil:
		return c.from
	case c.where == "1":
		return c.drive.from
	}
	// CROSS JOIN keeps the set as the outer loop: SQLite never reorders it.
	return c.drive.from + " CROSS JOIN file f ON f.seq = d.file_seq"
}

// fullWhere and allArgs are c's conditions and their values, the set's first.
func (c compiled) fullWhere() string {
	switch {
	case c.drive == nil:
		return c.where
	case c.where == "1":
		return c.drive.where
	}
	return c.drive.where + " AND " + c.where
}

func (c compiled) allArgs() []any {
	if c.drive == nil {
		return c.args
	}
	return append(append([]any(nil), c.drive.args...), c.args...)
}

// pageSQL is the statement of one page of c, reading cols ("": whole rows). LIMIT and OFFSET are checked
// integers written into the SQL: bound as parameters, SQLite plans with their
// values and so prepares the statement twice, which doubled the time of a
// 1M-file page.
func pageSQL(c compiled, s Sort, idx, size int, cols string, tail bool) (string, []any, error) {
	order, err := orderBy(s, c.target)
	if err != nil {
		return "", nil, err
	}
	switch {
	case cols != "":
	case c.target == query.Collections:
		cols = collectionColumns
	default:
		cols = fileColumns
	}
	limit := ` LIMIT ` + strconv.Itoa(size) + ` OFFSET ` + strconv.Itoa(idx*size)
	if c.drive == nil && c.byName {
		// The unary + stops SQLite from walking the sort index for the one
		// file index file_type_name finds (97 ms against 0.3 ms at 100,000 files).
		order = "+" + order
	}
	switch {
	case c.drive == nil && c.bare && idx > 0 && tail:
		return tailPageSQL(c, s, idx, size, cols, order)
	case c.drive == nil && c.bare && idx > 0:
		// The sort indexes hold type, key and seq: skipping OFFSET rows in a
		// subquery reads nothing else (the last page of 100,000 files in 10
		// against 14 ms at best, 33 against 56 ms median on a loaded machine).
		return `SELECT ` + cols + ` FROM file f WHERE f.seq IN (SELECT f.seq FROM file f WHERE ` + c.where +
			` ORDER BY ` + order + limit + `) ORDER BY ` + order, c.args, nil
	case c.drive == nil:
		return `SELECT ` + cols + ` FROM ` + c.from + ` WHERE ` + c.where + ` ORDER BY ` + order + limit, c.args, nil
	}
	dir := strings.ToUpper(defaultStr(s.Order, "DESC"))
	dorder := c.drive.cols[defaultStr(s.Field, "date_modified")] + " " + dir + ", d.file_seq " + dir
	if c.where == "1" {
		// Only the set's index is read to skip OFFSET rows; the page's files
		// are looked up once it is found.
		return `SELECT ` + cols + ` FROM file f WHERE f.seq IN (SELECT d.file_seq FROM ` + c.drive.from +
			` WHERE ` + c.drive.where + ` ORDER BY ` + dorder + limit + `) ORDER BY ` + order, c.drive.args, nil
	}
	return `SELECT ` + cols + ` FROM ` + c.source() + ` WHERE ` + c.fullWhere() + ` ORDER BY ` + dorder + limit,
		c.allArgs(), nil
}
