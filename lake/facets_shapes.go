package lake

import (
	"context"

	"github.com/framelake/framelake/lake/query"
)

// ShapeTypes are the annotation types in the order counts list them
// (docs/shapes.md).
var ShapeTypes = []string{"box", "polygon", "mask", "keypoints", "polyline", "class"}

// ShapeCount is how many annotations of one type the selected files have,
// and how many of those files have one.
type ShapeCount struct {
	Type        string `json:"type"`
	Annotations int    `json:"annotations"`
	Files       int    `json:"files"`
}

// ShapeCounts counts the annotations of the files sel selects by type, every
// type of ShapeTypes listed (0 when none). A selection of every file reads
// the counts triggers keep (lake migration 012); any other reads each
// selected file's annotations, or those of its newest FacetSample files,
// scaled, when it has more (see facetSource), as the label counts do.
func (l *Lake) ShapeCounts(ctx context.Context, sel Selection) ([]ShapeCount, Estimate, error) {
	_, all, err := l.fileSelection(ctx, sel)
	if err != nil {
		return nil, Estimate{}, err
	}
	q, args, ff := `SELECT type, annotations, files FROM shape_counts`, []any(nil), facetFiles{}
	if !all {
		if ff, err = l.facetSource(ctx, sel); err != nil {
			return nil, Estimate{}, err
		}
		q = `SELECT s.type, count(*), count(DISTINCT s.file_seq) FROM ` + ff.from +
			` JOIN annotation s ON s.file_seq = f.seq WHERE ` + ff.where + ` GROUP BY s.type`
		args = ff.args
	}
	byType, err := l.shapeRows(ctx, q, args)
	if err != nil {
		return nil, Estimate{}, err
	}
	out := make([]ShapeCount, len(ShapeTypes))
	for i, t := range ShapeTypes {
		c := byType[t]
		out[i] = ShapeCount{Type: t, Annotations: ff.scaled(c.Annotations), Files: ff.scaled(c.Files)}
	}
	return out, ff.estimate(), nil
}

// shapeRows runs q, which yields (type, annotations, files) rows.
func (l *Lake) shapeRows(ctx context.Context, q string, args []any) (map[string]ShapeCount, error) {
	release, err := l.db.Turn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := l.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ShapeCount{}
	for rows.Next() {
		var c ShapeCount
		if err := rows.Scan(&c.Type, &c.Annotations, &c.Files); err != nil {
			return nil, err
		}
		out[c.Type] = c
	}
	return out, rows.Err()
}

// ShapeClause is the query clause that selects files with an annotation of
// type t.
func ShapeClause(t string) string {
	return "annotation.type = " + query.Value{Text: t}.String()
}
