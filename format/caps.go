package format

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Caps bound what one Read keeps, so a hostile or broken file (a 200 MB
// COCO JSON putting 1.7 million boxes on one image, a million categories)
// costs memory in proportion to the caps, not to the file. What lies past a
// cap is counted as OverLimit, listed once per image or file, never dropped
// silently. A zero field is its default.
type Caps struct {
	ShapesPerFile int // boxes kept for one image; DefaultShapesPerFile
	Shapes        int // boxes kept for the whole read; DefaultShapes
	Categories    int // distinct labels; DefaultCategories
}

// Default caps. 10,000 boxes an image is fifty times the densest public
// detection sets (SKU-110K's ~150); 2,000,000 a read is twice COCO 2017's
// 860,000 (Objects365 needs a raised cap); 20,000 labels is more than
// V3Det's 13,204, the largest detection vocabulary published.
const (
	DefaultShapesPerFile = 10_000
	DefaultShapes        = 2_000_000
	DefaultCategories    = 20_000
)

// MaxAttributeDepth is how deep a box's attributes may nest, the lake's
// bound on stored JSON (lake.MaxMetadataDepth): a box past it is malformed
// here, where it is one box, rather than refused by the lake with its batch.
const MaxAttributeDepth = 32

// WithDefaults is c with its zero fields set to the defaults.
func (c Caps) WithDefaults() Caps {
	if c.ShapesPerFile <= 0 {
		c.ShapesPerFile = DefaultShapesPerFile
	}
	if c.Shapes <= 0 {
		c.Shapes = DefaultShapes
	}
	if c.Categories <= 0 {
		c.Categories = DefaultCategories
	}
	return c
}

// capShapes keeps at most the caps' boxes of an item about to be sent, and
// only boxes whose label is among the first Caps.Categories labels seen;
// what it leaves out is counted.
func (rd *reader) capShapes(it *Item) {
	if len(it.Boxes) == 0 {
		return
	}
	if n := len(it.Boxes); n > rd.caps.ShapesPerFile {
		rd.rep.AddN(Problem{Kind: OverLimit, File: it.Source, Line: it.Boxes[rd.caps.ShapesPerFile].Line,
			Message: fmt.Sprintf("image %s: %d boxes, over the limit of %d a file: the first %d kept, %d not imported",
				it.Media, n, rd.caps.ShapesPerFile, rd.caps.ShapesPerFile, n-rd.caps.ShapesPerFile)}, n-rd.caps.ShapesPerFile)
		it.Boxes = it.Boxes[:rd.caps.ShapesPerFile:rd.caps.ShapesPerFile]
	}
	if room := rd.caps.Shapes - rd.shapes; len(it.Boxes) > room {
		room = max(room, 0)
		rd.rep.AddN(Problem{Kind: OverLimit, File: it.Source, Line: it.Boxes[room].Line,
			Message: fmt.Sprintf("image %s: %d boxes past the limit of %d an import, not imported",
				it.Media, len(it.Boxes)-room, rd.caps.Shapes)}, len(it.Boxes)-room)
		it.Boxes = it.Boxes[:room:room]
	}
	rd.shapes += len(it.Boxes)
	kept := it.Boxes[:0]
	for _, b := range it.Boxes {
		if !rd.labels[b.Label] {
			if len(rd.labels) >= rd.caps.Categories {
				rd.rep.add(OverLimit, it.Source, b.Line, "%s box: a label past the limit of %d labels an import, not imported",
					b.Label, rd.caps.Categories)
				continue
			}
			rd.labels[b.Label] = true
		}
		kept = append(kept, b)
	}
	it.Boxes = kept
}

// capCategories keeps the first Caps.Categories of the report's categories
// (the summary and the collection's metadata name them all) and lists, once,
// how many were past the cap.
func (rd *reader) capCategories() {
	over := rd.catOver
	if n := len(rd.rep.Categories); n > rd.caps.Categories {
		over += n - rd.caps.Categories
		rd.rep.Categories = rd.rep.Categories[:rd.caps.Categories:rd.caps.Categories]
	}
	rd.rep.AddN(Problem{Kind: OverLimit, Message: fmt.Sprintf("%d categories past the limit of %d an import: not listed, their boxes not imported",
		over, rd.caps.Categories)}, over)
}

// category adds a category name read from a file's list of them, at most
// Caps.Categories; it reports whether there was room.
func (rd *reader) category(seen map[string]bool, name string) bool {
	if seen[name] {
		return true
	}
	if len(rd.rep.Categories) >= rd.caps.Categories {
		rd.catOver++
		return false
	}
	seen[name] = true
	rd.rep.Categories = append(rd.rep.Categories, name)
	return true
}

// lookedFor says, for a format, what its reader looks for.
var lookedFor = map[Format]string{
	YOLO:        "a .txt label file beside an image or in a labels/ folder beside images/",
	COCO:        "a .json holding an object with images, annotations or categories",
	VOC:         "an .xml holding <annotation> (Pascal VOC)",
	CVAT:        "an .xml holding <annotations> (CVAT for images 1.1)",
	LabelStudio: "a .json holding a list of Label Studio tasks",
}

// noLabels is the error of a labelled format that found no labels: a
// forced wrong format must not import the images bare. It says what was
// looked for and, when the folder holds another format, which.
func (rd *reader) noLabels(f Format) error {
	msg := fmt.Sprintf("format %s found no labels in the folder: it looks for %s", f, lookedFor[f])
	if g, why, err := detect(rd.tree); err == nil && g != f && g != Raw {
		msg += fmt.Sprintf("; the folder holds %s labels (%s): use format %s or auto", g, why, g)
	} else {
		msg += "; use format raw to import the media without labels"
	}
	return errors.New(msg)
}

// attrDepth is how deep v nests objects and arrays, depth being its own level.
func attrDepth(v any, depth int) int {
	deepest := 0
	switch x := v.(type) {
	case map[string]any:
		deepest = depth
		for _, e := range x {
			deepest = max(deepest, attrDepth(e, depth+1))
		}
	case []any:
		deepest = depth
		for _, e := range x {
			deepest = max(deepest, attrDepth(e, depth+1))
		}
	}
	return deepest
}

// relErr names a file of the tree by its path relative to the folder read,
// not the server's path of it.
func relErr(err error, rel string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s %v", rel, pe.Op, pe.Err)
	}
	return err
}

// scrubRoot takes the folder's path out of an error's text.
func scrubRoot(err error, root string) error {
	if err == nil || root == "" || !strings.Contains(err.Error(), root) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), root, "."))
}
