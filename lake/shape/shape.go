// Package shape is the geometry of annotations beyond boxes: polygons, masks
// as COCO's run-length encoding, keypoints and polylines. It rasterises,
// measures and compares them, and checks that they are well formed; it
// knows nothing of SQL or HTTP (lake stores the shapes, evaluate and augment
// read them).
//
// Masks follow COCO exactly, because evaluation must equal pycocotools':
//
//   - An RLE holds a Height×Width binary image in column-major order as
//     alternating run lengths, the first a run of zeros (possibly empty).
//   - FromRing rasterises one ring as pycocotools' rleFrPoly does (the
//     outline upsampled by 5, the same rounding), so a COCO polygon becomes
//     the same pixels here as there.
//   - IoU is rleIou: a pair whose boxes do not overlap is 0 without a walk;
//     for a crowd ground truth the union is the detection's area.
//   - String and ParseString are rleToString and rleFrString (6 bits a
//     character, counts as differences from the count two before), the
//     compact form COCO's files carry and the lake stores.
//
// A polygon has one or more rings. framelake reads them even-odd: a pixel is
// inside when it is inside an odd number of rings, so a ring inside another
// is a hole and rings apart are parts (Rings). COCO's reading is the union of
// the rings (pycocotools merges them); where rings do not overlap the two
// are the same pixels, and RingsOverlap says when they are not.
package shape

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Type is what kind of shape an annotation is.
type Type string

const (
	Box       Type = "box"
	Polygon   Type = "polygon"
	Mask      Type = "mask"
	Keypoints Type = "keypoints"
	Polyline  Type = "polyline"
	Class     Type = "class"
)

// Types lists every type in the order documentation shows them.
var Types = []Type{Box, Polygon, Mask, Keypoints, Polyline, Class}

// ParseType checks a type name; "" is a box, as clients that predate shapes send it.
func ParseType(s string) (Type, error) {
	if s == "" {
		return Box, nil
	}
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown shape type %q: use one of box, polygon, mask, keypoints, polyline, class", s)
}

// CountsText says how many shapes of each type n holds, the most first
// ("polygon 10, box 2"), as import summaries and dataset versions say it.
func CountsText(n map[string]int) string {
	types := slices.SortedFunc(maps.Keys(n), func(a, b string) int { return cmp.Or(n[b]-n[a], strings.Compare(a, b)) })
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s %d", t, n[t])
	}
	return strings.Join(parts, ", ")
}

// RLE is a binary mask of Height×Width pixels in column-major order, as
// alternating run lengths starting with a run of zeros.
type RLE struct {
	Height, Width int
	Counts        []uint32
}

// Keypoint is one named point with COCO's visibility: 0 not labelled (its
// coordinates mean nothing), 1 labelled but not visible, 2 visible.
type Keypoint struct {
	Name string  `json:"name"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	V    int     `json:"v"`
}

// Rect is an axis-aligned box: (X, Y) its top-left corner, W and H its size.
type Rect struct{ X, Y, W, H float64 }
