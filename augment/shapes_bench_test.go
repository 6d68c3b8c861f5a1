package augment

import (
	"math"
	"runtime"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// benchShapes are 20 polygons (40-vertex stars) and 5 masks (filled
// ellipses about 300 x 200 pixels) on a 1920 x 1080 frame; benchBoxes are
// their 25 boxes.
func benchShapes() (shapes, boxes []Box) {
	const w, h = 1920, 1080
	for i := range 20 {
		cx, cy := 100+float64(i%5)*400, 120+float64(i/5)*260
		ring := make([]float64, 0, 80)
		for k := range 40 {
			a := 2 * math.Pi * float64(k) / 40
			r := 60 + 25*float64(k%2)
			ring = append(ring, cx+r*math.Cos(a), cy+r*math.Sin(a))
		}
		s := Box{Label: "p", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{ring}}}
		bb := s.Bounds()
		s.X, s.Y, s.W, s.H = bb.X, bb.Y, bb.W, bb.H
		shapes = append(shapes, s)
	}
	for i := range 5 {
		cx, cy := 200+float64(i)*370, 300+float64(i%2)*400
		bits := make([]byte, w*h)
		for x := range w {
			for y := range h {
				dx, dy := (float64(x)-cx)/150, (float64(y)-cy)/100
				if dx*dx+dy*dy <= 1 {
					bits[x*h+y] = 1
				}
			}
		}
		r := shape.Encode(bits, h, w)
		s := Box{Label: "m", Geometry: shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{h, w}, Counts: r.String()}}}
		bb := r.Bounds()
		s.X, s.Y, s.W, s.H = bb.X, bb.Y, bb.W, bb.H
		shapes = append(shapes, s)
	}
	for _, s := range shapes {
		boxes = append(boxes, Box{Label: s.Label, X: s.X, Y: s.Y, W: s.W, H: s.H})
	}
	return shapes, boxes
}

// BenchmarkShapes is the two chains on a 1080p JPEG with 25 boxes
// and with the 20 polygons and 5 masks they are the boxes of, on one core:
// the difference is what moving the shapes costs beside the image work.
//
//	go test ./augment -bench Shapes -run '^$' -count 3
func BenchmarkShapes(b *testing.B) {
	data := benchJPEG(b)
	shapes, boxes := benchShapes()
	for _, ch := range benchChains {
		for _, in := range []struct {
			name  string
			boxes []Box
		}{{"boxes", boxes}, {"shapes", shapes}} {
			b.Run(ch.name+"/"+in.name, func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				opt := Options{Buffer: make([]byte, 0, 4<<20)}
				for b.Loop() {
					out, err := ApplySteps(b.Context(), data, in.boxes, ch.steps, opt)
					if err != nil || len(out.Boxes) == 0 {
						b.Fatal(err, len(out.Boxes))
					}
				}
			})
		}
	}
}

// BenchmarkShapeMoves is the shapes' part of BenchmarkShapes alone: the
// same steps applied to the 20 polygons and 5 masks with no image, so the
// cost of shapes can be set against the image work on a busy machine.
//
//	go test ./augment -bench ShapeMoves -run '^$' -count 3
func BenchmarkShapeMoves(b *testing.B) {
	shapes, _ := benchShapes()
	for _, ch := range benchChains {
		b.Run(ch.name, func(b *testing.B) {
			for b.Loop() {
				c, err := newChain(shapes, 1920, 1080, Options{})
				if err != nil {
					b.Fatal(err)
				}
				w, h := 1920, 1080
				for _, st := range ch.steps {
					switch st.Type {
					case FlipImage:
						moveFlip(c.boxes, st.Property == FlipVertical, w, h)
					case ImageRotation:
						moveAffine(c.boxes, rotation(st.Value, w, h))
						c.boxes = clip(c.boxes, w, h, c.minVisible)
					case Crop:
						r := cropRect(w, h, st.Value, st.X, st.Y)
						c.cropBoxes(r)
						w, h = r.W, r.H
					}
				}
				if out := c.output("jpeg", w, h, ch.steps, nil); len(out.Boxes) == 0 {
					b.Fatal("no shapes left")
				}
			}
		})
	}
}
