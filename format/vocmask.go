package format

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// vocVoid is the index VOC's segmentation PNGs give object borders and
// regions nobody labelled: no object's pixels.
const vocVoid = 255

// maxMaskPixels bounds a mask's image, the lake's default MaxPixels: a
// segmentation PNG or brush claiming more cannot belong to an image the
// lake takes, and is refused before it is decoded.
const maxMaskPixels = 100_000_000

// vocClassNames are VOC 2012's classes by their index in SegmentationClass
// PNGs, 0 the background.
var vocClassNames = []string{"background", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat",
	"chair", "cow", "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"}

// vocMasks gives each box of it the mask SegmentationObject/<stem>.png
// (rel) draws for its object, when the tree has that file: VOC numbers an
// image's objects from 1 in the order of its XML, and the PNG's pixels of
// index k are object k's (objects[i] is box i's number). A box whose object
// has no pixel keeps its box alone; a PNG that does not read, or is not the
// image's size, is a problem and leaves every box as it was.
func (rd *reader) vocMasks(it *Item, objects []int, rel string) {
	if !rd.tree.files[rel] {
		return // no instance masks for this image
	}
	idx, err := rd.indexPNG(rel, it.Width, it.Height)
	if err != nil {
		rd.rep.add(Malformed, rel, 0, "%v; the boxes are imported without masks", err)
		return
	}
	runs := idx.runs(nil)
	for i, k := range objects {
		if r := runs[k]; r != nil {
			it.Boxes[i].Geometry = shape.Geometry{Type: shape.Mask, Mask: r.mask(idx.w, idx.h)}
		}
	}
}

// indexed is a decoded segmentation PNG: each pixel's index.
type indexed struct {
	w, h int
	at   func(x, y int) int
}

// indexPNG decodes a segmentation PNG of the tree, checking its size
// against the image's (0 when unknown) and the pixel bound before decoding.
func (rd *reader) indexPNG(rel string, width, height int) (*indexed, error) {
	f, err := os.Open(rd.tree.abs(rel))
	if err != nil {
		return nil, relErr(err, rel)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		return nil, fmt.Errorf("not a PNG: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxMaskPixels/cfg.Height {
		return nil, fmt.Errorf("%dx%d: over %d pixels", cfg.Width, cfg.Height, maxMaskPixels)
	}
	if width > 0 && height > 0 && (cfg.Width != width || cfg.Height != height) {
		return nil, fmt.Errorf("%dx%d, not the image's %dx%d", cfg.Width, cfg.Height, width, height)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, relErr(err, rel)
	}
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("not a PNG: %v", err)
	}
	at, err := paletteIndex(img)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	return &indexed{w: b.Dx(), h: b.Dy(), at: func(x, y int) int { return at(b.Min.X+x, b.Min.Y+y) }}, nil
}

// runs walks the PNG column by column, as COCO's RLE runs, and gives each
// index but 0 and the void its mask's runs, without a bitmap per index.
// When other is given (the class PNG beside an object PNG), it also counts
// for each index the other PNG's indices under it.
func (p *indexed) runs(other *indexed) map[int]*maskRuns {
	out := map[int]*maskRuns{}
	pos := 0
	for x := range p.w {
		for y := range p.h {
			k := p.at(x, y)
			if k != 0 && k != vocVoid {
				r := out[k]
				if r == nil {
					r = &maskRuns{under: map[int]int{}}
					out[k] = r
				}
				r.add(pos)
				if other != nil {
					r.under[other.at(x, y)]++
				}
			}
			pos++
		}
	}
	return out
}

// maskRuns builds a column-major RLE one set pixel at a time, in order.
type maskRuns struct {
	counts []uint32
	end    int         // the position after the last set run
	under  map[int]int // the other PNG's indices under these pixels
}

func (m *maskRuns) add(pos int) {
	if n := len(m.counts); n > 0 && m.end == pos {
		m.counts[n-1]++
	} else {
		m.counts = append(m.counts, uint32(pos-m.end), 1)
	}
	m.end = pos + 1
}

func (m *maskRuns) mask(w, h int) *shape.EncodedMask {
	counts := append(slices.Clone(m.counts), uint32(w*h-m.end))
	r := shape.RLE{Height: h, Width: w, Counts: counts}
	return &shape.EncodedMask{Size: [2]int{h, w}, Counts: r.String()}
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
	return nil, fmt.Errorf("a %T PNG, not a palette or greyscale one (an RGB class PNG, as CVAT writes, is not read)", img)
}

// vocSegDirs are the folders of class and object PNGs: VOC's names, and
// labelme2voc's (which keeps SegmentationClass for .npy arrays).
var vocSegDirs = map[string]string{"SegmentationClass": "class", "SegmentationClassPNG": "class",
	"SegmentationObject": "object", "SegmentationObjectPNG": "object"}

// vocSegOnly finds the class PNGs of a VOC tree, "" when it has none: the
// first in a SegmentationClass or SegmentationClassPNG folder.
func vocSegOnly(t *tree) string {
	for _, img := range t.images {
		if strings.EqualFold(path.Ext(img), ".png") && vocSegDirs[path.Base(pathDir(img))] == "class" {
			return img
		}
	}
	return ""
}

// vocSegmentation reads the images that have a class PNG and no XML
// (done: "<root>/<stem>" of those read from XML). Without instances, each
// class present in <root>/SegmentationClass/<stem>.png is one mask (no
// instances: one mask per class); with an object PNG beside it (VOC's
// SegmentationObject, labelme2voc's SegmentationObjectPNG), each object is
// a mask labelled by the class most of its pixels have. Index 0 (the
// background) and 255 (the void border) are no mask. Classes are named by
// <root>/class_names.txt (labelme2voc's, a name a line from index 0), else
// by VOC 2012's 21 names; an index past the names is its number.
func (rd *reader) vocSegmentation(done map[string]bool, splits map[string]string, labels map[string]bool) error {
	names := map[string][]string{}
	for _, png := range rd.tree.images {
		dir := pathDir(png)
		if !strings.EqualFold(path.Ext(png), ".png") || vocSegDirs[path.Base(dir)] != "class" {
			continue
		}
		root := pathDir(dir)
		stem := strings.TrimSuffix(path.Base(png), path.Ext(png))
		rd.found = true
		if done[joinRel(root, stem)] {
			continue
		}
		if names[root] == nil {
			names[root] = rd.vocClassNames(root)
		}
		it, ok := rd.vocSegItem(png, root, stem, names[root])
		if !ok {
			continue
		}
		it.Split = splits[joinRel(root, stem)]
		for _, b := range it.Boxes {
			rd.category(labels, b.Label)
		}
		if err := rd.send(it); err != nil {
			return err
		}
	}
	return nil
}

// vocSegItem reads one image's class PNG (and object PNG when there is one).
func (rd *reader) vocSegItem(classPNG, root, stem string, names []string) (Item, bool) {
	var cands []string
	for _, ext := range []string{".jpg", ".jpeg", ".png", ".JPG"} {
		cands = append(cands, joinRel(root, "JPEGImages", stem+ext))
	}
	media := rd.tree.find("", cands...)
	if media == "" {
		rd.rep.add(LabelWithoutImage, classPNG, 0, "no image %s.jpg in %s (its masks not imported)", stem, joinRel(root, "JPEGImages"))
		return Item{}, false
	}
	it := Item{Media: media, Source: classPNG}
	cls, err := rd.indexPNG(classPNG, 0, 0)
	if err != nil {
		rd.rep.add(Malformed, classPNG, 0, "%v; its masks not imported", err)
		return it, true
	}
	it.Width, it.Height = cls.w, cls.h
	label := func(k int) string {
		if k < len(names) && names[k] != "" {
			return names[k]
		}
		return strconv.Itoa(k)
	}
	var obj string
	for _, d := range []string{"SegmentationObjectPNG", "SegmentationObject"} {
		if p := joinRel(root, d, stem+".png"); rd.tree.files[p] {
			obj = p
		}
	}
	if obj == "" {
		runs := cls.runs(nil)
		for _, k := range sortedInts(runs) {
			it.Boxes = append(it.Boxes, Box{Label: label(k), Geometry: shape.Geometry{Type: shape.Mask, Mask: runs[k].mask(cls.w, cls.h)}})
		}
		return it, true
	}
	o, err := rd.indexPNG(obj, cls.w, cls.h)
	if err != nil {
		rd.rep.add(Malformed, obj, 0, "%v; its objects not imported", err)
		return it, true
	}
	runs := o.runs(cls)
	for _, k := range sortedInts(runs) {
		c, most := 0, 0
		for _, ci := range sortedInts(runs[k].under) {
			if n := runs[k].under[ci]; ci != 0 && ci != vocVoid && n > most {
				c, most = ci, n
			}
		}
		if most == 0 {
			rd.rep.add(Malformed, obj, 0, "object %d: its pixels have no class in %s; not imported", k, classPNG)
			continue
		}
		it.Boxes = append(it.Boxes, Box{Label: label(c), Geometry: shape.Geometry{Type: shape.Mask, Mask: runs[k].mask(o.w, o.h)}})
	}
	return it, true
}

// vocClassNames reads <root>/class_names.txt, else gives VOC 2012's names.
func (rd *reader) vocClassNames(root string) []string {
	f := joinRel(root, "class_names.txt")
	if b, err := os.ReadFile(rd.tree.abs(f)); err == nil && rd.tree.files[f] {
		rd.rep.Notes = append(rd.rep.Notes, "segmentation classes named by "+f)
		names := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r", ""), "\n"), "\n")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
		return names
	}
	rd.rep.Notes = append(rd.rep.Notes, "segmentation classes named as VOC 2012's (no "+f+")")
	return vocClassNames
}
