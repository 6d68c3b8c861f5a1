package format

import (
	"fmt"
	"strconv"
	"strings"
)

// yoloWriter lays out a darknet training folder: images per split folder with
// a label file beside each, list files that darknet reads relative to its
// working directory (the archive root), obj.data and obj.names. Without media
// the lists still name the image paths, so putting the images in place makes
// the folder trainable. Augmented frames are listed in augmented/.
type yoloWriter struct {
	a         *archive
	lists     [3]*spool
	augmented *augmentedLists
}

func newYOLOWriter(a *archive) (*yoloWriter, error) {
	aug, err := newAugmentedLists(a, splitDirs)
	if err != nil {
		return nil, err
	}
	lists, err := a.splitSpools()
	return &yoloWriter{a: a, lists: lists, augmented: aug}, err
}

func (y *yoloWriter) frame(fr *Frame) error {
	if err := needSize(fr); err != nil {
		return err
	}
	a, dir := y.a, splitDirs[splitIndex(fr.Split)]
	image := dir + "/" + mediaFile(fr)
	label := dir + "/" + baseName(fr.UniqueName) + ".txt"
	if a.media {
		if err := a.copyMedia(image, fr); err != nil {
			return err
		}
	}
	a.text.Reset()
	a.text.Write(yoloLines(a.text.AvailableBuffer(), fr))
	if err := a.textEntry(label); err != nil {
		return err
	}
	// Debian's darknet (pjreddie, 2018) finds a label file by replacing the
	// first "images", "JPEGImages" or "raw" anywhere in the image path with
	// "labels"; uniqueNames carry collection and file names, so "raw-..." is
	// likely. Such frames get a second copy where that darknet looks.
	if alt := darknetLabelPath(image); alt != label {
		if err := a.textEntry(alt); err != nil {
			return err
		}
	}
	if err := y.augmented.add(fr, image, dir+"/"+sourceFile(fr)); err != nil {
		return err
	}
	_, err := y.lists[splitIndex(fr.Split)].WriteString(image + "\n")
	return err
}

// yoloLines appends "class cx cy w h" lines, normalized with 6 decimals, of
// the boxes clipped to the image; boxes wholly outside it are left out.
func yoloLines(b []byte, fr *Frame) []byte {
	w, h := float64(fr.Width), float64(fr.Height)
	for _, bx := range fr.Boxes {
		r, ok := clip(bx, fr.Width, fr.Height)
		if !ok {
			continue
		}
		b = strconv.AppendInt(b, int64(bx.ClassID), 10)
		for _, v := range [4]float64{(r.x0 + r.x1) / 2 / w, (r.y0 + r.y1) / 2 / h, (r.x1 - r.x0) / w, (r.y1 - r.y0) / h} {
			b = append(b, ' ')
			b = strconv.AppendFloat(b, v, 'f', 6, 64)
		}
		b = append(b, '\n')
	}
	return b
}

// darknetLabelPath is where Debian's darknet looks for an image's labels
// (src/data.c fill_truth_detection): each find_replace swaps the first match.
func darknetLabelPath(image string) string {
	p := image
	for _, r := range [][2]string{
		{"images", "labels"}, {"JPEGImages", "labels"}, {"raw", "labels"},
		{".jpg", ".txt"}, {".png", ".txt"}, {".JPG", ".txt"}, {".JPEG", ".txt"},
	} {
		p = strings.Replace(p, r[0], r[1], 1)
	}
	return p
}

func (y *yoloWriter) finish() error {
	a := y.a
	var names strings.Builder
	for _, l := range a.ds.Labels {
		names.WriteString(l + "\n")
	}
	data := fmt.Sprintf("classes = %d\ntrain = train.txt\nvalid = valid.txt\nnames = obj.names\nbackup = backup/\n", len(a.ds.Labels))
	for _, e := range []struct{ name, body string }{{"obj.names", names.String()}, {"obj.data", data}} {
		if err := a.z.bytesEntry(a.path(e.name), []byte(e.body)); err != nil {
			return err
		}
	}
	// darknet saves weights into backup/ and exits on a missing folder.
	if err := a.z.dir(a.path("backup/")); err != nil {
		return err
	}
	if err := y.augmented.finish(); err != nil {
		return err
	}
	return a.splitEntries("", splitDirs, y.lists)
}
