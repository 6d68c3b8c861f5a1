package format

import (
	"cmp"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"slices"

	"github.com/framelake/framelake/lake/shape"
)

// Pascal VOC's segmentation files, beside the XML of each frame that has a
// polygon or a mask (a "segmented" frame, <segmented>1</segmented>):
//
//	SegmentationClass/<stem>.png   class index: label i is i+1, 0 background
//	SegmentationObject/<stem>.png  object index: the object's number in the XML's order
//	ImageSets/Segmentation/{train,val,trainval,test}.txt   the segmented frames
//
// Both are 8-bit palette PNGs with VOC's colour map, where 255 is void
// (VOC's "ignore"): the box of an object that has no segment (a box,
// keypoints, a polyline) is painted 255 first, as its pixels are not known
// to be background, then the segments over it, larger first, so a smaller
// object on a larger one shows. Objects past the 254th and labels past the
// 254th are left out of the PNGs (their index would be void). Frames with
// no segment have no PNGs and are not listed, as in VOC. vocVoid (255) is
// the reader's, in vocmask.go.

// vocSegmented says whether a frame has a segment to write.
func vocSegmented(fr *Frame) bool {
	for _, b := range fr.Boxes {
		if isSegment(b) {
			return true
		}
	}
	return false
}

func isSegment(b ExportBox) bool {
	return b.Type == shape.Polygon || b.Type == shape.Mask && b.Mask != nil
}

// vocSegPNGs writes the frame's two PNGs; objects are numbered as the XML
// lists them (the boxes vocCorners keeps).
func (v *vocWriter) vocSegPNGs(fr *Frame, stem string) error {
	if err := needSize(fr); err != nil {
		return err
	}
	w, h := fr.Width, fr.Height
	if w*h > maxWriteMaskPixels {
		return fmt.Errorf("image of %dx%d is too large for a mask", w, h)
	}
	type obj struct {
		b    ExportBox
		n    int // 1-based number in the XML
		m    shape.RLE
		area int
	}
	var voids, segs []obj
	n := 0
	for _, b := range fr.Boxes {
		if _, ok := vocCorners(b, w, h); !ok {
			continue
		}
		n++
		if !isSegment(b) {
			if b.Type != shape.Class {
				voids = append(voids, obj{b: b, n: n})
			}
			continue
		}
		if m, ok := shapePixels(b, w, h); ok {
			segs = append(segs, obj{b: b, n: n, m: m, area: m.Area()})
		}
	}
	slices.SortStableFunc(segs, func(a, b obj) int { return cmp.Compare(b.area, a.area) })
	class, object := make([]byte, w*h), make([]byte, w*h)
	for _, o := range voids {
		r, _ := clip(o.b, w, h)
		x0, x1 := centreSpan(r.x0, r.x1, w)
		y0, y1 := centreSpan(r.y0, r.y1, h)
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				class[y*w+x], object[y*w+x] = vocVoid, vocVoid
			}
		}
	}
	for _, o := range segs {
		if o.b.ClassID+1 < vocVoid {
			paintRuns(class, o.m, w, 1, o.b.ClassID+1)
		}
		if o.n < vocVoid {
			paintRuns(object, o.m, w, 1, o.n)
		}
	}
	for _, e := range []struct {
		dir string
		pix []byte
	}{{"SegmentationClass/", class}, {"SegmentationObject/", object}} {
		img := &image.Paletted{Pix: e.pix, Stride: w, Rect: image.Rect(0, 0, w, h), Palette: v.pal}
		err := v.a.z.entry(v.a.path(vocRoot+e.dir+stem+".png"), false, false, func(out io.Writer) error {
			return v.enc.Encode(out, img)
		})
		if err != nil {
			return err
		}
	}
	_, err := v.seg[splitIndex(fr.Split)].WriteString(stem + "\n")
	return err
}

// vocPalette is VOC's 256-colour map (255, void, is 224 224 192).
func vocPalette() color.Palette {
	pal := make(color.Palette, 256)
	for i := range pal {
		r, g, b := vocColor(i)
		pal[i] = color.RGBA{r, g, b, 255}
	}
	return pal
}

func newPNGEncoder() png.Encoder {
	return png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &onePool{}}
}
