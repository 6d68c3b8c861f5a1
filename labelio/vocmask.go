package labelio

import (
	"fmt"
	"image"
	"image/png"
	"os"

	"github.com/framelake/framelake/lake/shape"
)

// vocVoid is the index VOC's segmentation PNGs give object borders and
// regions nobody labelled: no object's pixels.
const vocVoid = 255

// vocMasks gives each box of it the mask SegmentationObject/<stem>.png
// (rel) draws for its object, when the tree has that file: VOC numbers an
// image's objects from 1 in the order of its XML, and the PNG's pixels of
// index k are object k's (objects[i] is box i's number). A box whose object
// has no pixel keeps its box alone; a PNG that does not read, or is not the
// image's size, is a problem and leaves every box as it was.
func (rd *reader) vocMasks(it *Item, objects []int, rel string) {
	f, err := os.Open(rd.tree.abs(rel))
	if err != nil {
		return // no instance masks for this image
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		rd.rep.add(Malformed, rel, 0, "not a PNG: %v; the boxes are imported without masks", err)
		return
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if it.Width > 0 && it.Height > 0 && (w != it.Width || h != it.Height) {
		rd.rep.add(Malformed, rel, 0, "%dx%d, not the image's %dx%d; the boxes are imported without masks", w, h, it.Width, it.Height)
		return
	}
	index, err := paletteIndex(img)
	if err != nil {
		rd.rep.add(Malformed, rel, 0, "%v; the boxes are imported without masks", err)
		return
	}
	bits := map[int][]byte{}
	for x := range w {
		for y := range h {
			k := index(b.Min.X+x, b.Min.Y+y)
			if k == 0 || k == vocVoid {
				continue
			}
			if bits[k] == nil {
				bits[k] = make([]byte, w*h)
			}
			bits[k][x*h+y] = 1 // column-major, as COCO's RLE
		}
	}
	for i, k := range objects {
		if bits[k] == nil {
			continue
		}
		r := shape.Encode(bits[k], h, w)
		it.Boxes[i].Geometry = shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{h, w}, Counts: r.String()}}
	}
}

// paletteIndex reads a segmentation PNG's pixel as its index: the palette
// index of a palette PNG (VOC's), or the grey level of a greyscale one.
func paletteIndex(img image.Image) (func(x, y int) int, error) {
	switch m := img.(type) {
	case *image.Paletted:
		return func(x, y int) int { return int(m.ColorIndexAt(x, y)) }, nil
	case *image.Gray:
		return func(x, y int) int { return int(m.GrayAt(x, y).Y) }, nil
	}
	return nil, fmt.Errorf("a %T PNG, not a palette or greyscale one", img)
}
