package lake

import (
	"database/sql"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// shapeRow is what the annotation table keeps of a shape beside the box:
// its type, its geometry as JSON (NULL for boxes and classes), its vertex
// count (labelled points for keypoints) and its visible keypoints, for the
// query language.
type shapeRow struct {
	typ      shape.Type
	geometry sql.NullString
	points   sql.NullInt64
	visible  sql.NullInt64
}

// minSize is the smallest side a derived box has: the table stores no
// empty box, so a horizontal line's box is this tall.
const minSize = 1e-6

// settle checks b's shape on a width×height frame (0 when unknown),
// derives its box and area, and returns what the table stores besides.
// field names the annotation in errors. Boxes are checked as CheckBox does.
// keepBox keeps a box b gives with its shape (an import's: COCO's bbox,
// which pycocotools' box evaluation reads), where a client's is ignored.
func (b *Box) settle(field string, width, height int, keepBox bool) (shapeRow, error) {
	given := shape.Rect{X: b.X, Y: b.Y, W: b.W, H: b.H}
	t, err := shape.ParseType(string(b.Type))
	if err != nil {
		return shapeRow{}, errs.Invalid(field, "%s: %v", field, err)
	}
	b.Type = t
	if err := b.onlyItsField(field); err != nil {
		return shapeRow{}, err
	}
	row := shapeRow{typ: t}
	b.roundGeometry()
	if t == shape.Box {
		b.Area = nil
		return row, checkBox(field, *b, width, height)
	}
	if err := b.Geometry.Check(width, height); err != nil {
		return shapeRow{}, errs.Invalid(field, "%s: %v", field, err)
	}
	box := b.Geometry.Bounds()
	switch t {
	case shape.Class:
		// A class names the whole frame: its box is the frame.
		b.X, b.Y, b.W, b.H, b.Area = 0, 0, float64(max(width, 1)), float64(max(height, 1)), nil
	case shape.Polygon:
		area := box.W * box.H
		switch {
		case keepBox && b.Area != nil && *b.Area > 0:
			area = *b.Area // an import's file gave it (withImportArea)
		case width > 0 && height > 0:
			area = float64(shape.Rings(b.Polygon, height, width).Area())
		}
		b.setBox(box, area)
		row.points = sql.NullInt64{Int64: int64(polygonPoints(b.Polygon)), Valid: true}
		row.geometry = ringsJSON(b.Polygon)
	case shape.Polyline:
		b.setBox(box, 0)
		b.Area = nil // a line has no area
		row.points = sql.NullInt64{Int64: int64(len(b.Points) / 2), Valid: true}
		row.geometry = sql.NullString{String: string(appendNumbers(make([]byte, 0, 2+12*len(b.Points)), b.Points)), Valid: true}
	case shape.Keypoints:
		b.setBox(box, box.W*box.H)
		row.points = sql.NullInt64{Int64: int64(shape.Labelled(b.Keypoints)), Valid: true}
		row.visible = sql.NullInt64{Int64: int64(shape.Visible(b.Keypoints)), Valid: true}
		row.geometry, err = geometryJSON(b.Keypoints)
	case shape.Mask:
		r, _ := b.Mask.RLE()       // Check read it
		b.Mask.Counts = r.String() // canonical: a list of counts arrives as a string
		b.setBox(box, float64(r.Area()))
		row.geometry, err = geometryJSON(b.Mask)
	}
	if err != nil {
		return shapeRow{}, err
	}
	if keepBox && t != shape.Class && given.W > 0 && given.H > 0 {
		b.X, b.Y, b.W, b.H = given.X, given.Y, given.W, given.H
		if err := checkBox(field, *b, width, height); err != nil {
			return shapeRow{}, err
		}
	}
	return row, checkLabelConfidence(field, *b)
}

// onlyItsField refuses a shape that carries another type's geometry, which
// would otherwise be dropped without a word.
func (b *Box) onlyItsField(field string) error {
	given := []struct {
		t   shape.Type
		set bool
	}{{shape.Polygon, b.Polygon != nil}, {shape.Mask, b.Mask != nil}, {shape.Keypoints, b.Keypoints != nil},
		{shape.Polyline, b.Points != nil}}
	own := false
	for _, g := range given {
		if g.set && g.t != b.Type {
			return errs.Invalid(field, "%s: a %s has no %s field; set type to %s", field, b.Type, geometryField(g.t), g.t)
		}
		own = own || g.set
	}
	if !own && b.Type != shape.Box && b.Type != shape.Class {
		return errs.Invalid(field, "%s: a %s needs its %s field", field, b.Type, geometryField(b.Type))
	}
	return nil
}

// polygonPoints counts a polygon's vertices over all its rings.
func polygonPoints(rings [][]float64) int {
	n := 0
	for _, r := range rings {
		n += len(r) / 2
	}
	return n
}

func geometryField(t shape.Type) string {
	if t == shape.Polyline {
		return "points"
	}
	return string(t)
}

// roundGeometry rounds the shape's coordinates to CoordDecimals, as box
// coordinates are (RoundCoord), in copies: the caller's slices stay as given.
func (b *Box) roundGeometry() {
	round := func(xy []float64) []float64 {
		out := make([]float64, len(xy))
		for i, v := range xy {
			out[i] = RoundCoord(v)
		}
		return out
	}
	if b.Polygon != nil {
		rings := make([][]float64, len(b.Polygon))
		for i, r := range b.Polygon {
			rings[i] = round(r)
		}
		b.Polygon = rings
	}
	if b.Points != nil {
		b.Points = round(b.Points)
	}
	if b.Keypoints != nil {
		kps := slices.Clone(b.Keypoints)
		for i := range kps {
			kps[i].X, kps[i].Y = RoundCoord(kps[i].X), RoundCoord(kps[i].Y)
		}
		b.Keypoints = kps
	}
}

// setBox makes box (rounded, each side at least minSize) b's box and area its area.
func (b *Box) setBox(box shape.Rect, area float64) {
	b.X, b.Y, b.W, b.H = box.X, box.Y, max(box.W, minSize), max(box.H, minSize)
	b.roundCoords()
	b.Area = &area
}

// ringsJSON is json.Marshal's text of rings, written without reflection
// (a fifth of a segmented import's writing was Marshal's). Coordinates are
// finite: Check refused the others.
func ringsJSON(rings [][]float64) sql.NullString {
	n := 2
	for _, r := range rings {
		n += 3 + 12*len(r)
	}
	b := append(make([]byte, 0, n), '[')
	for i, r := range rings {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNumbers(b, r)
	}
	return sql.NullString{String: string(append(b, ']')), Valid: true}
}

// appendNumbers appends xs as a JSON array.
func appendNumbers(b []byte, xs []float64) []byte {
	b = append(b, '[')
	for i, v := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONFloat(b, v)
	}
	return append(b, ']')
}

// appendJSONFloat appends v as encoding/json writes a float64: the shortest
// decimal, in exponent form below 1e-6 and from 1e21, with a one-digit
// exponent not padded (1e-7, not 1e-07).
func appendJSONFloat(b []byte, v float64) []byte {
	if out, ok := appendCoord(b, v); ok {
		return out
	}
	abs, format := math.Abs(v), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendCoord appends a coordinate RoundCoord has rounded (k/1e6 for an
// integer k, under 1e9 in size) as its decimal digits, without strconv's
// shortest-digit search (most of a segmented import's polygon writing):
// such a value is the float64 nearest a decimal of at most 15 significant
// digits, and strconv's shortest text of it is that decimal, trailing
// zeros dropped. ok is false for any other value (and for -0, which
// strconv writes "-0"), left to the caller.
func appendCoord(b []byte, v float64) ([]byte, bool) {
	if !(math.Abs(v) < 1e9) || v == 0 && math.Signbit(v) {
		return b, false
	}
	k := math.Round(v * 1e6)
	if k/1e6 != v {
		return b, false
	}
	n := uint64(math.Abs(k))
	var buf [20]byte // sign, 9 digits, point, 6 decimals
	i := len(buf)
	if frac := n % 1e6; frac != 0 {
		// The decimals without their trailing zeros, most often two.
		digits := 6
		switch {
		case frac%1e4 == 0:
			frac, digits = frac/1e4, 2
		case frac%100 == 0:
			frac, digits = frac/100, 4
		}
		if frac%10 == 0 {
			frac, digits = frac/10, digits-1
		}
		for ; digits >= 2; digits -= 2 {
			i -= 2
			copy(buf[i:], pairs[2*(frac%100):2*(frac%100)+2])
			frac /= 100
		}
		if digits == 1 {
			i--
			buf[i] = byte('0' + frac)
		}
		i--
		buf[i] = '.'
	}
	whole := n / 1e6
	for whole >= 100 {
		i -= 2
		copy(buf[i:], pairs[2*(whole%100):2*(whole%100)+2])
		whole /= 100
	}
	if whole >= 10 {
		i -= 2
		copy(buf[i:], pairs[2*whole:2*whole+2])
	} else {
		i--
		buf[i] = byte('0' + whole)
	}
	if k < 0 {
		i--
		buf[i] = '-'
	}
	return append(b, buf[i:]...), true
}

// pairs is 00 to 99, two digits each, written two at a time.
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

func geometryJSON(v any) (sql.NullString, error) {
	j, err := json.Marshal(v)
	return sql.NullString{String: string(j), Valid: true}, err
}

// loadShape fills b's shape from the table's type and geometry columns.
func (b *Box) loadShape(typ string, geometry sql.NullString, area sql.NullFloat64) error {
	b.Type = shape.Type(typ)
	if area.Valid && b.Type != shape.Box && b.Type != shape.Class {
		a := area.Float64
		b.Area = &a
	}
	if !geometry.Valid {
		return nil
	}
	g := []byte(geometry.String)
	switch b.Type {
	case shape.Polygon:
		return json.Unmarshal(g, &b.Polygon)
	case shape.Polyline:
		return json.Unmarshal(g, &b.Points)
	case shape.Keypoints:
		return json.Unmarshal(g, &b.Keypoints)
	case shape.Mask:
		b.Mask = &shape.EncodedMask{}
		return json.Unmarshal(g, b.Mask)
	}
	return nil
}

// shapeArea is the area an import stores: COCO's when its file gave one
// (given > 0), else the shape's; 0 for a box without one.
func shapeArea(given float64, derived *float64) float64 {
	if given > 0 || derived == nil {
		return given
	}
	return *derived
}
