package format

import (
	"encoding/xml"
	"image/color"
	"image/png"
	"math"
	"strconv"
)

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
