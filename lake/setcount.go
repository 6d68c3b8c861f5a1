package lake

import (
	"context"
	"strconv"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake/query"
)

// memberCount is how the files of one set value are counted without
// visiting them: the count triggers keep (label_files, tag_files, migration
// 004), or a count of distinct files read from the set's index on
// (value, file_seq) alone. Every row of these sets names an existing file
// (foreign keys, cascading deletes), so either is the number of files with
// the value, of every type.
type memberCount struct {
	field   string // the query field
	sql     string // one value: one ? for it (and one for the type when typed)
	value   func(query.Value) (string, bool)
	summary bool // read from a table of counts: a row, not a scan
	typed   bool // counts files of the type alone: exact in a lake of several types
}

func textValue(v query.Value) (string, bool) { return v.Text, true }

// sourceValue takes only the enum's own spelling; another (Machine) is left
// to the general count, which knows how the query language reads it.
func sourceValue(v query.Value) (string, bool) {
	return v.Text, v.Text == "human" || v.Text == "machine"
}

var memberCounts = map[string]memberCount{
	"annotation.label": {sql: "coalesce((SELECT files FROM label_files WHERE label = ?), 0)", value: textValue,
		summary: true},
	"Tags": {sql: "coalesce((SELECT files FROM tag_files WHERE name = ?), 0)", value: textValue, summary: true},
	// Kept per type by migration 014's triggers: a row read where the scan of
	// a common source's files took 187 ms at a million files (issue 31 item 22).
	"annotation.source": {sql: "coalesce((SELECT files FROM source_files WHERE source = ? AND type = ?), 0)",
		value: sourceValue, summary: true, typed: true},
}

// memberCountSQL returns, for a selection whose whole query is one set
// value (annotation.label = dog, Tags = x, annotation.source = machine) of
// files of one type, a statement counting it exactly in one read: the
// general count (q and args) when the lake has files of another type, the
// set's own count otherwise. A lake of images only is the common case, and
// there the grid's count of a label is a row read instead of a lookup per
// file (135 ms of CPU for 58,540 files of a million), a source's an index
// scan instead of a lookup per file (0.8 s for 632,075). One statement, so
// the test for other types and the count see the same snapshot.
func memberCountSQL(sel Selection, q string, args []any) (string, []any, bool) {
	mc, t, v, ok := memberTerm(sel)
	if !ok {
		return "", nil, false
	}
	if mc.typed {
		return `SELECT ` + mc.sql, []any{v, t}, true
	}
	q, args = oneTypeSQL(t, q, args, mc.sql, []any{v})
	return q, args, true
}

// oneTypeSQL is a statement whose value is that of q, or, when the lake has
// no file of a type other than t, that of alt (which must then equal it).
// SQLite evaluates only the branch taken, and the test and the value read
// one snapshot.
func oneTypeSQL(t, q string, args []any, alt string, altArgs []any) (string, []any) {
	return `SELECT CASE WHEN EXISTS (SELECT 1 FROM file WHERE type < ?) OR EXISTS (SELECT 1 FROM file WHERE type > ?)
		THEN (` + q + `) ELSE (` + alt + `) END`, append(append([]any{t, t}, args...), altArgs...)
}

// memberTerm reports whether sel is files of one type whose whole query is
// one set value that memberCounts counts, and returns how, the type and the
// value.
func memberTerm(sel Selection) (memberCount, string, string, bool) {
	t := defaultStr(sel.ItemType, "image")
	if sel.CollectionID != "" || sel.Filter != nil || IsCollectionType(t) {
		return memberCount{}, "", "", false
	}
	e, err := query.Parse(sel.Query)
	cmp, ok := e.(query.Compare)
	if err != nil || !ok || cmp.Op != query.Eq || cmp.Field.Key != "" || cmp.Field.Arg != nil {
		return memberCount{}, "", "", false
	}
	mc, ok := memberCounts[cmp.Field.Name]
	if !ok {
		return memberCount{}, "", "", false
	}
	mc.field = cmp.Field.Name
	v, ok := mc.value(cmp.Value)
	return mc, t, v, ok
}

// labelSample is findSample for a selection of one label of files of one
// type: its newest n+1 files are the first rows of label_file's (label,
// type, updated_at) range, the grid's order, read without visiting a file
// (a label click's sidebar walked up to 85,000 files, or probed the boxes
// of each, for them). ok false: sel is not one label.
func (l *Lake) labelSample(ctx context.Context, sel Selection, n int) (ff facetFiles, ok bool, err error) {
	mc, t, v, ok := memberTerm(sel)
	if !ok || mc.field != "annotation.label" {
		return ff, false, nil
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return ff, false, err
	}
	seqs, err := sqlitedb.Int64s(ctx, l.db.R, `SELECT file_seq FROM label_file WHERE label = ? AND type = ?
		ORDER BY updated_at DESC, file_seq DESC LIMIT `+strconv.Itoa(n+1), v, t)
	release()
	if err != nil {
		return ff, false, err
	}
	total := len(seqs)
	if total > n {
		if total, err = l.estimateTotal(ctx, sel); err != nil {
			return ff, false, err
		}
		total = max(total, n+1) // counted in another snapshot: at least what was read
	}
	ff, err = sampleOf(seqs, n, total)
	return ff, true, err
}

// sparseShare: a set value is sparse when at most one file in sparseShare of
// its type has it.
const sparseShare = 8

// sparseSample is findSample for a selection of one sparse label or tag in
// a lake of one file type, whose exact size is a row of counts. Its newest
// files are found by walking the sort index against the value's files
// listed once from the set's index (a list subquery) instead of a probe of
// the set per file walked: for a label on 58,540 of a million files the
// walk passes about 85,000 files to find 5,001 (280 ms of CPU with a probe
// each). A dense value is left to the probes, which pass few files, as is a
// value rare among the newest files (ok false).
func (l *Lake) sparseSample(ctx context.Context, sel Selection, n int) (ff facetFiles, ok bool, err error) {
	mc, t, _, ok := memberTerm(sel)
	if !ok || !mc.summary {
		return ff, false, nil
	}
	var others bool
	err = l.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM file WHERE type < ?1)
		OR EXISTS (SELECT 1 FROM file WHERE type > ?1)`, t).Scan(&others)
	if err != nil || others {
		return ff, false, err
	}
	total, err := l.estimateTotal(ctx, sel)
	if err != nil {
		return ff, false, err
	}
	all, err := l.estimateTotal(ctx, Selection{ItemType: t})
	if err != nil || total <= n || total*sparseShare > all {
		return ff, false, err
	}
	e, err := query.Parse(sel.Query)
	if err != nil {
		return ff, false, err
	}
	where, args, err := query.CompileWith(e, query.Options{Target: query.Files, Alias: "f", Shape: query.Count})
	if err != nil {
		return ff, false, err
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return ff, false, err
	}
	seqs, err := sqlitedb.Int64s(ctx, l.db.R, `SELECT f.seq FROM (SELECT seq FROM file WHERE type = ?
		ORDER BY updated_at DESC, seq DESC LIMIT `+strconv.Itoa(sampleWalk*n)+`) f WHERE `+where+
		` LIMIT `+strconv.Itoa(n+1), append([]any{t}, args...)...)
	release()
	if err != nil || len(seqs) <= n {
		return ff, false, err
	}
	ff, err = sampleOf(seqs, n, total)
	return ff, true, err
}
