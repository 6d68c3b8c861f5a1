package shape

import (
	"fmt"
	"math"
	"slices"
)

// reach is how far past the image a point may lie, in image sizes: as for
// boxes, a shape may cross the edge, but one a whole image beyond it is
// garbage that exports would carry as absurd coordinates.
const reach = 1.0

// CheckPoints checks a flat x1, y1, x2, y2, ... list of at least min points
// on a width×height image (0 when unknown): finite, paired, within reach.
func CheckPoints(xy []float64, minPoints, width, height int) error {
	if len(xy)%2 != 0 {
		return fmt.Errorf("has %d numbers; points are x, y pairs", len(xy))
	}
	if len(xy)/2 < minPoints {
		return fmt.Errorf("has %d points; it needs at least %d", len(xy)/2, minPoints)
	}
	for i := 0; i < len(xy); i += 2 {
		if err := checkPoint(xy[i], xy[i+1], width, height); err != nil {
			return fmt.Errorf("point %d %w", i/2, err)
		}
	}
	return nil
}

func checkPoint(x, y float64, width, height int) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("is not finite (%g, %g)", x, y)
	}
	if width <= 0 || height <= 0 {
		return nil
	}
	w, h := float64(width), float64(height)
	if x < -reach*w || y < -reach*h || x > (1+reach)*w || y > (1+reach)*h {
		return fmt.Errorf("(%g, %g) lies more than the image's size outside the %dx%d image", x, y, width, height)
	}
	return nil
}

// CheckPolygon checks a polygon's rings: at least one, each of at least 3
// points. Self-intersecting rings are allowed, as COCO, CVAT and labelme
// allow them; their inside is read even-odd.
func CheckPolygon(rings [][]float64, width, height int) error {
	if len(rings) == 0 {
		return fmt.Errorf("polygon has no ring")
	}
	for i, r := range rings {
		if err := CheckPoints(r, 3, width, height); err != nil {
			return fmt.Errorf("polygon ring %d %w", i, err)
		}
	}
	return nil
}

// CheckKeypoints checks named points: each name given once and, when names
// is not empty (the label declares its points), one of names; visibility
// 0, 1 or 2; labelled points (visibility above 0) finite and within reach.
func CheckKeypoints(kps []Keypoint, names []string, width, height int) error {
	if len(kps) == 0 {
		return fmt.Errorf("keypoints has no point")
	}
	seen := make(map[string]bool, len(kps))
	for i, k := range kps {
		switch {
		case k.Name == "":
			return fmt.Errorf("keypoint %d has no name", i)
		case seen[k.Name]:
			return fmt.Errorf("keypoint %q is given twice", k.Name)
		case len(names) > 0 && !slices.Contains(names, k.Name):
			return fmt.Errorf("keypoint %q is not a point of the label (%v)", k.Name, names)
		case k.V < 0 || k.V > 2:
			return fmt.Errorf("keypoint %q has visibility %d; use 0 (not labelled), 1 (hidden) or 2 (visible)", k.Name, k.V)
		}
		seen[k.Name] = true
		if k.V > 0 {
			if err := checkPoint(k.X, k.Y, width, height); err != nil {
				return fmt.Errorf("keypoint %q %w", k.Name, err)
			}
		}
	}
	return nil
}

// PointsBounds is the box around a flat point list.
func PointsBounds(xy []float64) Rect {
	if len(xy) < 2 {
		return Rect{}
	}
	x0, y0, x1, y1 := xy[0], xy[1], xy[0], xy[1]
	for i := 2; i+1 < len(xy); i += 2 {
		x0, x1 = min(x0, xy[i]), max(x1, xy[i])
		y0, y1 = min(y0, xy[i+1]), max(y1, xy[i+1])
	}
	return Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

// KeypointsBounds is the box around the labelled points (visibility above 0).
func KeypointsBounds(kps []Keypoint) Rect {
	xy := make([]float64, 0, 2*len(kps))
	for _, k := range kps {
		if k.V > 0 {
			xy = append(xy, k.X, k.Y)
		}
	}
	return PointsBounds(xy)
}

// Visible counts the keypoints labelled visible (v = 2).
func Visible(kps []Keypoint) int {
	n := 0
	for _, k := range kps {
		if k.V == 2 {
			n++
		}
	}
	return n
}

// Labelled counts the keypoints labelled at all (v above 0), COCO's num_keypoints.
func Labelled(kps []Keypoint) int {
	n := 0
	for _, k := range kps {
		if k.V > 0 {
			n++
		}
	}
	return n
}
