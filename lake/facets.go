package lake

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/query"
)

// ValueCount is one value of a set (a box label, a tag, a collection) with
// the number of selected files that have it.
type ValueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// setFacet says how to count the files of a set by value: rows of the set
// (aliased s) keyed by file_seq, the value's SQL, and the table of whole-lake
// counts (value v, files n) that triggers keep (migration 003), if any.
// distinct is how a row's (file, value) pair is made unique: DISTINCT, or
// nothing where the set's key already is that pair.
type setFacet struct {
	from, value, summary, distinct string
}

// SetFacets are the sets SetCounts counts, by their query field name.
var SetFacets = map[string]setFacet{
	"annotation.label": {from: "annotation s", value: "s.label", summary: "SELECT label AS v, files AS n FROM label_files",
		distinct: "DISTINCT"},
	"Tags":       {from: "file_tag s", value: "s.name", summary: "SELECT name AS v, files AS n FROM tag_files", distinct: "DISTINCT"},
	"collection": {from: "collection_file s", value: "s.collection_seq"},
	"annotation.type": {from: "annotation s", value: "s.type", distinct: "DISTINCT",
		summary: "SELECT type AS v, files AS n FROM shape_counts WHERE files > 0"},
}

// MaxFacetValues caps the values SetCounts returns.
const MaxFacetValues = 200

// SetCount is the answer of SetCounts.
type SetCount struct {
	Values []ValueCount `json:"values"`
	More   bool         `json:"more"` // values past the limit have files
	Estimate
}

// SetCounts returns the values of set (a key of SetFacets) most common among
// the files sel selects, most files first, at most limit of them. Every
// (file, value) pair is counted once: for a selection of every file from the
// counts triggers keep (labels, tags) or the set's index on (value,
// file_seq), otherwise through each selected file's rows of the set, or
// those of its newest FacetSample files when it has more (see facetSource).
func (l *Lake) SetCounts(ctx context.Context, sel Selection, set string, limit int) (SetCount, error) {
	f, ok := SetFacets[set]
	if !ok {
		return SetCount{}, errs.Invalid("field", "no counts by %q; fields: annotation.label, annotation.type, Tags, collection", set)
	}
	if limit <= 0 || limit > MaxFacetValues {
		return SetCount{}, errs.Invalid("limit", "limit must be in 1..%d, got %d", MaxFacetValues, limit)
	}
	_, all, err := l.fileSelection(ctx, sel)
	if err != nil {
		return SetCount{}, err
	}
	if all {
		q := `SELECT v, count(*) AS n FROM (SELECT ` + f.distinct + ` ` + f.value + ` AS v, s.file_seq FROM ` + f.from + `) GROUP BY v`
		if f.summary != "" {
			q = f.summary
		}
		return l.setCounts(ctx, set, q, nil, limit)
	}
	// A set no file is in (a lake without tags) has no values whatever the
	// selection: no need to find the selection's files.
	var none bool
	if err := l.db.R.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM `+f.from+`)`).Scan(&none); err != nil || none {
		return SetCount{Values: []ValueCount{}}, err
	}
	ff, err := l.facetSource(ctx, sel)
	if err != nil {
		return SetCount{}, err
	}
	out, err := l.setCounts(ctx, set, `SELECT v, count(*) AS n FROM (SELECT `+f.distinct+` s.file_seq, `+f.value+
		` AS v FROM `+ff.from+` JOIN `+f.from+` ON s.file_seq = f.seq WHERE `+ff.where+`) GROUP BY v`, ff.args, limit)
	for i := range out.Values {
		out.Values[i].Count = ff.scaled(out.Values[i].Count)
	}
	out.Estimate = ff.estimate()
	return out, err
}

// setCounts runs q, which yields (v, n) rows, for the limit most common
// values, naming collections by their names.
func (l *Lake) setCounts(ctx context.Context, set, q string, args []any, limit int) (SetCount, error) {
	q = `SELECT v, n FROM (` + q + `) ORDER BY n DESC, v LIMIT ` + fmt.Sprint(limit+1)
	if set == "collection" {
		q = `SELECT c.name, t.n FROM (` + q + `) t JOIN collection c ON c.seq = t.v ORDER BY t.n DESC, c.name`
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return SetCount{}, err
	}
	defer release()
	rows, err := l.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return SetCount{}, err
	}
	defer rows.Close()
	out := SetCount{Values: []ValueCount{}}
	for rows.Next() {
		var v ValueCount
		if err := rows.Scan(&v.Value, &v.Count); err != nil {
			return SetCount{}, err
		}
		out.Values = append(out.Values, v)
	}
	if len(out.Values) > limit {
		out.Values, out.More = out.Values[:limit], true
	}
	return out, rows.Err()
}

// fileSelection compiles a selection of files and reports whether it is
// every file of the lake (no query, no collection, no filter, and no file of
// another type), which lets a count read a set's own index without visiting
// each file.
func (l *Lake) fileSelection(ctx context.Context, sel Selection) (compiled, bool, error) {
	c, err := l.compile(ctx, sel, query.Count)
	if err != nil {
		return c, false, err
	}
	if c.target != query.Files {
		return c, false, errs.Invalid("itemType", "itemType %s selects collections; counts are of files", sel.ItemType)
	}
	if !c.bare || sel.CollectionID != "" {
		return c, false, nil
	}
	var others bool
	err = l.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM file WHERE type < ?1)
		OR EXISTS (SELECT 1 FROM file WHERE type > ?1)`, c.args[0]).Scan(&others)
	return c, !others, err
}

// Bin is one bar of a histogram: the values in [From, To) (the last bin
// holds To too) and how many there are.
type Bin struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Count int     `json:"count"`
}

// Histogram is the distribution of a numeric field over a selection.
type Histogram struct {
	Field string  `json:"field"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Total int     `json:"total"` // values counted: files, or boxes for annotation.confidence
	Bins  []Bin   `json:"bins"`
	// Estimated: the counts (and the range) are those of the selection's
	// newest FacetSample files, scaled to all of it (see facetSource).
	Estimate
}

// histField is a numeric field as histograms read it: a column of file f, or
// of the selected files' boxes (a). A field with few distinct values (pixel
// sizes, confidences to three decimals) is read once, grouped by value, and
// binned here; others are read twice: their range, then their bins.
type histField struct {
	col     string
	boxes   bool
	join    string // a table of the file's figures the column is in
	integer bool   // bins on whole numbers
	group   string // SQL of the value to group by in one pass; "" for two passes
}

// HistogramFields are the fields Histogram takes, by their query names.
var HistogramFields = map[string]histField{
	"width":                 {col: "f.width", integer: true, group: "f.width"},
	"height":                {col: "f.height", integer: true, group: "f.height"},
	"fileSize":              {col: "f.size", integer: true},
	"createdAt":             {col: "f.created_at", integer: true},
	"annotation.confidence": {col: "a.confidence", boxes: true, group: "round(a.confidence, 3)"},
	"quality.sharpness":     qualityField("sharpness"),
	"quality.brightness":    qualityField("brightness"),
	"quality.contrast":      qualityField("contrast"),
	"quality.entropy":       qualityField("entropy"),
	"quality.aspect":        qualityField("aspect"),
}

// qualityField is a quality score as a histogram reads it: files without
// scores are left out, as files without a value of any field are.
func qualityField(col string) histField {
	return histField{col: "fq." + col, join: " JOIN file_quality fq ON fq.file_seq = f.seq"}
}

// MaxBins caps a histogram's bins.
const MaxBins = 100

// Histogram counts the values of field (a key of HistogramFields) among the
// files sel selects in at most bins equal bins between their least and
// greatest value; createdAt is in unix milliseconds.
func (l *Lake) Histogram(ctx context.Context, sel Selection, field string, bins int) (Histogram, error) {
	h := Histogram{Field: field, Bins: []Bin{}}
	hf, ok := HistogramFields[field]
	if !ok {
		return h, errs.Invalid("field", "no histogram of %q; fields: width, height, fileSize, createdAt, annotation.confidence, quality.*", field)
	}
	if bins < 1 || bins > MaxBins {
		return h, errs.Invalid("bins", "bins must be in 1..%d, got %d", MaxBins, bins)
	}
	ff, err := l.facetSource(ctx, sel)
	if err != nil {
		return h, err
	}
	from, where := ff.from+hf.join, ff.where+" AND "+hf.col+" IS NOT NULL"
	if hf.boxes {
		from += " JOIN annotation a ON a.file_seq = f.seq"
	}
	err = l.histogram(ctx, &h, hf, from, where, ff.args, bins)
	h.Total = ff.scaled(h.Total)
	for i := range h.Bins {
		h.Bins[i].Count = ff.scaled(h.Bins[i].Count)
	}
	h.Estimate = ff.estimate()
	return h, err
}

// histogram fills h with the values of hf among the rows of from and where.
func (l *Lake) histogram(ctx context.Context, h *Histogram, hf histField, from, where string, args []any, bins int) error {
	release, err := l.db.Turn(ctx)
	if err != nil {
		return err
	}
	defer release()
	if hf.group != "" {
		return l.histogramByValue(ctx, h, hf, `SELECT `+hf.group+` AS v, count(*) FROM `+from+` WHERE `+where+
			` GROUP BY v`, args, bins)
	}
	var lo, hi sql.NullFloat64
	err = l.db.R.QueryRowContext(ctx, `SELECT min(`+hf.col+`), max(`+hf.col+`), count(*) FROM `+from+` WHERE `+where,
		args...).Scan(&lo, &hi, &h.Total)
	if err != nil || !lo.Valid {
		return err
	}
	h.Min, h.Max = lo.Float64, hi.Float64
	step := h.binning(hf.integer, bins)
	if step == 0 {
		h.Bins[0].Count = h.Total
		return nil
	}
	q := `SELECT min(CAST((` + hf.col + ` - ?) / ? AS INTEGER), ?) AS b, count(*) FROM ` + from + ` WHERE ` + where +
		` GROUP BY b`
	rows, err := l.db.R.QueryContext(ctx, q, append([]any{h.Min, step, len(h.Bins) - 1}, args...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var b, k int
		if err := rows.Scan(&b, &k); err != nil {
			return err
		}
		h.Bins[max(0, min(b, len(h.Bins)-1))].Count += k
	}
	return rows.Err()
}

// histogramByValue reads (value, count) rows and bins them.
func (l *Lake) histogramByValue(ctx context.Context, h *Histogram, hf histField, q string, args []any, bins int) error {
	rows, err := l.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	type group struct {
		v float64
		n int
	}
	var gs []group
	for rows.Next() {
		var g group
		if err := rows.Scan(&g.v, &g.n); err != nil {
			return err
		}
		if len(gs) == 0 || g.v < h.Min {
			h.Min = g.v
		}
		if len(gs) == 0 || g.v > h.Max {
			h.Max = g.v
		}
		h.Total += g.n
		gs = append(gs, g)
	}
	if err := rows.Err(); err != nil || len(gs) == 0 {
		return err
	}
	step := h.binning(hf.integer, bins)
	for _, g := range gs {
		b := 0
		if step > 0 {
			b = int((g.v - h.Min) / step)
		}
		h.Bins[max(0, min(b, len(h.Bins)-1))].Count += g.n
	}
	return nil
}

// binning makes h's empty bins over [Min, Max] and returns their width (0
// when every value is the same, in one bin).
func (h *Histogram) binning(integer bool, bins int) float64 {
	step := (h.Max - h.Min) / float64(bins)
	if integer {
		step = math.Max(1, math.Ceil(step))
	}
	if h.Max == h.Min {
		h.Bins = []Bin{{From: h.Min, To: h.Max}}
		return 0
	}
	n := int(math.Ceil((h.Max - h.Min) / step))
	if integer && float64(n)*step+h.Min <= h.Max {
		n++ // integer bins are [from, to): the greatest value needs a bin of its own edge
	}
	n = max(1, min(n, bins))
	h.Bins = make([]Bin, n)
	for i := range h.Bins {
		h.Bins[i] = Bin{From: h.Min + float64(i)*step, To: h.Min + float64(i+1)*step}
	}
	h.Bins[n-1].To = math.Max(h.Bins[n-1].To, h.Max)
	return step
}

// Vocabularies are the lists Complete draws from.
var Vocabularies = []string{"annotation.label", "Tags", "collection", "metadata", "metadata.<key>", "eval"}

// Complete returns up to limit distinct values of a vocabulary that start
// with prefix (case-sensitive, in code point order): box labels, tag names,
// collection names, metadata keys ("metadata"), the text values of one
// metadata key ("metadata.<key>"), or the keys of evaluations that stored
// per-file counts ("eval", read as eval.<key>.tp|fp|fn). Each value is one index seek, so a lake of
// millions of boxes with few labels answers in microseconds.
func (l *Lake) Complete(ctx context.Context, vocab, prefix string, limit int) ([]string, error) {
	if limit <= 0 || limit > MaxFacetValues {
		return nil, errs.Invalid("limit", "limit must be in 1..%d, got %d", MaxFacetValues, limit)
	}
	table, col, where, args := "", "", "1", []any{}
	switch {
	case vocab == "annotation.label":
		table, col = "annotation", "label"
	case vocab == "Tags":
		table, col = "file_tag", "name"
	case vocab == "collection":
		table, col = "collection", "name"
	case vocab == "metadata":
		table, col = "file_meta", "key"
	case vocab == "eval":
		table, col = "file_eval", "eval_key"
	case strings.HasPrefix(vocab, "metadata.") && len(vocab) > len("metadata."):
		table, col, where = "file_meta", "value", "key = ? AND typeof(value) = 'text'"
		args = append(args, strings.TrimPrefix(vocab, "metadata."))
	default:
		return nil, errs.Invalid("field", "no completion for %q; fields: %s", vocab, strings.Join(Vocabularies, ", "))
	}
	// A loose index scan: each step seeks the next value past the last one.
	seek := `SELECT min(` + col + `) FROM ` + table + ` WHERE ` + where + ` AND ` + col
	q := `WITH RECURSIVE v(x) AS (
		SELECT (` + seek + ` >= ?) UNION ALL
		SELECT (` + seek + ` > v.x) FROM v WHERE v.x IS NOT NULL AND substr(v.x, 1, length(?)) = ?
		LIMIT ` + fmt.Sprint(limit+1) + `)
		SELECT x FROM v WHERE x IS NOT NULL AND substr(x, 1, length(?)) = ? LIMIT ` + fmt.Sprint(limit)
	all := append(append(append(append([]any{}, args...), prefix), args...), prefix, prefix, prefix, prefix)
	rows, err := l.db.R.QueryContext(ctx, q, all...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
