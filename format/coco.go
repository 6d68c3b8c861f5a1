package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"github.com/framelake/framelake/lake/shape"
)

// COCO detection JSON: {"images": [...], "annotations": [...],
// "categories": [...]} in any key order, walked a value at a time
// (jsonStream): each image, annotation and category is decoded alone and
// the document is never held whole. Category ids may have gaps (COCO's own run 1..90 with 80 used);
// the categories are kept in id order.

type cocoImage struct {
	ID       int64  `json:"id"`
	FileName string `json:"file_name"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
}

type cocoAnnotation struct {
	ID           int64           `json:"id"`
	ImageID      int64           `json:"image_id"`
	CategoryID   int64           `json:"category_id"`
	BBox         []float64       `json:"bbox"`
	Segmentation json.RawMessage `json:"segmentation"`
	IsCrowd      int             `json:"iscrowd"`
	Area         float64         `json:"area"`       // the segment's area; 0 when not given
	Attributes   map[string]any  `json:"attributes"` // CVAT's COCO export writes them
	Keypoints    []float64       `json:"keypoints"`  // x, y, v for each of its category's keypoints
}

// AreaAttribute hands COCO's area of an annotation over as a reserved
// attribute, which the lake keeps in a column (annotation.area) and removes
// from the attributes (lake.AreaAttribute): pycocotools' area ranges read
// it. The image's id goes as Item.ImageID.
const AreaAttribute = "_import_area"

type cocoCategory struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Keypoints []string `json:"keypoints"` // the names of its keypoints, in the annotations' order
	Skeleton  [][2]int `json:"skeleton"`  // edges between its keypoints, numbered from 1
}

// cocoDoc is what one COCO file holds, images and annotations in file
// order. The annotations' boxes sit in one slice with their image,
// category and annotation ids beside it: a million of them cost 100 MB
// that way, where a slice per image wasted as much again on growth.
type cocoDoc struct {
	images []cocoImage
	boxes  chunked[cocoBox]
	owner  []int64 // image_id of boxes[i]
	cat    []int64 // category_id of boxes[i]
	id     []int64 // id of boxes[i]
	cats   map[int64]string
	kps    map[int64][]string // the categories' keypoint names
	skel   map[int64][][2]int // the categories' skeletons, as COCO numbers them
	off    []int64            // where boxes[i]'s annotation starts in the file
	imgOff []int64            // where images[i] starts
	lines  *lineMarks
	guard  jsonGuard  // run over each image and category, and each annotation the one-pass read refused
	polys  *polySpill // the boxes' polygons, made at the first (see polySpill)
	// perImage counts the boxes kept of each image_id, for Caps.ShapesPerFile;
	// over, those past it (or past Caps.Shapes), with where the first was.
	perImage map[int64]int
	over     map[int64]int
	overOff  map[int64]int64
	catsOver int // categories past Caps.Categories
}

// cocoBox is a box waiting for its category's name: smaller than a Box.
type cocoBox struct {
	x, y, w, h float64
	area       float64 // COCO's area; 0 none
	attrs      map[string]any
	seg        *shape.Geometry // its segmentation other than a polygon; nil for a box alone
	poly       polyRef         // its polygon, in doc.polys
	kps        []float64       // its keypoints as COCO writes them (x, y, v)*n; nil when none is labelled
}

func (rd *reader) coco() error {
	files := rd.cocoFiles()
	if len(files) == 0 {
		return nil // noLabels says what was looked for
	}
	rd.found = true
	names := map[string]bool{}
	for _, jf := range files {
		doc, err := rd.readCOCO(jf)
		if doc != nil && doc.polys != nil {
			defer doc.polys.close()
		}
		if err != nil {
			line := 0
			if doc != nil {
				line = doc.lines.line(doc.lines.off)
				var at *errAt
				if errors.As(err, &at) {
					line = doc.lines.line(at.off)
				}
			}
			rd.rep.add(Malformed, jf, line, "%v", err)
			continue
		}
		for _, c := range sortedCats(doc.cats) {
			rd.category(names, c)
		}
		rd.catOver += doc.catsOver
		rd.cocoSkeletons(jf, doc)
		rd.cocoOver(jf, doc)
		if err := rd.emitCOCO(jf, doc); err != nil {
			return err
		}
	}
	return nil
}

func (rd *reader) cocoFiles() []string {
	var out []string
	for _, j := range rd.tree.withExt(".json") {
		if isCOCOHead(bytes.TrimSpace(rd.tree.head(j, 8192))) {
			out = append(out, j)
		}
	}
	return out
}

// sortedCats lists category names by id.
func sortedCats(cats map[int64]string) []string {
	ids := make([]int64, 0, len(cats))
	for id := range cats {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = cats[id]
	}
	return out
}

func (rd *reader) readCOCO(rel string) (*cocoDoc, error) {
	f, err := os.Open(rd.tree.abs(rel))
	if err != nil {
		return nil, relErr(err, rel)
	}
	defer f.Close()
	doc := &cocoDoc{cats: map[int64]string{}, kps: map[int64][]string{}, skel: map[int64][][2]int{}, lines: &lineMarks{r: f, path: f.Name()},
		perImage: map[int64]int{}, over: map[int64]int{}, overOff: map[int64]int64{}}
	s := newJSONStream(doc.lines)
	if c, ok := s.peek(); !ok || c != '{' {
		return doc, &errAt{0, fmt.Errorf("not a JSON object")}
	}
	err = s.members(func(key string) error {
		switch key {
		case "images":
			return s.elements(func(raw []byte, start int64) error {
				var im cocoImage
				if ok, err := rd.cocoRecord(rel, doc, raw, start, &im, func() string { return fmt.Sprintf("image %d", im.ID) }); !ok {
					return err
				}
				doc.imgOff = append(doc.imgOff, start)
				doc.images = append(doc.images, im)
				return nil
			})
		case "annotations":
			return rd.cocoAnnotations(rel, s, doc)
		case "categories":
			return s.elements(func(raw []byte, start int64) error {
				var c cocoCategory
				if ok, err := rd.cocoRecord(rel, doc, raw, start, &c, func() string { return fmt.Sprintf("category %d", c.ID) }); !ok {
					return err
				}
				if _, ok := doc.cats[c.ID]; !ok && len(doc.cats) >= rd.caps.Categories {
					doc.catsOver++
					return nil
				}
				doc.cats[c.ID] = c.Name
				if len(c.Keypoints) > 0 {
					doc.kps[c.ID] = c.Keypoints
					doc.skel[c.ID] = c.Skeleton
				}
				return nil
			})
		default:
			return skipMember(s)
		}
	})
	if err != nil {
		off, ok := errOffset(err)
		if !ok {
			off = s.offset()
		}
		return doc, &errAt{off, fmt.Errorf("%v (at byte %d)", err, off)}
	}
	return doc, nil
}

// skipMember reads a member of the top object that holds no records (info,
// licenses), checking it is JSON but for what jsonGuard rewrites (a NaN, an
// over-deep value): that is no record's, and passed when the guard read
// the whole file.
func skipMember(s *jsonStream) error {
	raw, off, err := s.value()
	if err != nil || json.Valid(raw) {
		return err
	}
	var g jsonGuard
	raw, _ = g.record(raw, 1)
	return checkJSON(raw, off)
}

// errAt is an error at a byte offset of the file read.
type errAt struct {
	off int64
	err error
}

func (e *errAt) Error() string { return e.err.Error() }
func (e *errAt) Unwrap() error { return e.err }

// problem adds a problem found at byte off of a COCO file, at its line
// when the report will list it.
func (rd *reader) problem(k Kind, rel string, doc *cocoDoc, off int64, format string, args ...any) {
	line := 0
	if rd.rep.listed[k] < MaxListed {
		line = doc.lines.line(off)
	}
	rd.rep.add(k, rel, line, format, args...)
}

// cocoRecord decodes raw, the record read at start, into v. A record that
// holds a value of the wrong type, or one the guard rewrites (NaN,
// over-deep), is malformed, named by what, and the reading goes on; ok is
// false then, and err is set only when the file cannot be read on.
func (rd *reader) cocoRecord(rel string, doc *cocoDoc, raw []byte, start int64, v any, what func() string) (ok bool, err error) {
	raw, flags := doc.guard.record(raw, recordDepth)
	err = recordErr(json.Unmarshal(raw, v), start)
	if len(flags) > 0 && (err == nil || isTypeErr(err)) {
		rd.problem(Malformed, rel, doc, start, "%s: %s; not imported", what(), flags[0].message())
		return false, nil
	}
	if isTypeErr(err) {
		rd.problem(Malformed, rel, doc, start, "%s: %v; not imported", what(), err)
		return false, nil
	}
	return err == nil, err
}

// recordErr places a syntax error in a record read at start in the file,
// at the byte that breaks it.
func recordErr(err error, start int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &syntaxError{start + max(se.Offset-1, 0), se.Error()}
	}
	return err
}

func isTypeErr(err error) bool {
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &typeErr)
}

// cocoRaw is one annotation of a COCO file: its bytes as read, where they
// start, the guard's flag on them (hit), and what decoding them gave.
type cocoRaw struct {
	raw    json.RawMessage
	start  int64
	flag   jsonFlag
	hit    bool
	a      cocoAnnotation
	err    error // the decode's: a field of the wrong type spoils this annotation only
	seg    *shape.Geometry
	segErr error
}

// decode fills a, seg and their errors from raw, touching nothing shared
// but arena, its batch's, which a polygon's numbers go in. The stream
// found raw's end without reading it through: it is checked here, off the
// reading goroutine (fastAnnotation and cocoSegment as they read it,
// json.Valid otherwise), and a syntax error in it stops the file. What the
// one pass refuses goes past the guard first: a record it rewrites (a NaN,
// a value nested past guardDepth, a number of maxWord bytes, none of which
// the one pass takes) is decoded from its rewrite and refused (hit).
func (r *cocoRaw) decode(arena *[]float64) {
	defer func() { r.raw = nil }()
	seg, at, ok := fastAnnotation(r.raw, &r.a)
	if ok {
		if r.seg, r.segErr = cocoSegment(seg, arena); r.segErr == nil {
			return
		}
	}
	var g jsonGuard
	if out, flags := g.record(r.raw, recordDepth); len(flags) > 0 {
		r.a, r.seg, r.segErr, r.flag, r.hit = cocoAnnotation{}, nil, nil, flags[0], true
		r.err = recordErr(json.Unmarshal(out, &r.a), r.start)
		r.a.Segmentation = nil
		return
	}
	if ok { // a segment that does not read may not be JSON either
		r.err = checkJSON(seg, r.start+int64(at))
		return
	}
	r.a = cocoAnnotation{}
	if r.err = checkJSON(r.raw, r.start); r.err != nil {
		return
	}
	r.err = recordErr(json.Unmarshal(r.raw, &r.a), r.start)
	if r.err == nil {
		r.seg, r.segErr = cocoSegment(r.a.Segmentation, arena)
	}
	r.a.Segmentation = nil
}

// recordDepth is how deep a COCO file's records sit: in an array in the
// top object.
const recordDepth = 2

// annotationsPerBatch is how many annotations go to a decoding goroutine
// at once, and decoders how many decode.
const annotationsPerBatch, decoders = 256, 2

// cocoBatch is annotations sent to be decoded; done closes when they are.
// Its buffers (the annotations' bytes, the polygons' numbers) serve the
// batches after it once it is kept: reading a segmented file allocated a
// gigabyte in them, and the garbage collector's work was a fifth of it.
type cocoBatch struct {
	raws  []cocoRaw
	buf   []byte
	arena []float64
	done  chan struct{}
}

// cocoAnnotations reads the annotations array s is at. This goroutine
// finds each annotation's bytes and keeps what the decoders made of the
// batches before (the check, the struct, the polygons' numbers): the read
// of a segmented file's million polygons, all of it before the first image
// is stored, used one core of two. Annotations are kept in file order, as
// one goroutine read them.
func (rd *reader) cocoAnnotations(rel string, s *jsonStream, doc *cocoDoc) error {
	// Two goroutines decode: the checks and the numbers are most of the
	// work, and the reading waits on them.
	jobs := make(chan *cocoBatch, decoders)
	for range decoders {
		go func() {
			for b := range jobs {
				for i := range b.raws {
					b.raws[i].decode(&b.arena)
				}
				close(b.done)
			}
		}()
	}
	var inFlight, free []*cocoBatch
	keep := func() error { // the oldest batch sent, in order
		b := inFlight[0]
		inFlight = inFlight[1:]
		<-b.done
		for i := range b.raws {
			if err := rd.cocoAnnotation(rel, doc, &b.raws[i]); err != nil {
				return err
			}
		}
		free = append(free, b) // its polygons are spilled: nothing holds its buffers
		return nil
	}
	var batch *cocoBatch
	send := func() error {
		jobs <- batch
		inFlight, batch = append(inFlight, batch), nil
		if len(inFlight) > 2*decoders {
			return keep()
		}
		return nil
	}
	err := s.elements(func(raw []byte, start int64) error {
		if batch == nil {
			if n := len(free); n > 0 {
				batch, free = free[n-1], free[:n-1]
				batch.raws, batch.buf, batch.arena = batch.raws[:0], batch.buf[:0], batch.arena[:0]
			} else {
				batch = &cocoBatch{raws: make([]cocoRaw, 0, annotationsPerBatch), buf: make([]byte, 0, 64<<10)}
			}
			batch.done = make(chan struct{})
		}
		// The annotations' bytes share the batch's buffer: a million
		// annotations were a million allocations.
		n := len(batch.buf)
		batch.buf = append(batch.buf, raw...)
		r := cocoRaw{raw: batch.buf[n:len(batch.buf):len(batch.buf)], start: start}
		if batch.raws = append(batch.raws, r); len(batch.raws) == annotationsPerBatch {
			return send()
		}
		return nil
	})
	var kept error
	if batch != nil {
		kept = send() // what was read before the end, or before a syntax error
	}
	close(jobs)
	for len(inFlight) > 0 && kept == nil {
		kept = keep()
	}
	for _, b := range inFlight { // what is left after a failure to keep
		<-b.done
	}
	if kept != nil {
		return kept // the first in the file: what was kept was read before err
	}
	return err
}

// cocoAnnotation keeps one annotation r decoded, or counts why not.
func (rd *reader) cocoAnnotation(rel string, doc *cocoDoc, r *cocoRaw) error {
	a, start := r.a, r.start
	switch {
	case r.hit && (r.err == nil || isTypeErr(r.err)):
		rd.problem(Malformed, rel, doc, start, "annotation %d: %s; not imported", a.ID, r.flag.message())
		return nil
	case isTypeErr(r.err):
		rd.problem(Malformed, rel, doc, start, "annotation %d: %v; not imported", a.ID, r.err)
		return nil
	case r.err != nil:
		return r.err
	}
	// Past a cap the annotation is counted, not kept: memory follows the caps, not the file.
	if doc.perImage[a.ImageID] >= rd.caps.ShapesPerFile || rd.shapes+doc.boxes.len() >= rd.caps.Shapes {
		if doc.over[a.ImageID]++; doc.over[a.ImageID] == 1 {
			doc.overOff[a.ImageID] = start
		}
		return nil
	}
	if d := attrDepth(a.Attributes, 1); d > MaxAttributeDepth {
		rd.problem(Malformed, rel, doc, start, "annotation %d: its attributes nest %d levels deep, past the limit of %d; not imported", a.ID, d, MaxAttributeDepth)
		return nil
	}
	b := Box{Attributes: a.Attributes}
	if a.IsCrowd != 0 {
		b.Attributes = withAttr(b.Attributes, "iscrowd", a.IsCrowd)
	}
	seg, err := r.seg, r.segErr
	if err != nil && len(a.BBox) == 4 {
		rd.problem(Malformed, rel, doc, start, "annotation %d: segmentation %v; its bbox imported as a box", a.ID, err)
	} else if err != nil {
		rd.problem(Malformed, rel, doc, start, "annotation %d: segmentation %v; not imported", a.ID, err)
		return nil
	}
	switch {
	case len(a.BBox) == 4:
		b.X, b.Y, b.W, b.H = a.BBox[0], a.BBox[1], a.BBox[2], a.BBox[3]
	case seg != nil:
		// No bbox: the lake derives the box from the segment, as
		// pycocotools' loadRes does for results (toBbox).
	default:
		rd.problem(Malformed, rel, doc, start, "annotation %d: bbox %v is not [x, y, width, height] and it has no segmentation", a.ID, a.BBox)
		return nil
	}
	if seg == nil && (b.W <= 0 || b.H <= 0) {
		rd.problem(ZeroSize, rel, doc, start, "annotation %d: box of size %gx%g", a.ID, b.W, b.H)
		return nil
	}
	var poly polyRef
	if seg != nil && seg.Type == shape.Polygon {
		if doc.polys == nil {
			if doc.polys, err = newPolySpill(); err != nil {
				return err
			}
		}
		if poly, err = doc.polys.put(seg.Polygon); err != nil {
			return err
		}
		seg = nil
	}
	doc.perImage[a.ImageID]++
	area := a.Area
	if math.IsNaN(area) || math.IsInf(area, 0) || area < 0 {
		area = 0
	}
	doc.boxes.add(cocoBox{b.X, b.Y, b.W, b.H, area, b.Attributes, seg, poly, labelledKeypoints(a.Keypoints)})
	doc.owner, doc.cat, doc.id = append(doc.owner, a.ImageID), append(doc.cat, a.CategoryID), append(doc.id, a.ID)
	doc.off = append(doc.off, start)
	return nil
}

// cocoOver lists, once per image, the annotations of a COCO file past a cap.
func (rd *reader) cocoOver(rel string, doc *cocoDoc) {
	for _, id := range slices.Sorted(maps.Keys(doc.over)) {
		n, line := doc.over[id], 0
		if rd.rep.listed[OverLimit] < MaxListed {
			line = doc.lines.line(doc.overOff[id])
		}
		msg := fmt.Sprintf("image_id %d: %d annotations past the limit of %d boxes a file or %d an import, not imported (the first here)",
			id, n, rd.caps.ShapesPerFile, rd.caps.Shapes)
		rd.rep.AddN(Problem{Kind: OverLimit, File: rel, Line: line, Message: msg}, n)
	}
}

// cocoSegment reads an annotation's segmentation: polygons ([[x y x y
// ...], ...]) or an RLE mask ({"size": [h, w], "counts": "..." or [...]}),
// nil when there is none. A polygon of fewer than three points is left out,
// as pycocotools' frPyObjects cannot draw it either; one with none left is
// no segmentation.
func cocoSegment(raw json.RawMessage, arena *[]float64) (*shape.Geometry, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '{' {
		var m shape.EncodedMask
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		if _, err := m.RLE(); err != nil {
			return nil, err
		}
		return &shape.Geometry{Type: shape.Mask, Mask: &m}, nil
	}
	all, ok := parseRings(raw, arena)
	if !ok {
		if err := json.Unmarshal(raw, &all); err != nil {
			return nil, fmt.Errorf("is neither polygons nor an RLE mask")
		}
	}
	var polys [][]float64
	for _, p := range all {
		if len(p) >= 6 && len(p)%2 == 0 {
			polys = append(polys, p)
		}
	}
	if len(polys) == 0 {
		return nil, nil
	}
	return &shape.Geometry{Type: shape.Polygon, Polygon: polys}, nil
}

// labelledKeypoints keeps COCO's keypoints triples when one is labelled (v
// above 0): an annotation with none (num_keypoints 0) is its segment or box.
func labelledKeypoints(kps []float64) []float64 {
	for i := 2; i < len(kps); i += 3 {
		if kps[i] > 0 {
			return kps
		}
	}
	return nil
}

// cocoKeypoints makes box the keypoints of annotation k, named by its
// category (1, 2, ... when the category names none), with COCO's bbox and
// area kept: framelake's annotation has one shape, so a segmentation beside
// labelled keypoints is not kept, and counted.
func (rd *reader) cocoKeypoints(rel string, doc *cocoDoc, k int, box *Box, kps []float64) {
	names := doc.kps[doc.cat[k]]
	if len(kps)%3 != 0 || len(names) > 0 && len(names)*3 != len(kps) {
		rd.problem(Malformed, rel, doc, doc.off[k], "annotation %d: %d keypoint numbers for the %d keypoints of its category; its keypoints not imported",
			doc.id[k], len(kps), len(names))
		return
	}
	if box.Type != "" {
		rd.problem(SegmentDropped, rel, doc, doc.off[k], "annotation %d: keypoints and a segmentation; the keypoints kept", doc.id[k])
	}
	g := shape.Geometry{Type: shape.Keypoints}
	for j := 0; j+2 < len(kps); j += 3 {
		name := strconv.Itoa(j/3 + 1)
		if len(names) > 0 {
			name = names[j/3]
		}
		g.Keypoints = append(g.Keypoints, shape.Keypoint{Name: name, X: kps[j], Y: kps[j+1], V: int(kps[j+2])})
	}
	box.Geometry, box.Rings = g, nil
}

// cocoReading keeps COCO's meaning of a polygon whose rings overlap: COCO
// reads the union of its rings where framelake reads them even-odd
// (docs/shapes.md), so such a polygon comes in as the mask pycocotools
// draws of it. Other segments come in as written.
func cocoReading(g shape.Geometry, im cocoImage) shape.Geometry {
	if g.Type != shape.Polygon || len(g.Polygon) < 2 || im.Width <= 0 || im.Height <= 0 {
		return g
	}
	for _, r := range g.Polygon {
		if shape.CheckPoints(r, 3, im.Width, im.Height) != nil {
			return g // Fit reports it
		}
	}
	if !shape.RingsOverlap(g.Polygon, im.Height, im.Width) {
		return g
	}
	m := shape.RingsUnion(g.Polygon, im.Height, im.Width)
	return shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{m.Height, m.Width}, Counts: m.String()}}
}

func withAttr(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

// emitCOCO sends each image of a COCO file with its named boxes.
func (rd *reader) emitCOCO(rel string, doc *cocoDoc) error {
	split := splitOf(rel, true)
	byImage := rd.groupCOCO(rel, doc)
	base := pathDir(rel)
	for i, im := range doc.images {
		ks := byImage[i]
		media := rd.tree.find(im.FileName, joinRel(base, im.FileName), im.FileName, joinRel(base, "images", im.FileName),
			joinRel("images", im.FileName), joinRel(base, "..", "images", im.FileName), joinRel("images", split, im.FileName))
		if media == "" {
			rd.problem(LabelWithoutImage, rel, doc, doc.imgOff[i], "image %d %q: no such image under the folder (%d boxes not imported)",
				im.ID, im.FileName, len(ks))
			continue
		}
		boxes, err := rd.cocoBoxes(rel, doc, i, ks)
		if err != nil {
			return err
		}
		byImage[i] = nil
		it := Item{Media: media, Split: split, Source: rel, Width: im.Width, Height: im.Height, Boxes: boxes, ImageID: &im.ID}
		if err := rd.send(it); err != nil {
			return err
		}
	}
	return nil
}

// groupCOCO groups the boxes of a COCO file by image (in the images'
// order), as their indexes in doc.boxes; the boxes whose category or image
// is unknown are refused. cocoBoxes makes an image's boxes as it is sent,
// so only the images in flight hold their shapes.
func (rd *reader) groupCOCO(rel string, doc *cocoDoc) [][]int {
	index := make(map[int64]int, len(doc.images))
	for i, im := range doc.images {
		index[im.ID] = i
	}
	counts := make([]int, len(doc.images)+1)
	orphans, firstOff := map[int64]int{}, map[int64]int64{}
	for k := range doc.boxes.len() {
		i, ok := index[doc.owner[k]]
		name := doc.cats[doc.cat[k]]
		switch {
		case !ok:
			if orphans[doc.owner[k]]++; orphans[doc.owner[k]] == 1 {
				firstOff[doc.owner[k]] = doc.off[k]
			}
		case name == "":
			hint := ""
			if doc.catsOver > 0 {
				hint = fmt.Sprintf(", or past the limit of %d categories an import", rd.caps.Categories)
			}
			rd.problem(UnknownCategory, rel, doc, doc.off[k], "annotation %d: category_id %d is not among the categories (or has no name%s)", doc.id[k], doc.cat[k], hint)
		default:
			counts[i+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	// A slice of its exact size per image, not windows of one: emitCOCO
	// lets an image's go once its boxes are made.
	out := make([][]int, len(doc.images))
	for i := range out {
		out[i] = make([]int, 0, counts[i+1]-counts[i])
	}
	for k := range doc.boxes.len() {
		if i, ok := index[doc.owner[k]]; ok && doc.cats[doc.cat[k]] != "" {
			out[i] = append(out[i], k)
		}
	}
	ids := slices.Sorted(maps.Keys(orphans))
	for _, id := range ids {
		rd.problem(LabelWithoutImage, rel, doc, firstOff[id], "image_id %d of %d annotations is not among the images (the first here)", id, orphans[id])
	}
	return out
}

// cocoBoxes makes the named boxes ks of image i, their polygons read back
// from the spill (for ReadEncoded, one ring's as its bytes).
func (rd *reader) cocoBoxes(rel string, doc *cocoDoc, i int, ks []int) ([]Box, error) {
	out := make([]Box, 0, len(ks))
	var enc []byte // the image's encoded polygons
	for _, k := range ks {
		b := doc.boxes.at(k)
		attrs := b.attrs
		if b.area > 0 { // a map made as the boxes are sent, not kept for each while the file is read
			attrs = withAttr(attrs, AreaAttribute, b.area)
		}
		box := Box{Label: doc.cats[doc.cat[k]], X: b.x, Y: b.y, W: b.w, H: b.h, Attributes: attrs}
		seg := b.seg
		if b.poly.n > 0 {
			raw, err := doc.polys.bytes(b.poly)
			if err != nil {
				return nil, err
			}
			if rd.encoded && oneRing(raw) { // one ring: nothing for cocoReading to do
				n := len(enc)
				enc = append(enc, raw...)
				box.Type, box.Rings = shape.Polygon, enc[n:len(enc):len(enc)]
			} else {
				rings, err := ReadRings(raw)
				if err != nil {
					return nil, err
				}
				seg = &shape.Geometry{Type: shape.Polygon, Polygon: rings}
			}
		}
		if seg != nil {
			box.Geometry = cocoReading(*seg, doc.images[i])
		}
		if b.kps != nil {
			rd.cocoKeypoints(rel, doc, k, &box, b.kps)
		}
		*b = cocoBox{} // its attributes, mask and keypoints go with the image
		out = append(out, box)
	}
	return out, nil
}
