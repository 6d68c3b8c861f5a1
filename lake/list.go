package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/query"
)

// Filter narrows a selection as docs/spec/interface.md 2.6 says: annotation types
// (raw = no box, human, machine; several are OR-ed) and an inclusive range of
// creation days in UTC, given as YYYY-MM-DD.
type Filter struct {
	AnnotationTypes []string `json:"annotation_types,omitempty"`
	FromDate        string   `json:"from_date,omitempty"`
	ToDate          string   `json:"to_date,omitempty"`
}

// Sort orders a listing; the zero value is date_modified DESC.
type Sort struct {
	Field string `json:"sort_by_field,omitempty"` // date_modified, date_created, name, size, video_index
	Order string `json:"sort_order,omitempty"`    // ASC or DESC
}

// Selection says which items: files of a type, or collections of a type, or
// the files of one collection; narrowed by a query and a filter.
type Selection struct {
	ItemType     string  // image (default), video, other, image_collection, video_collection, other_collection
	CollectionID string  // files of this collection only (any file type unless ItemType is set)
	Query        string  // the query language of lake/query
	Filter       *Filter // may be nil
}

// Paging limits of listings.
const (
	DefaultPageSize = 20
	MaxPageSize     = 1000
	// MaxPageIndex keeps page_index*page_size (the SQL OFFSET) far from overflow.
	MaxPageIndex = math.MaxInt32
)

// ItemTypes are the values Selection.ItemType takes.
var ItemTypes = []string{"image", "video", "other", "image_collection", "video_collection", "other_collection"}

// compiled is a selection turned into SQL over "file f" or "collection c".
type compiled struct {
	target query.Target
	from   string // "file f" or "collection c"
	where  string
	args   []any
	// drive, when set, is the set the files are listed from; where and args
	// are then the conditions on f beyond it ("1" for none).
	drive *driver
	// byName: a conjunct pins the name, so a page must not walk the sort index.
	byName bool
	// bare: files of a type and nothing else, which file's sort indexes hold.
	bare bool
}

// compile turns sel into SQL over file f or collection c alone, for callers
// that put it into their own statements.
func (l *Lake) compile(ctx context.Context, sel Selection, shape query.Shape) (compiled, error) {
	return l.plan(ctx, sel, shape, "", false)
}

// plan compiles sel and, when drive is set and a set can serve sortField (""
// for a count), lets that set drive the listing (see driver).
func (l *Lake) plan(ctx context.Context, sel Selection, shape query.Shape, sortField string, drive bool) (compiled, error) {
	c := compiled{target: query.Files, from: "file f"}
	e, err := query.Parse(sel.Query)
	if err != nil {
		return c, err
	}
	if drive && !IsCollectionType(sel.ItemType) {
		if c.drive, e, err = l.driverOf(ctx, sel, e, sortField); err != nil {
			return c, err
		}
	}
	c.byName = nameEquality(conjuncts(e))
	// A count whose query requires membership (a label, a tag, a collection)
	// is fastest driven from that set with a lookup per member; the unary +
	// keeps SQLite from driving it from the type index instead (157 ms against
	// 106 ms for a common label at 1M files). Pages keep the index their sort needs.
	typeTerm := "f.type = ?"
	if shape == query.Count && drivenBySet(e) {
		typeTerm = "+f.type = ?"
	}
	var conds []string
	switch t := sel.ItemType; {
	case t == "" && sel.CollectionID != "":
	case t == "" || t == "image" || t == "video" || t == "other":
		if c.drive != nil {
			c.drive.where += " AND d.type = ?"
			c.drive.args = append(c.drive.args, defaultStr(t, "image"))
			break
		}
		conds, c.args = append(conds, typeTerm), append(c.args, defaultStr(t, "image"))
	case t == "image_collection" || t == "video_collection" || t == "other_collection":
		if sel.CollectionID != "" {
			return c, errs.Invalid("item_type", "item_type %s lists collections, not the files of one", t)
		}
		c.target, c.from = query.Collections, "collection c"
		conds, c.args = append(conds, "c.type = ?"), append(c.args, t)
	default:
		return c, errs.Invalid("item_type", "item_type %q is not one of %s", t, strings.Join(ItemTypes, ", "))
	}
	if sel.CollectionID != "" && c.drive == nil {
		coll, err := l.Collection(ctx, sel.CollectionID)
		if err != nil {
			return c, err
		}
		conds = append(conds, "EXISTS (SELECT 1 FROM collection_file cf WHERE cf.collection_seq = ? AND cf.file_seq = f.seq)")
		c.args = append(c.args, coll.seq)
	}
	alias := "f"
	if c.target == query.Collections {
		alias = "c"
	}
	qs, qargs, err := query.CompileWith(e, query.Options{Target: c.target, Alias: alias, Shape: shape})
	if err != nil {
		return c, err
	}
	if qs != "1" {
		conds, c.args = append(conds, "("+qs+")"), append(c.args, qargs...)
	}
	fs, fargs, err := compileFilter(sel.Filter, c.target)
	if err != nil {
		return c, err
	}
	conds, c.args = append(conds, fs...), append(c.args, fargs...)
	c.where = "1"
	if len(conds) > 0 {
		c.where = strings.Join(conds, " AND ")
	}
	c.bare = c.target == query.Files && c.where == typeTerm
	return c, nil
}

// drivenBySet reports whether e requires a file to be in a set (to have a box,
// a tag, or a collection) at its top level, so that set can drive a count.
func drivenBySet(e query.Expr) bool {
	member := func(f query.Field) bool {
		return f.Name == "Tags" || f.Name == "collection" ||
			strings.HasPrefix(f.Name, "annotation.") && f.Name != "annotation.count"
	}
	switch x := e.(type) {
	case query.And:
		for _, c := range x.X {
			if drivenBySet(c) {
				return true
			}
		}
	case query.Annotation:
		return true
	case query.In:
		return member(x.Field)
	case query.Compare:
		return member(x.Field) && (x.Op == query.Eq || x.Op == query.Match)
	}
	return false
}

func defaultStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// compileFilter turns a Filter into conditions on f (files) or c (collections,
// whose annotation types are those of their members).
func compileFilter(f *Filter, t query.Target) ([]string, []any, error) {
	if f == nil {
		return nil, nil, nil
	}
	alias, boxesOf := "f", "a.file_seq = f.seq"
	if t == query.Collections {
		alias = "c"
		boxesOf = "a.file_seq IN (SELECT cf.file_seq FROM collection_file cf WHERE cf.collection_seq = c.seq)"
	}
	var conds []string
	var args []any
	var kinds []string
	for _, at := range f.AnnotationTypes {
		switch at {
		case "raw":
			kinds = append(kinds, "NOT EXISTS (SELECT 1 FROM annotation a WHERE "+boxesOf+")")
		case "human", "machine":
			kinds = append(kinds, "EXISTS (SELECT 1 FROM annotation a WHERE "+boxesOf+" AND a.source = ?)")
			args = append(args, at)
		default:
			return nil, nil, errs.Invalid("filter.annotation_types", "annotation type %q is not one of raw, human, machine", at)
		}
	}
	if len(kinds) > 0 {
		conds = append(conds, "("+strings.Join(kinds, " OR ")+")")
	}
	from, err := filterDay("filter.from_date", f.FromDate)
	if err != nil {
		return nil, nil, err
	}
	to, err := filterDay("filter.to_date", f.ToDate)
	if err != nil {
		return nil, nil, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return nil, nil, errs.Invalid("filter.to_date", "to_date %s is before from_date %s", f.ToDate, f.FromDate)
	}
	if !from.IsZero() {
		conds, args = append(conds, alias+".created_at >= ?"), append(args, millis(from))
	}
	if !to.IsZero() {
		conds, args = append(conds, alias+".created_at < ?"), append(args, millis(to.AddDate(0, 0, 1)))
	}
	return conds, args, nil
}

func filterDay(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, errs.Invalid(field, "%s must be a date YYYY-MM-DD, got %q", field[strings.LastIndex(field, ".")+1:], s)
	}
	return t, nil
}

// orderBy maps a Sort to SQL over alias, with seq breaking ties so pages are stable.
func orderBy(s Sort, t query.Target) (string, error) {
	dir := strings.ToUpper(defaultStr(s.Order, "DESC"))
	if dir != "ASC" && dir != "DESC" {
		return "", errs.Invalid("sort_order.sort_order", "sort_order must be ASC or DESC, got %q", s.Order)
	}
	cols := map[string]string{"date_modified": "f.updated_at", "date_created": "f.created_at", "name": "f.name",
		"size": "f.size", "video_index": "f.video_index"}
	if t == query.Collections {
		cols = map[string]string{"date_modified": "c.updated_at", "date_created": "c.created_at", "name": "c.name",
			"size": "(SELECT coalesce(sum(x.size), 0) FROM collection_file cf JOIN file x ON x.seq = cf.file_seq WHERE cf.collection_seq = c.seq)"}
	}
	field := defaultStr(s.Field, "date_modified")
	col, ok := cols[field]
	if q, isQ := qualitySortCols[field]; isQ && t == query.Files {
		col, ok = q, true
	}
	if !ok {
		return "", errs.Invalid("sort_order.sort_by_field", "sort_by_field %q is not one of date_modified, date_created, name, size, video_index, quality.sharpness, quality.brightness, quality.contrast, quality.entropy, quality.aspect (video_index and quality.* sort files only)", field)
	}
	key := "f.seq"
	if t == query.Collections {
		key = "c.seq"
	}
	return fmt.Sprintf("%s %s, %s %s", col, dir, key, dir), nil
}

// CheckPage validates a page index and size. A zero size is the Go zero
// value and means the default; over HTTP an explicit page_size must be in
// 1..MaxPageSize (web tells absent from 0).
func CheckPage(index, size int) (int, int, error) {
	if index < 0 {
		return 0, 0, errs.Invalid("page_index", "page_index must be at least 0, got %d", index)
	}
	if index > MaxPageIndex {
		return 0, 0, errs.Invalid("page_index", "page_index must be at most %d, got %d", MaxPageIndex, index)
	}
	if size == 0 {
		size = DefaultPageSize
	}
	if size < 1 || size > MaxPageSize {
		return 0, 0, errs.Invalid("page_size", "page_size must be in 1..%d, got %d", MaxPageSize, size)
	}
	return index, size, nil
}

// ListFiles returns one page of the files sel selects.
func (l *Lake) ListFiles(ctx context.Context, sel Selection, pageIndex, pageSize int, sort Sort) ([]File, error) {
	var out []File
	err := l.page(ctx, sel, pageIndex, pageSize, sort, query.Files, func(rows *sql.Rows) error {
		f, err := scanFile(rows)
		out = append(out, f)
		return err
	}, func() { out = nil })
	if out == nil {
		out = []File{}
	}
	return out, err
}

// ListCollections returns one page of the collections sel selects.
func (l *Lake) ListCollections(ctx context.Context, sel Selection, pageIndex, pageSize int, sort Sort) ([]Collection, error) {
	var out []Collection
	err := l.page(ctx, sel, pageIndex, pageSize, sort, query.Collections, func(rows *sql.Rows) error {
		c, err := scanCollection(rows)
		out = append(out, c)
		return err
	}, func() { out = nil })
	if out == nil {
		out = []Collection{}
	}
	return out, err
}

// page runs a listing of target, first in the Page shape within pageBudget,
// then, if that ran out, in the Count shape without a budget.
func (l *Lake) page(ctx context.Context, sel Selection, pageIndex, pageSize int, sort Sort, target query.Target,
	scan func(*sql.Rows) error, reset func()) error {
	idx, size, err := CheckPage(pageIndex, pageSize)
	if err != nil {
		return err
	}
	return l.walk(ctx, sel, idx, size, sort, target, "", l.opt.PageBudget, scan, reset)
}

// walk runs page idx of size rows of a listing (cols of each; "" for whole
// rows), first in the Page shape within budget, then in the Count shape
// when the selection is rare. One that found many rows in that time, or
// that many of the newest files match (see common), is a common selection
// on a busy machine: it is run again in the Page shape with a longer
// budget first.
func (l *Lake) walk(ctx context.Context, sel Selection, idx, size int, sort Sort, target query.Target, cols string,
	budget time.Duration, scan func(*sql.Rows) error, reset func()) error {
	if target == query.Files {
		if ok, err := l.anchoredWalk(ctx, sel, idx, size, sort, cols, scan); ok {
			return err // a deep page of an anchored shape: a seek and a short skip
		}
	}
	tail := l.fromTail(ctx, sel, target, idx, size)
	// run reports whether its budget (0: none) ran out, and the rows it read.
	run := func(shape query.Shape, budget time.Duration) (bool, int, error) {
		c, err := l.plan(ctx, sel, shape, defaultStr(sort.Field, "date_modified"), target == query.Files)
		if err != nil {
			return false, 0, err
		}
		if c.target != target {
			if target == query.Files {
				return false, 0, errs.Invalid("item_type", "item_type %s lists collections, not files", sel.ItemType)
			}
			return false, 0, errs.Invalid("item_type", "item_type %q lists files, not collections", sel.ItemType)
		}
		q, args, err := pageSQL(c, sort, idx, size, cols, tail)
		if err != nil {
			return false, 0, err
		}
		release, err := l.db.Turn(ctx)
		if err != nil {
			return false, 0, err
		}
		defer release()
		// The budget starts with the turn: a click in the sidebar queues
		// five reads with the grid's page, and a budget spent waiting for
		// them sent a page of a common value (632,075 files) to the plan
		// that reads every one of them (1.5-4 s of CPU).
		within := ctx
		if budget > 0 {
			var cancel context.CancelFunc
			within, cancel = context.WithTimeout(ctx, budget)
			defer cancel()
		}
		n := 0
		err = l.scanRows(within, q, args, func(rows *sql.Rows) error { n++; return scan(rows) })
		return err != nil && within.Err() != nil && ctx.Err() == nil, n, err
	}
	if budget > 0 {
		out, found, err := run(query.Page, budget)
		if !out {
			return err
		}
		reset()
		if found*commonShare >= size || l.common(ctx, sel, target) {
			if out, _, err = run(query.Page, 20*budget); !out {
				return err
			}
			reset() // the rows ran out past the first ones: rare after all
		}
		l.fallbacks.Add(1)
	}
	_, _, err := run(query.Count, 0)
	return err
}

// commonShare: a walk that found at least 1/commonShare of its page within
// the budget lists a common selection, slowed by the machine, not by
// rarity. A page of annotation.source = machine (632,075 of a million
// files) takes 20-30 ms alone, over the budget on a loaded machine.
// Matches bunched at the start of the sort order (files created today,
// sorted by modification) also find many rows at first, so the second
// walk has a budget too.
const commonShare = 8

// commonProbe is how many of the newest files common tests.
const commonProbe = 1000

// common reports whether at least one in commonShare of the commonProbe
// files of sel's type modified last are selected by sel: a few milliseconds
// that tell a common selection whose walk the machine slowed (a page of a
// value on 632,075 of a million files missed a 30 ms budget on a loaded
// machine and fell back to reading all its files, 1.5-2 s of CPU a page)
// from a rare one (or one whose matches are all among the newest files,
// which the walk finds at once and then looks for more in vain).
func (l *Lake) common(ctx context.Context, sel Selection, target query.Target) bool {
	if target != query.Files {
		return false
	}
	c, err := l.compile(ctx, sel, query.Page)
	if err != nil || c.target != query.Files {
		return false
	}
	var probed, n int
	err = l.db.R.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(`+c.where+`), 0) FROM (SELECT seq FROM file
		WHERE type = ? ORDER BY updated_at DESC, seq DESC LIMIT `+strconv.Itoa(commonProbe)+`) w JOIN file f ON f.seq = w.seq`,
		append(append([]any(nil), c.args...), defaultStr(sel.ItemType, "image"))...).Scan(&probed, &n)
	return err == nil && n > 0 && n*commonShare >= probed
}

// scanRows runs q on a reader and calls scan for each row.
func (l *Lake) scanRows(ctx context.Context, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := l.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// IsCollectionType reports whether an item type lists collections.
func IsCollectionType(itemType string) bool { return strings.HasSuffix(itemType, "_collection") }

// Count returns how many items sel selects.
func (l *Lake) Count(ctx context.Context, sel Selection) (int, error) {
	// Counts of one selection asked at once (the grid's, the sidebar's of
	// its type) share one run: a count of a broad query at a million files
	// is most of a second of CPU. A count asked later runs anew.
	key, _ := json.Marshal(sel)
	v, err := l.keep(ctx, "exact "+string(key), func() (any, bool, error) {
		n, err := l.count(ctx, sel)
		return n, false, err
	})
	n, _ := v.(int)
	return n, err
}

func (l *Lake) count(ctx context.Context, sel Selection) (int, error) {
	c, err := l.plan(ctx, sel, query.Count, "", true)
	if err != nil {
		return 0, err
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	q, args := `SELECT count(*) FROM `+c.source()+` WHERE `+c.fullWhere(), c.allArgs()
	if c.bare && c.drive == nil {
		q = typeCountSQL // every file of the type: the count triggers keep
	} else if mq, margs, ok := memberCountSQL(sel, q, args); ok {
		q, args = mq, margs
	}
	var n int
	err = l.db.R.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

// EachFile calls fn for every file sel selects, in insertion order, reading
// in pages by key so no read transaction stays open while fn works.
func (l *Lake) EachFile(ctx context.Context, sel Selection, fn func(File) error) error {
	c, err := l.compile(ctx, sel, query.Count)
	if err != nil {
		return err
	}
	if c.target != query.Files {
		return errs.Invalid("item_type", "item_type %s selects collections, not files", sel.ItemType)
	}
	after := int64(0)
	for {
		rows, err := l.db.R.QueryContext(ctx, `SELECT `+fileColumns+` FROM file f WHERE f.seq > ? AND `+c.where+
			` ORDER BY f.seq LIMIT 500`, append([]any{after}, c.args...)...)
		if err != nil {
			return err
		}
		var page []File
		for rows.Next() {
			f, err := scanFile(rows)
			if err != nil {
				rows.Close()
				return err
			}
			page = append(page, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, f := range page {
			if err := fn(f); err != nil {
				return err
			}
		}
		if len(page) < 500 {
			return nil
		}
		after = page[len(page)-1].seq
	}
}

// SelectionSQL returns the boolean SQL over "file AS f" that sel selects, for
// packages that pre-filter their own rows by the lake's query and filter
// (vector search). It never contains user text: values are bound arguments.
func (l *Lake) SelectionSQL(ctx context.Context, sel Selection) (string, []any, error) {
	c, err := l.compile(ctx, sel, query.Count)
	if err != nil {
		return "", nil, err
	}
	if c.target != query.Files {
		return "", nil, errs.Invalid("item_type", "item_type %s selects collections, not files", sel.ItemType)
	}
	return c.where, c.args, nil
}

// InlineBoxes gives list answers each file's boxes of frame (every frame
// when frame < 0), at most perFile of them, and how many it has: a page of
// 100 files must not carry a file's million boxes (one import put 1.7
// million on an image and made every later grid page 135 MB). A file
// within the bound gets all its boxes in the order Boxes gives; one past it
// gets the first perFile by label, and its count says the rest are on
// GET /api/v1/lake/files/{uniqueName}/annotations.
func (l *Lake) InlineBoxes(ctx context.Context, seqs []int64, frame, perFile int) (map[int64][]Box, map[int64]int, error) {
	boxes, counts := map[int64][]Box{}, map[int64]int{}
	if len(seqs) == 0 {
		return boxes, counts, nil
	}
	frameCond, args := "", []any{jsonArray(seqs)}
	if frame >= 0 {
		frameCond, args = " AND a.frame = ?", append(args, frame)
	}
	err := l.scanRows(ctx, `SELECT a.file_seq, count(*) FROM annotation a WHERE a.file_seq IN (SELECT value FROM json_each(?))`+
		frameCond+` GROUP BY a.file_seq`, args, func(rows *sql.Rows) error {
		var seq int64
		var n int
		err := rows.Scan(&seq, &n)
		counts[seq] = n
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var whole []int64
	for _, s := range seqs {
		if n := counts[s]; n > 0 && n <= perFile {
			whole = append(whole, s)
		} else if n > perFile {
			if boxes[s], err = l.firstBoxes(ctx, s, frame, perFile); err != nil {
				return nil, nil, err
			}
		}
	}
	all, err := l.Boxes(ctx, BoxQuery{FileSeqs: whole})
	for _, b := range all {
		if frame < 0 || b.Frame == frame {
			boxes[b.FileSeq] = append(boxes[b.FileSeq], b)
		}
	}
	return boxes, counts, err
}

// firstBoxes is the first n boxes of a file's frame by label, read from
// the (file_seq, label) index without visiting the rest.
func (l *Lake) firstBoxes(ctx context.Context, seq int64, frame, n int) ([]Box, error) {
	q, args := boxColumns+` INDEXED BY annotation_file WHERE a.file_seq = ?`, []any{seq}
	if frame >= 0 {
		q, args = q+` AND a.frame = ?`, append(args, frame)
	}
	var out []Box
	err := l.scanBoxes(ctx, q+` ORDER BY a.label LIMIT ?`, append(args, n), func(b Box) { out = append(out, b) })
	return out, err
}

// MaxBoxPage is the most boxes one page of a file's annotations holds.
const MaxBoxPage = 10_000

// FileBoxPage is page idx of size of a file's boxes (of operations, when
// not nil) in the order Boxes gives them, and how many there are.
func (l *Lake) FileBoxPage(ctx context.Context, seq int64, operations []string, idx, size int) ([]Box, int, error) {
	where, args := `a.file_seq = ?`, []any{seq}
	if operations != nil {
		where, args = where+` AND a.operation IN (SELECT value FROM json_each(?))`, append(args, jsonArray(operations))
	}
	var n int
	if err := l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM annotation a WHERE `+where, args...).Scan(&n); err != nil {
		return nil, 0, err
	}
	out := []Box{}
	err := l.scanBoxes(ctx, boxColumns+` WHERE `+where+` ORDER BY a.frame, a.seq LIMIT ? OFFSET ?`,
		append(args, size, int64(idx)*int64(size)), func(b Box) { out = append(out, b) })
	return out, n, err
}
