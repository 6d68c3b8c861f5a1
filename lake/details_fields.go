package lake

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/query"
)

// Field names of the query language that get_file_details takes besides
// its own (FileDetailFields): a dotted name with one of these prefixes is
// never a custom metadata key, so {"quality.sharpness": true} answers the
// file's sharpness, and a misspelt one is a 400 instead of a null. A
// metadata key with such a name is read as metadata.<key>.
var detailPrefixes = []string{"quality.", "duplicates.", "disagreement.", "eval.", "metadata.", "annotation."}

// QueryDetailFields are the dotted fields file details take, as the query
// language names them (eval.<key>.tp|fp|fn and metadata.<key> too).
var QueryDetailFields = []string{
	"quality.sharpness", "quality.brightness", "quality.contrast", "quality.entropy", "quality.aspect",
	"duplicates.group", "duplicates.count", "disagreement.count",
	"annotation.count", "annotation.label", "annotation.source", "annotation.operation",
}

func isQueryDetail(name string) bool {
	for _, p := range detailPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// checkDetailNames refuses, before anything is read, a requested dotted
// name of the query language that no file has.
func checkDetailNames(fields map[string]bool, collection bool) error {
	for name, on := range fields {
		if !on || !isQueryDetail(name) {
			continue
		}
		if key, ok := strings.CutPrefix(name, "metadata."); ok && key != "" {
			continue
		}
		if collection {
			return errs.Invalid("fields_filter", "fields_filter: %q is not a field of collections; a metadata key of that name is read as metadata.%s", name, name)
		}
		if _, _, ok := evalDetail(name); ok || slices.Contains(QueryDetailFields, name) {
			continue
		}
		return errs.Invalid("fields_filter", "fields_filter: unknown field %q; the query language's fields file details take are %s, eval.<key>.tp|fp|fn and metadata.<key>; a metadata key of that name is read as metadata.%s",
			name, strings.Join(QueryDetailFields, ", "), name)
	}
	return nil
}

// evalDetail splits eval.<key>.<tp|fp|fn>.
func evalDetail(name string) (key, stat string, ok bool) {
	rest, _ := strings.CutPrefix(name, "eval.")
	dot := strings.LastIndexByte(rest, '.')
	if dot < 0 {
		return "", "", false
	}
	key, stat = rest[:dot], rest[dot+1:]
	return key, stat, query.ValidEvalKey(key) && (stat == "tp" || stat == "fp" || stat == "fn")
}

// queryDetail reads the value of a dotted field (checked by
// checkDetailNames) of file f as the query language reads it: null where
// the file has none (no quality scores, not covered by the evaluation, no
// such metadata key), the natural value where it has one (duplicates.count
// 1, disagreement.count 0, annotation.count 0).
func (l *Lake) queryDetail(ctx context.Context, f File, name string, meta func() map[string]any) (any, error) {
	if key, ok := strings.CutPrefix(name, "metadata."); ok {
		return meta()[key], nil
	}
	if key, stat, ok := evalDetail(name); ok {
		return l.detailNumber(ctx, `SELECT `+stat+` FROM file_eval WHERE eval_key = ? AND file_seq = ?`, nil, key, f.seq)
	}
	switch name {
	case "quality.sharpness", "quality.brightness", "quality.contrast", "quality.entropy", "quality.aspect":
		col := strings.TrimPrefix(name, "quality.")
		var v sql.NullFloat64
		err := l.db.Point.QueryRowContext(ctx, `SELECT `+col+` FROM file_quality WHERE file_seq = ?`, f.seq).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) || !v.Valid {
			return nil, nil
		}
		return v.Float64, err
	case "duplicates.group":
		var g string
		err := l.db.Point.QueryRowContext(ctx, `SELECT group_id FROM file_duplicate WHERE file_seq = ?`, f.seq).Scan(&g)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return g, err
	case "duplicates.count":
		return l.detailNumber(ctx, `SELECT member_count FROM file_duplicate WHERE file_seq = ?`, int64(1), f.seq)
	case "disagreement.count":
		return l.detailNumber(ctx, `SELECT count FROM file_disagreement WHERE file_seq = ?`, int64(0), f.seq)
	case "annotation.count":
		return l.detailNumber(ctx, `SELECT count(*) FROM annotation WHERE file_seq = ?`, int64(0), f.seq)
	case "annotation.label", "annotation.source", "annotation.operation":
		col := strings.TrimPrefix(name, "annotation.")
		return l.tagNames(ctx, `SELECT DISTINCT `+col+` FROM annotation WHERE file_seq = ? ORDER BY 1`, f.seq)
	}
	return nil, errs.New(errs.Internal, "", "file details: unchecked field %q", name)
}

// detailNumber reads one integer, or none (no row) when the file has no row.
func (l *Lake) detailNumber(ctx context.Context, q string, none any, args ...any) (any, error) {
	var n int64
	err := l.db.Point.QueryRowContext(ctx, q, args...).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return none, nil
	}
	return n, err
}
