package format

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ultralyticsWriter lays out the Ultralytics YOLO folder (YOLOv5 onwards):
// data.yaml, images/{train,val,test}/<uniqueName>.<ext> and
// labels/{train,val,test}/<uniqueName>.txt, where Ultralytics looks for an
// image's labels (its last "images" folder turned into "labels", the
// extension into .txt). data.yaml names the split folders relative to
// itself (no "path" key: Ultralytics then takes the yaml's folder as the
// root, wherever the archive is unpacked) and the classes as an id map.
// Augmented frames are listed in augmented/{train,val,test}.txt.
type ultralyticsWriter struct {
	a         *archive
	augmented *augmentedLists
	frames    [3]int // per split
	// lines writes a frame's label file: yoloLines, or YOLO Segmentation's.
	lines func(b []byte, fr *Frame) []byte
}

func newUltralyticsWriter(a *archive) (*ultralyticsWriter, error) {
	// The split folders exist even when empty: Ultralytics stops on a
	// missing val folder with a less clear message than on an empty one.
	for _, top := range []string{"images/", "labels/"} {
		for _, d := range vocSplits {
			if err := a.z.dir(a.path(top + d + "/")); err != nil {
				return nil, err
			}
		}
	}
	aug, err := newAugmentedLists(a, vocSplits)
	return &ultralyticsWriter{a: a, augmented: aug, lines: yoloLines}, err
}

func (u *ultralyticsWriter) frame(fr *Frame) error {
	if err := needSize(fr); err != nil {
		return err
	}
	a, i := u.a, splitIndex(fr.Split)
	dir := vocSplits[i]
	image := "images/" + dir + "/" + mediaFile(fr)
	if a.media {
		if err := a.copyMedia(image, fr); err != nil {
			return err
		}
	}
	a.text.Reset()
	a.text.Write(u.lines(a.text.AvailableBuffer(), fr))
	if err := a.textEntry("labels/" + dir + "/" + baseName(fr.UniqueName) + ".txt"); err != nil {
		return err
	}
	u.frames[i]++
	return u.augmented.add(fr, image, "images/"+dir+"/"+sourceFile(fr))
}

func (u *ultralyticsWriter) finish() error {
	a := u.a
	if err := a.z.bytesEntry(a.path("data.yaml"), []byte(ultralyticsYAML(a.ds, u.frames))); err != nil {
		return err
	}
	return u.augmented.finish()
}

// ultralyticsYAML is data.yaml: test only when the version has test
// frames (Ultralytics validates on val and reads test only when named).
// Names are JSON strings, which are YAML double-quoted scalars, so any
// label reads back as written.
func ultralyticsYAML(ds Dataset, frames [3]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s, exported by framelake (Ultralytics YOLO layout).\n", oneLine(ds.Name), oneLine(ds.Version))
	b.WriteString("# Paths are relative to this file's folder.\n")
	b.WriteString("train: images/train\nval: images/val\n")
	if frames[splitIndex(SplitTest)] > 0 {
		b.WriteString("test: images/test\n")
	}
	fmt.Fprintf(&b, "nc: %d\nnames:\n", len(ds.Labels))
	for i, l := range ds.Labels {
		q, _ := json.Marshal(l)
		fmt.Fprintf(&b, "  %d: %s\n", i, q)
	}
	return b.String()
}

// oneLine keeps a name on its comment line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
