package format

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
)

// Pascal VOC: one <annotation> XML per image (Annotations/x.xml beside
// JPEGImages/x.jpg), corners as VOC's 1-based pixel indices of the first
// and last covered pixel, so x = xmin-1 and width = xmax-xmin+1 (how
// framelake's own VOC export writes them). The split is read from
// ImageSets/Main/{train,val,test}.txt when the tree has them. Images with
// a SegmentationClass PNG and no XML are read from their PNGs (vocmask.go).

type vocObject struct {
	Name      string `xml:"name"`
	Pose      string `xml:"pose"`
	Truncated string `xml:"truncated"`
	Difficult string `xml:"difficult"`
	Occluded  string `xml:"occluded"`
	BndBox    *struct {
		XMin string `xml:"xmin"`
		YMin string `xml:"ymin"`
		XMax string `xml:"xmax"`
		YMax string `xml:"ymax"`
	} `xml:"bndbox"`
	Attributes []struct {
		Name  string `xml:"name"`
		Value string `xml:"value"`
	} `xml:"attributes>attribute"` // CVAT's VOC export
}

type vocHead struct {
	Filename, Path string
	Size           struct {
		Width  string `xml:"width"`
		Height string `xml:"height"`
	}
}

func (rd *reader) voc() error {
	splits := rd.vocSplits()
	labels := map[string]bool{}
	done := map[string]bool{} // "<root>/<stem>" read from XML
	for _, x := range rd.tree.withExt(".xml") {
		if !bytes.Contains(rd.tree.head(x, 4096), []byte("<annotation")) {
			continue
		}
		rd.found = true
		it, objects, err := rd.vocFile(x)
		if err != nil {
			rd.rep.add(Malformed, x, 0, "%v", err)
			continue
		}
		for _, b := range it.Boxes {
			rd.category(labels, b.Label)
		}
		stem := strings.TrimSuffix(path.Base(x), path.Ext(x))
		dir := pathDir(x)
		if path.Base(dir) == "Annotations" {
			dir = pathDir(dir)
		}
		candidates := []string{joinRel(dir, "JPEGImages", it.Media), joinRel(pathDir(x), it.Media)}
		for _, ext := range []string{".jpg", ".jpeg", ".png", ".JPG"} {
			candidates = append(candidates, joinRel(dir, "JPEGImages", stem+ext))
		}
		media := rd.tree.find(it.Media, candidates...)
		if media == "" {
			rd.rep.add(LabelWithoutImage, x, 0, "no image %q beside it or in JPEGImages (%d boxes not imported)", it.Media, len(it.Boxes))
			continue
		}
		it.Media, it.Split = media, splits[joinRel(dir, stem)]
		done[joinRel(dir, stem)] = true
		rd.vocMasks(&it, objects, joinRel(dir, "SegmentationObject", stem+".png"))
		if err := rd.send(it); err != nil {
			return err
		}
	}
	return rd.vocSegmentation(done, splits, labels)
}

// vocSplits maps "<voc root>/<stem>" to its split from ImageSets/Main
// (or ImageSets/Segmentation, where VOC lists its segmentation splits).
func (rd *reader) vocSplits() map[string]string {
	out := map[string]string{}
	for _, f := range rd.tree.withExt(".txt") {
		dir := pathDir(f)
		if !strings.HasSuffix("/"+dir, "/ImageSets/Main") && !strings.HasSuffix("/"+dir, "/ImageSets/Segmentation") {
			continue
		}
		split := splitName(strings.TrimSuffix(path.Base(f), ".txt"))
		if split == "" {
			continue // trainval and the per-class lists
		}
		b, err := os.ReadFile(rd.tree.abs(f))
		if err != nil {
			continue
		}
		root := pathDir(pathDir(dir))
		for _, l := range lines(string(b)) {
			out[joinRel(root, strings.Fields(l)[0])] = split
		}
	}
	return out
}

// vocFile reads one annotation document, the image's name in Media, and
// for each box the place of its object among the document's objects (from 1).
func (rd *reader) vocFile(rel string) (Item, []int, error) {
	it := Item{Source: rel}
	var objects []int
	n := 0
	var head vocHead
	over, overLine := 0, 0
	err := rd.eachStart(rel, func(dec *xml.Decoder, se xml.StartElement, line int) error {
		switch se.Name.Local {
		case "filename":
			return dec.DecodeElement(&head.Filename, &se)
		case "path":
			return dec.DecodeElement(&head.Path, &se)
		case "size":
			return dec.DecodeElement(&head.Size, &se)
		case "object":
			var o vocObject
			if err := dec.DecodeElement(&o, &se); err != nil {
				return err
			}
			n++
			if len(it.Boxes) >= rd.caps.ShapesPerFile {
				if over++; over == 1 {
					overLine = line
				}
				return nil
			}
			if b, ok := rd.vocBox(rel, line, o); ok {
				it.Boxes = append(it.Boxes, b)
				objects = append(objects, n)
			}
		}
		return nil
	})
	if over > 0 {
		rd.rep.AddN(Problem{Kind: OverLimit, File: rel, Line: overLine, Message: fmt.Sprintf(
			"%d objects past the limit of %d a file, not imported (the first here)", over, rd.caps.ShapesPerFile)}, over)
	}
	if err != nil {
		return it, nil, err
	}
	it.Media = strings.TrimSpace(head.Filename)
	if it.Media == "" {
		it.Media = path.Base(strings.ReplaceAll(strings.TrimSpace(head.Path), `\`, "/"))
	}
	w, _ := strconv.ParseFloat(strings.TrimSpace(head.Size.Width), 64)
	h, _ := strconv.ParseFloat(strings.TrimSpace(head.Size.Height), 64)
	it.Width, it.Height = int(w), int(h)
	return it, objects, nil
}

func (rd *reader) vocBox(rel string, line int, o vocObject) (Box, bool) {
	name := strings.TrimSpace(o.Name)
	if o.BndBox == nil || name == "" {
		rd.rep.add(Malformed, rel, line, "object without a name or a bndbox")
		return Box{}, false
	}
	var c [4]float64
	for i, s := range []string{o.BndBox.XMin, o.BndBox.YMin, o.BndBox.XMax, o.BndBox.YMax} {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			rd.rep.add(Malformed, rel, line, "%s: bndbox corner %q is not a finite number", name, s)
			return Box{}, false
		}
		c[i] = v
	}
	b := Box{Label: name, X: c[0] - 1, Y: c[1] - 1, W: c[2] - c[0] + 1, H: c[3] - c[1] + 1, Line: line}
	if c[2] < c[0] || c[3] < c[1] {
		rd.rep.add(ZeroSize, rel, line, "%s: xmax %g, ymax %g before xmin %g, ymin %g", name, c[2], c[3], c[0], c[1])
		return Box{}, false
	}
	if p := strings.TrimSpace(o.Pose); p != "" && p != "Unspecified" {
		b.Attributes = withAttr(b.Attributes, "pose", p)
	}
	for _, f := range []struct{ k, v string }{{"truncated", o.Truncated}, {"difficult", o.Difficult}, {"occluded", o.Occluded}} {
		if v := strings.TrimSpace(f.v); v == "1" || strings.EqualFold(v, "true") {
			b.Attributes = withAttr(b.Attributes, f.k, true)
		}
	}
	for _, a := range o.Attributes {
		b.Attributes = withAttr(b.Attributes, strings.TrimSpace(a.Name), strings.TrimSpace(a.Value))
	}
	return b, true
}

// Writing: Pascal VOC XML, the export (ExportVOC); its masks are vocseg.go's.

// vocRoot is the VOC devkit folder torchvision's VOCDetection and most VOC
// loaders expect: VOCdevkit/VOC2007/{Annotations,JPEGImages,ImageSets/Main}.
// 2007 because it is the VOC year with a test set: torchvision accepts
// image_set="test" only for year "2007", and our versions have a test split.
const vocRoot = "VOCdevkit/VOC2007/"

// vocWriter writes one XML per frame and the ImageSets/Main lists (stems, one
// a line), trainval being train followed by val as in VOC itself; frames
// with polygons or masks get VOC's segmentation PNGs too (vocseg.go).
type vocWriter struct {
	a     *archive
	lists [3]*spool
	seg   [3]*spool // ImageSets/Segmentation
	pal   color.Palette
	enc   png.Encoder
}

func newVOCWriter(a *archive) (*vocWriter, error) {
	lists, err := a.splitSpools()
	if err != nil {
		return nil, err
	}
	seg, err := a.splitSpools()
	return &vocWriter{a: a, lists: lists, seg: seg, pal: vocPalette(), enc: newPNGEncoder()}, err
}

func (v *vocWriter) frame(fr *Frame) error {
	a := v.a
	stem, file := baseName(fr.UniqueName), mediaFile(fr)
	if a.media {
		if err := a.copyMedia(vocRoot+"JPEGImages/"+file, fr); err != nil {
			return err
		}
	}
	segmented := vocSegmented(fr)
	a.text.Reset()
	a.text.Write(vocXML(a.text.AvailableBuffer(), fr, file, a.ds.Labels, segmented))
	if err := a.textEntry(vocRoot + "Annotations/" + stem + ".xml"); err != nil {
		return err
	}
	if segmented {
		if err := v.vocSegPNGs(fr, stem); err != nil {
			return err
		}
	}
	_, err := v.lists[splitIndex(fr.Split)].WriteString(stem + "\n")
	return err
}

// vocXML appends the annotation document. Corners are VOC's 1-based pixel
// indices of the first and last covered pixel: xmin = round(x)+1,
// xmax = round(x+w), clamped to the image and never below xmin. An augmented
// frame's document adds <augmented>1</augmented> and <derived_from>, its
// source's <filename>: VOC readers (torchvision's VOCDetection among them)
// take unknown elements as extra keys.
func vocXML(b []byte, fr *Frame, file string, labels []string, segmented bool) []byte {
	b = append(b, "<annotation>\n\t<folder>VOC2007</folder>\n\t<filename>"...)
	b = xmlText(b, file)
	b = append(b, "</filename>\n\t<size>\n\t\t<width>"...)
	b = strconv.AppendInt(b, int64(fr.Width), 10)
	b = append(b, "</width>\n\t\t<height>"...)
	b = strconv.AppendInt(b, int64(fr.Height), 10)
	b = append(b, "</height>\n\t\t<depth>3</depth>\n\t</size>\n\t<segmented>"...)
	b = append(b, "01"[boolInt(segmented)])
	b = append(b, "</segmented>\n"...)
	if fr.Augmented {
		b = append(b, "\t<augmented>1</augmented>\n\t<derived_from>"...)
		b = xmlText(b, sourceFile(fr))
		b = append(b, "</derived_from>\n"...)
	}
	for _, bx := range fr.Boxes {
		c, ok := vocCorners(bx, fr.Width, fr.Height)
		if !ok {
			continue
		}
		b = append(b, "\t<object>\n\t\t<name>"...)
		b = xmlText(b, labels[bx.ClassID])
		b = append(b, "</name>\n\t\t<pose>Unspecified</pose>\n\t\t<truncated>0</truncated>\n\t\t<difficult>0</difficult>\n\t\t<bndbox>\n"...)
		for i, tag := range [4]string{"xmin", "ymin", "xmax", "ymax"} {
			b = append(b, "\t\t\t<"+tag+">"...)
			b = strconv.AppendInt(b, int64(c[i]), 10)
			b = append(b, "</"+tag+">\n"...)
		}
		b = append(b, "\t\t</bndbox>\n\t</object>\n"...)
	}
	return append(b, "</annotation>\n"...)
}

// vocCorners gives xmin, ymin, xmax, ymax; false for a box outside the image.
func vocCorners(bx ExportBox, w, h int) ([4]int, bool) {
	r, ok := clip(bx, w, h)
	if !ok {
		return [4]int{}, false
	}
	c := [4]int{int(math.Round(r.x0)) + 1, int(math.Round(r.y0)) + 1, int(math.Round(r.x1)), int(math.Round(r.y1))}
	if w > 0 && h > 0 {
		c[0], c[2] = min(c[0], w), min(c[2], w)
		c[1], c[3] = min(c[1], h), min(c[3], h)
	}
	c[2], c[3] = max(c[2], c[0]), max(c[3], c[1])
	return c, true
}

func xmlText(b []byte, s string) []byte {
	w := appendWriter{b}
	xml.EscapeText(&w, []byte(s))
	return w.b
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (v *vocWriter) finish() error {
	a := v.a
	if err := a.splitEntries(vocRoot+"ImageSets/Main/", vocSplits, v.lists); err != nil {
		return err
	}
	if err := a.spoolEntryOf(vocRoot+"ImageSets/Main/trainval.txt", v.lists[0], v.lists[1]); err != nil {
		return err
	}
	if v.seg[0].n+v.seg[1].n+v.seg[2].n == 0 {
		return nil // no segmented frame: no segmentation lists, as before
	}
	if err := a.splitEntries(vocRoot+"ImageSets/Segmentation/", vocSplits, v.seg); err != nil {
		return err
	}
	return a.spoolEntryOf(vocRoot+"ImageSets/Segmentation/trainval.txt", v.seg[0], v.seg[1])
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
