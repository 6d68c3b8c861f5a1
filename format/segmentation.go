package format

import (
	"cmp"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// segWriter writes class-index masks in the Pascal VOC segmentation layout
// (which CVAT's "Segmentation mask" format also uses): SegmentationClass/
// <uniqueName>.png, JPEGImages/, ImageSets/Segmentation/{train,val,test}.txt
// and labelmap.txt naming each index with its palette colour; augmented
// frames are listed in augmented/{train,val,test}.txt by stem.
//
// Mask values: 0 is background, label i is i+1. Up to 255 labels the mask is
// an 8-bit palette PNG with VOC's 256-colour map (so it reads as indices and
// looks right in a viewer); past that a 16-bit grayscale PNG.
//
// Boxes are rasterized by pixel centre: a pixel belongs to a box when its
// centre lies inside; polygons and masks paint their own pixels (a polygon
// as pycocotools' rleFrPoly draws it, rings read even-odd); keypoints,
// polylines and classes are not painted. Where boxes overlap the smaller box wins, since it is
// the more specific object (a person on a bus); equal areas go by label
// order, the later label on top, then by box order.
type segWriter struct {
	a         *archive
	lists     [3]*spool
	augmented *augmentedLists
	wide      bool // 16-bit masks
	pal       color.Palette
	pix       []byte
	order     []int
	enc       png.Encoder
}

// maxWriteMaskPixels bounds the one mask buffer held at a time (256 MB at 8 bits).
const maxWriteMaskPixels = 1 << 28

func newSegWriter(a *archive) (*segWriter, error) {
	aug, err := newAugmentedLists(a, vocSplits)
	if err != nil {
		return nil, err
	}
	s := &segWriter{a: a, wide: len(a.ds.Labels) > 255, augmented: aug}
	s.enc = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &onePool{}}
	s.pal = make(color.Palette, 256)
	for i := range s.pal {
		r, g, b := vocColor(i)
		s.pal[i] = color.RGBA{r, g, b, 255}
	}
	s.lists, err = a.splitSpools()
	return s, err
}

// vocColor is entry i of the Pascal VOC colour map: the bits of i spread
// over r, g and b from the high bit down.
func vocColor(i int) (r, g, b uint8) {
	for j := 0; j < 8; j++ {
		r |= uint8(i&1) << (7 - j)
		g |= uint8(i>>1&1) << (7 - j)
		b |= uint8(i>>2&1) << (7 - j)
		i >>= 3
	}
	return r, g, b
}

func (s *segWriter) frame(fr *Frame) error {
	if err := needSize(fr); err != nil {
		return err
	}
	if fr.Width*fr.Height > maxWriteMaskPixels {
		return fmt.Errorf("image of %dx%d is too large for a mask", fr.Width, fr.Height)
	}
	a, stem := s.a, baseName(fr.UniqueName)
	if a.media {
		if err := a.copyMedia("JPEGImages/"+mediaFile(fr), fr); err != nil {
			return err
		}
	}
	img := s.rasterize(fr)
	err := a.z.entry(a.path("SegmentationClass/"+stem+".png"), false, false, func(w io.Writer) error {
		return s.enc.Encode(w, img)
	})
	if err != nil {
		return err
	}
	if err := s.augmented.add(fr, stem, baseName(fr.DerivedFrom)); err != nil {
		return err
	}
	_, err = s.lists[splitIndex(fr.Split)].WriteString(stem + "\n")
	return err
}

// rasterize draws the frame's boxes into the reused mask buffer.
func (s *segWriter) rasterize(fr *Frame) image.Image {
	w, h, bpp := fr.Width, fr.Height, 1
	if s.wide {
		bpp = 2
	}
	n := w * h * bpp
	if cap(s.pix) < n {
		s.pix = make([]byte, n)
	}
	pix := s.pix[:n]
	clear(pix)
	s.order = s.order[:0]
	for i := range fr.Boxes {
		s.order = append(s.order, i)
	}
	area := func(b ExportBox) float64 {
		r, _ := clip(b, w, h)
		return (r.x1 - r.x0) * (r.y1 - r.y0)
	}
	slices.SortStableFunc(s.order, func(i, j int) int {
		bi, bj := fr.Boxes[i], fr.Boxes[j]
		if c := cmp.Compare(area(bj), area(bi)); c != 0 {
			return c // larger first, so smaller ones are drawn over them
		}
		return cmp.Compare(bi.ClassID, bj.ClassID)
	})
	for _, i := range s.order {
		b := fr.Boxes[i]
		r, ok := clip(b, w, h)
		if !ok || unpainted(b) {
			continue
		}
		v := b.ClassID + 1
		if m, ok := shapePixels(b, w, h); ok {
			paintRuns(pix, m, w, bpp, v)
			continue
		}
		x0, x1 := centreSpan(r.x0, r.x1, w)
		y0, y1 := centreSpan(r.y0, r.y1, h)
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				setPixel(pix, (y*w+x)*bpp, bpp, v)
			}
		}
	}
	rect := image.Rect(0, 0, w, h)
	if s.wide {
		return &image.Gray16{Pix: pix, Stride: 2 * w, Rect: rect}
	}
	return &image.Paletted{Pix: pix, Stride: w, Rect: rect, Palette: s.pal}
}

// unpainted: keypoints, polylines and classes cover no area of their own;
// painting their box would claim its background for the label.
func unpainted(b ExportBox) bool {
	return b.Type == shape.Keypoints || b.Type == shape.Polyline || b.Type == shape.Class
}

// shapePixels is the mask of a polygon (its rings' pixels, read even-odd)
// or of a mask annotation of the frame's size; ok is false for any other
// box, which is painted as its rectangle.
func shapePixels(b ExportBox, w, h int) (shape.RLE, bool) {
	switch {
	case b.Type == shape.Polygon:
		return shape.Rings(b.Polygon, h, w), true
	case b.Type == shape.Mask && b.Mask != nil:
		m, err := b.Mask.RLE()
		return m, err == nil && m.Width == w && m.Height == h
	}
	return shape.RLE{}, false
}

// paintRuns sets the mask's pixels (column-major runs) to v in the row-major
// buffer pix.
func paintRuns(pix []byte, m shape.RLE, w, bpp, v int) {
	pos := 0
	for i, c := range m.Counts {
		if i%2 == 1 {
			for p := pos; p < pos+int(c); p++ {
				x, y := p/m.Height, p%m.Height
				setPixel(pix, (y*w+x)*bpp, bpp, v)
			}
		}
		pos += int(c)
	}
}

func setPixel(pix []byte, at, bpp, v int) {
	if bpp == 1 {
		pix[at] = byte(v)
		return
	}
	pix[at], pix[at+1] = byte(v>>8), byte(v)
}

// centreSpan gives the pixels [i0, i1) whose centres i+0.5 fall in [lo, hi).
func centreSpan(lo, hi float64, n int) (int, int) {
	i0 := int(math.Ceil(lo - 0.5))
	i1 := int(math.Ceil(hi - 0.5))
	return max(0, min(i0, n)), max(0, min(i1, n))
}

func (s *segWriter) finish() error {
	a := s.a
	var lm strings.Builder
	lm.WriteString("# label:color_rgb:parts:actions\n")
	for i, l := range append([]string{"background"}, a.ds.Labels...) {
		r, g, b := vocColor(i)
		fmt.Fprintf(&lm, "%s:%d,%d,%d::\n", l, r, g, b)
	}
	if err := a.z.bytesEntry(a.path("labelmap.txt"), []byte(lm.String())); err != nil {
		return err
	}
	if err := s.augmented.finish(); err != nil {
		return err
	}
	return a.splitEntries("ImageSets/Segmentation/", vocSplits, s.lists)
}

// onePool keeps the PNG encoder's buffers from frame to frame.
type onePool struct{ b *png.EncoderBuffer }

func (p *onePool) Get() *png.EncoderBuffer  { return p.b }
func (p *onePool) Put(b *png.EncoderBuffer) { p.b = b }
