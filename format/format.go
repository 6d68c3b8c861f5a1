// Package format reads and writes labelled data in the formats of other
// tools, for import and for dataset export: one file per format holds its
// reader and its writer (coco.go and coco_write.go, as COCO's are long). The
// readers' names are the import's (Format, Box, Item, Read); the writers'
// carry Export (ExportType, ExportBox) beside Frame, Dataset and Write, whose
// archive layouts export.go describes. Video tracks are format/trackio's.
//
// Reading. The readers take YOLO
// (Darknet and Ultralytics layouts), COCO detection JSON, Pascal VOC XML,
// CVAT for images 1.1 XML, Label Studio JSON and labelme JSON. Each reader
// walks a folder and hands out one Item per image: the image's path, the
// split it came from, and its boxes and shapes with labels and attributes. Nothing is dropped
// silently: every box or file that could not be read as written is a
// Problem in the Report, with its file and, where there is one, its line.
//
// Readers do not decode images. Boxes come in the unit their format writes
// (pixels, or fractions of the image for YOLO and Label Studio); Report.Fit
// turns them into pixel boxes inside the image once its size is known (the
// lake probes it when it stores the file), clipping what crosses the edge.
//
// COCO and Label Studio JSON are read token by token with encoding/json's
// Decoder, so a file of a million annotations is never held whole.
package format

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// Format names a labelled-data layout.
type Format string

const (
	Auto        Format = "auto" // recognise the format from the layout
	YOLO        Format = "yolo"
	COCO        Format = "coco"
	VOC         Format = "voc"
	CVAT        Format = "cvat"
	LabelStudio Format = "labelstudio"
	Labelme     Format = "labelme"
	Raw         Format = "raw" // media only, no labels
)

// Formats are the names ParseFormat accepts.
var Formats = []Format{Auto, YOLO, COCO, VOC, CVAT, LabelStudio, Labelme, Raw}

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	if f := Format(s); slices.Contains(Formats, f) {
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q: use one of auto, yolo, coco, voc, cvat, labelstudio, labelme, raw", s)
}

// Box is one labelled rectangle as its file wrote it: (X, Y) its top-left
// corner, origin at the image's top-left. In pixels, or in fractions of the
// image's width and height when Relative.
type Box struct {
	Label      string
	X, Y, W, H float64
	Relative   bool
	Attributes map[string]any // nil when it has none
	Line       int            // 1-based line of its file, 0 when the format has none
	// Geometry is the shape when the file gives more than a box (a polygon,
	// a mask, keypoints, a polyline, a class), in pixels, or in fractions
	// when Relative. X, Y, W, H are then the box the file gave with it, or
	// zero for Fit to derive.
	shape.Geometry
	// Rings is, from ReadEncoded only, a COCO polygon of one ring as the
	// reader keeps it (AppendRings' form), in place of Geometry's Polygon;
	// Type is then Polygon.
	Rings []byte
}

// Item is one image and the boxes its labels give it.
type Item struct {
	Media  string // path of the image file
	Split  string // "train", "val", "test", or "" when the layout does not say
	Source string // the label file, relative to the folder read; "" when none
	Width  int    // image size as the labels say; 0 when they do not
	Height int
	Boxes  []Box
	// ImageID is the image's id in its COCO file (pycocotools orders tied
	// scores by it); nil for other formats.
	ImageID *int64
}

// Kind is a kind of problem.
type Kind string

const (
	LabelWithoutImage  Kind = "label_without_image"  // refused: its boxes have no image
	ImageWithoutLabels Kind = "image_without_labels" // imported raw
	Clipped            Kind = "clipped"              // box crossed the edge, cut to the image
	OutsideImage       Kind = "outside_image"        // refused: nothing of the box is in the image
	ZeroSize           Kind = "zero_size"            // refused: width or height not positive
	UnknownCategory    Kind = "unknown_category"     // refused: a class id no category names
	Malformed          Kind = "malformed"            // refused: a line or record that does not parse
	SegmentDropped     Kind = "segment_dropped"      // a COCO segmentation beside keypoints: the keypoints kept
	Ignored            Kind = "ignored"              // a shape framelake does not keep (a brush, an ellipse, a cuboid)
	OverLimit          Kind = "over_limit"           // refused: past a cap of Caps (shapes a file or an import, categories)
)

// Refused reports whether problems of kind k lose a box or a file.
func (k Kind) Refused() bool {
	switch k {
	case LabelWithoutImage, OutsideImage, ZeroSize, UnknownCategory, Malformed, OverLimit:
		return true
	}
	return false
}

// Problem is one thing that was not read as written.
type Problem struct {
	Kind    Kind   `json:"kind"`
	File    string `json:"file"`           // relative to the folder read
	Line    int    `json:"line,omitempty"` // 1-based
	Message string `json:"message"`
}

func (p Problem) String() string {
	at := p.File
	if p.Line > 0 {
		at = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s: %s: %s", at, p.Kind, p.Message)
}

// MaxListed is how many problems of one kind a Report lists; all are counted.
const MaxListed = 50

// Report is what reading found: the format, the categories in their id
// order, and every problem, counted by kind.
type Report struct {
	Format     Format       `json:"format"`
	Why        string       `json:"why"`        // how the format was chosen
	Categories []string     `json:"categories"` // labels in their file's id order
	Counts     map[Kind]int `json:"counts"`
	Problems   []Problem    `json:"problems"` // at most MaxListed of each kind
	Notes      []string     `json:"notes,omitempty"`
	listed     map[Kind]int

	// Skeletons are the keypoint declarations the labels' files give (COCO's
	// categories), by label: an import declares them on a project's labels.
	Skeletons map[string]shape.Skeleton `json:"-"`
}

func newReport(f Format, why string) *Report {
	return &Report{Format: f, Why: why, Categories: []string{}, Counts: map[Kind]int{}, Problems: []Problem{},
		listed: map[Kind]int{}}
}

// Add counts a problem and lists it while its kind has room.
func (r *Report) Add(p Problem) { r.AddN(p, 1) }

// AddN counts n problems of p's kind, listed once as p: the boxes of one
// image past a cap are one line, not a line each.
func (r *Report) AddN(p Problem, n int) {
	if n <= 0 {
		return
	}
	if r.listed == nil {
		r.listed = map[Kind]int{}
	}
	r.Counts[p.Kind] += n
	if r.listed[p.Kind] < MaxListed {
		r.listed[p.Kind]++
		r.Problems = append(r.Problems, p)
	}
}

func (r *Report) add(k Kind, file string, line int, format string, args ...any) {
	r.Add(Problem{Kind: k, File: file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// Refused counts the problems that lost a box or a file.
func (r *Report) Refused() int {
	n := 0
	for k, c := range r.Counts {
		if k.Refused() {
			n += c
		}
	}
	return n
}

// Fit turns an item's boxes into pixel boxes inside a width x height image,
// clipping those that cross its edge and refusing those wholly outside it;
// both are counted in the report.
func (r *Report) Fit(it Item, width, height int) []Box {
	out := make([]Box, 0, len(it.Boxes))
	for _, b := range it.Boxes {
		if strings.TrimSpace(b.Label) == "" {
			r.add(Malformed, it.Source, b.Line, "a box without a label")
			continue
		}
		if d := attrDepth(b.Attributes, 1); d > MaxAttributeDepth {
			// The lake refuses such attributes, and with them the whole batch.
			r.add(Malformed, it.Source, b.Line, "%s box: its attributes nest deeper than %d levels", b.Label, MaxAttributeDepth)
			continue
		}
		if v := b.X + b.Y + b.W + b.H; math.IsNaN(v) || math.IsInf(v, 0) {
			// NaN and Inf parse as numbers, and NaN slips past every comparison below.
			r.add(Malformed, it.Source, b.Line, "%s box at (%.6g,%.6g) size %.6gx%.6g has a coordinate that is no finite number",
				b.Label, b.X, b.Y, b.W, b.H)
			continue
		}
		if isShape(b) {
			derived, err := fitShape(&b, width, height)
			if err != nil {
				r.add(Malformed, it.Source, b.Line, "%s %s: %v", b.Label, b.Type, err)
				continue
			}
			if derived { // its box is its bounds, cut to the image as a box is; a class's is the frame
				b.Relative = false
				flat := b.Type == shape.Polyline || b.Type == shape.Keypoints
				if b.Type == shape.Class || width <= 0 || height <= 0 || r.cutToImage(&b, it.Source, string(b.Type), flat, width, height) {
					out = append(out, b)
				}
				continue
			}
		}
		if b.Relative {
			if width <= 0 || height <= 0 {
				r.add(OutsideImage, it.Source, b.Line, "%s: the image's size is unknown, so relative coordinates cannot be placed", b.Label)
				continue
			}
			b.X, b.W = b.X*float64(width), b.W*float64(width)
			b.Y, b.H = b.Y*float64(height), b.H*float64(height)
			b.Relative = false
		}
		if width <= 0 || height <= 0 {
			out = append(out, b)
			continue
		}
		if r.cutToImage(&b, it.Source, "box", false, width, height) {
			out = append(out, b)
		}
	}
	return out
}

// cutToImage cuts b's box to the width×height image: said once it crosses
// the edge (half a pixel past it is rounding), refused when nothing of it is
// inside. A flat box (a polyline's, keypoints') may be 0 px across; a
// shape's points stay as given (the lake takes points outside by less than
// the image's size). noun names b in the problems; ok is false when b is
// refused.
func (r *Report) cutToImage(b *Box, source, noun string, flat bool, width, height int) (ok bool) {
	w, h := float64(width), float64(height)
	x0, y0 := max(b.X, 0), max(b.Y, 0)
	x1, y1 := min(b.X+b.W, w), min(b.Y+b.H, h)
	if x1 < x0 || y1 < y0 || !flat && (x1 == x0 || y1 == y0) {
		r.add(OutsideImage, source, b.Line, "%s %s at (%.6g,%.6g) size %.6gx%.6g is outside the %dx%d image",
			b.Label, noun, b.X, b.Y, b.W, b.H, width, height)
		return false
	}
	if b.X < -0.5 || b.Y < -0.5 || b.X+b.W > w+0.5 || b.Y+b.H > h+0.5 {
		r.add(Clipped, source, b.Line, "%s %s at (%.6g,%.6g) size %.6gx%.6g crosses the edge of the %dx%d image; clipped",
			b.Label, noun, b.X, b.Y, b.W, b.H, width, height)
	}
	b.X, b.Y, b.W, b.H = x0, y0, x1-x0, y1-y0
	return true
}

// Read reads the labelled data under dir in format f (Auto: recognised from
// the layout), calling emit with each image in a stable order, under the
// default Caps. The report says which format was read and what did not
// read as written; err is for what stops reading altogether (an unreadable
// folder, a labelled format that finds no labels, emit's error). Errors
// and problems name files relative to dir, never dir itself.
func Read(ctx context.Context, dir string, f Format, emit func(Item) error) (*Report, error) {
	return ReadWith(ctx, dir, f, Caps{}, emit)
}

// ReadWith is Read under caps (zero fields: the defaults).
func ReadWith(ctx context.Context, dir string, f Format, caps Caps, emit func(Item) error) (*Report, error) {
	return read(ctx, dir, f, caps, false, emit)
}

// ReadEncoded is ReadWith where a COCO polygon of one ring comes as
// Box.Rings, the bytes the reader kept it in between reading the file and
// emitting its image, not as numbers: an import that keeps the boxes in a
// file again until their batch writes those bytes as they are, where
// reading them back and writing them again cost a million polygons a
// second of the reading, which every image waits for.
func ReadEncoded(ctx context.Context, dir string, f Format, caps Caps, emit func(Item) error) (*Report, error) {
	return read(ctx, dir, f, caps, true, emit)
}

func read(ctx context.Context, dir string, f Format, caps Caps, encoded bool, emit func(Item) error) (*Report, error) {
	t, err := scanTree(dir)
	if err != nil {
		return nil, scrubRoot(err, dir)
	}
	why := "given with --format"
	if f == Auto {
		if f, why, err = detect(t); err != nil {
			return nil, err
		}
	}
	r := newReport(f, why)
	rd := &reader{ctx: ctx, tree: t, rep: r, emit: emit, used: map[string]bool{}, caps: caps.WithDefaults(),
		labels: map[string]bool{}, encoded: encoded}
	switch f {
	case YOLO:
		err = rd.yolo()
	case COCO:
		err = rd.coco()
	case VOC:
		err = rd.voc()
	case CVAT:
		err = rd.cvat()
	case LabelStudio:
		err = rd.labelStudio()
	case Labelme:
		err = rd.labelme()
	case Raw:
		err = rd.raw()
	default:
		err = fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return r, err
	}
	if f != Raw && !rd.found {
		return r, rd.noLabels(f)
	}
	if err := rd.unlabelled(); err != nil {
		return r, err
	}
	rd.capCategories()
	return r, nil
}

// reader is the state one Read shares between its format and the tree.
type reader struct {
	ctx  context.Context
	tree *tree
	rep  *Report
	emit func(Item) error
	used map[string]bool // images emitted, relative to the tree's root
	caps Caps
	// found: the format's label files (or records) were there, even if
	// empty; a labelled format that finds none is an error, not a raw import.
	found   bool
	shapes  int             // boxes sent so far, for Caps.Shapes
	catOver int             // category names past Caps.Categories
	labels  map[string]bool // labels of the boxes sent, at most Caps.Categories
	encoded bool            // ReadEncoded's
}

// send emits an item whose Media is relative to the root, marking it used.
func (rd *reader) send(it Item) error {
	if err := rd.ctx.Err(); err != nil {
		return err
	}
	rd.used[it.Media] = true
	rd.capShapes(&it)
	if it.Split == "" {
		it.Split = splitOf(it.Media, false)
	}
	it.Media = filepath.Join(rd.tree.root, filepath.FromSlash(it.Media))
	return rd.emit(it)
}

// unlabelled emits, as raw items, the images that no label named in the
// folders where labelled images are: images without labels. Images in
// other folders (a visualisation folder beside a VOC tree) are not part of
// the data set and are left to the caller.
func (rd *reader) unlabelled() error {
	dirs := map[string]bool{}
	for m := range rd.used {
		dirs[pathDir(m)] = true
	}
	for _, img := range rd.tree.images {
		if rd.used[img] || !dirs[pathDir(img)] && rd.rep.Format != YOLO {
			continue
		}
		rd.rep.add(ImageWithoutLabels, img, 0, "no labels name this image; imported without boxes")
		if err := rd.send(Item{Media: img}); err != nil {
			return err
		}
	}
	return nil
}

// raw emits every image, without boxes.
func (rd *reader) raw() error {
	for _, img := range rd.tree.images {
		if err := rd.send(Item{Media: img}); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
