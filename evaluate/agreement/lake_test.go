package agreement

import (
	"fmt"
	"testing"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// TestFromLakeToLake reads a frame's answers from lake shapes (a class, a
// box, a polygon's pixels; another operation's shapes left out) and writes
// their consensus back as lake shapes: the polygon both drew as a mask.
func TestFromLakeToLake(t *testing.T) {
	ring := [][]float64{{2, 2, 12, 2, 12, 12, 2, 12}}
	boxes := []lake.Box{
		{Operation: "p", Label: "car", X: 20, Y: 20, W: 10, H: 10},
		{Operation: "p", Label: "road", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: ring}, X: 2, Y: 2, W: 10, H: 10},
		{Operation: "p", Label: "day", Geometry: shape.Geometry{Type: shape.Class}},
		{Operation: "p/copy1", Label: "car", X: 21, Y: 20, W: 10, H: 10},
		{Operation: "p/copy1", Label: "road", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: ring}, X: 2, Y: 2, W: 10, H: 10},
		{Operation: "p/copy1", Label: "night", Geometry: shape.Geometry{Type: shape.Class}},
		{Operation: "model", Label: "car", X: 50, Y: 20, W: 10, H: 10},
	}
	f, err := FromLake("f.jpg", 40, 30, map[string]string{"p": "ana", "p/copy1": "ben"}, []string{"p", "p/copy1"}, boxes)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Shapes) != 4 || f.Classes["ana"] != "day" || f.Classes["ben"] != "night" || f.Shapes[1].Mask == nil ||
		f.Shapes[1].Mask.Area() != 100 || fmt.Sprint(f.Annotators) != "[ana ben]" {
		t.Fatalf("frame: %+v", f)
	}
	shapes, class, err := Consensus(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := ToLake(shapes, class)
	var got []string
	for _, b := range out {
		got = append(got, fmt.Sprintf("%s %s %g,%g %gx%g mask:%v", b.Label, b.Type, b.X, b.Y, b.W, b.H, b.Mask != nil))
	}
	// Two annotators: a shape stays where both drew it; no class has a majority.
	want := "[car  20.5,20 10x10 mask:false road mask 2,2 10x10 mask:true]"
	if class != "" || fmt.Sprint(got) != want {
		t.Fatalf("consensus %q class %q, want %s", got, class, want)
	}
}

// BenchmarkAgreementFromLake10k is BenchmarkAgreement10k from lake shapes,
// as GET /projects/{id}/agreement measures them once read: 10,000 frames
// of two answers of 8 boxes each (3 labels), converted and measured.
func BenchmarkAgreementFromLake10k(b *testing.B) {
	answers, order := map[string]string{"p": "a", "p/copy1": "b"}, []string{"p", "p/copy1"}
	frames := make([][]lake.Box, 10000)
	for i := range frames {
		for j := range 8 {
			x := float64(j * 30)
			label := []string{"car", "person", "bike"}[j%3]
			frames[i] = append(frames[i], lake.Box{Operation: "p", Label: label, X: x, Y: 10, W: 25, H: 25},
				lake.Box{Operation: "p/copy1", Label: label, X: x + float64(i%5), Y: 12, W: 25, H: 25})
		}
	}
	for b.Loop() {
		fs := make([]Frame, 0, len(frames))
		for i, boxes := range frames {
			f, err := FromLake(fmt.Sprint(i), 320, 240, answers, order, boxes)
			if err != nil {
				b.Fatal(err)
			}
			fs = append(fs, f)
		}
		if _, err := Measure(fs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
