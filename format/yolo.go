package format

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// YOLO layouts read: Ultralytics (data.yaml; images/<split>/x.jpg with
// labels/<split>/x.txt, or <split>/images with <split>/labels) and Darknet
// (obj.names or classes.txt; x.txt beside x.jpg). A label file is the
// image's path with its last "images" folder turned into "labels" and the
// extension into .txt, or the .txt beside the image.

// yoloLists are .txt files of a YOLO tree that are not label files.
var yoloLists = map[string]bool{"classes.txt": true, "train.txt": true, "val.txt": true, "valid.txt": true,
	"test.txt": true, "readme.txt": true, "readme.dataset.txt": true, "readme.roboflow.txt": true}

// yoloNamesFile finds the file that names the classes, "" when none.
func yoloNamesFile(t *tree) string {
	for _, name := range []string{"data.yaml", "data.yml", "dataset.yaml", "obj.names", "classes.txt"} {
		if t.files[name] {
			return name
		}
	}
	for _, f := range t.withExt(".names") {
		return f
	}
	for _, f := range append(t.withExt(".yaml"), t.withExt(".yml")...) {
		if strings.Contains(string(t.head(f, 1<<16)), "names:") {
			return f
		}
	}
	return ""
}

func (rd *reader) yolo() error {
	names := []string{}
	var pose *yoloPose
	if nf := yoloNamesFile(rd.tree); nf != "" {
		b, err := os.ReadFile(rd.tree.abs(nf))
		if err != nil {
			return relErr(err, nf)
		}
		if strings.HasSuffix(nf, ".yaml") || strings.HasSuffix(nf, ".yml") {
			names = yamlNames(string(b))
			pose = rd.readYOLOPose(nf, string(b))
		} else {
			names = lines(string(b))
		}
		rd.rep.Notes = append(rd.rep.Notes, "classes named by "+nf)
	} else {
		rd.rep.Notes = append(rd.rep.Notes, "no data.yaml, obj.names or classes.txt: labels are the class numbers")
	}
	if len(names) > rd.caps.Categories {
		rd.catOver += len(names) - rd.caps.Categories
		names = names[:rd.caps.Categories]
	}
	rd.rep.Categories = names
	labelled := map[string]bool{}
	for _, img := range rd.tree.images {
		lf := yoloLabelFile(rd.tree, img)
		if lf == "" {
			continue
		}
		labelled[lf] = true
		rd.found = true
		boxes, err := rd.yoloFile(lf, names, pose)
		if err != nil {
			return err
		}
		if err := rd.send(Item{Media: img, Source: lf, Boxes: boxes}); err != nil {
			return err
		}
	}
	for _, f := range rd.tree.withExt(".txt") {
		if !labelled[f] && isYOLOLabelPlace(rd.tree, f) {
			rd.found = true
			rd.rep.add(LabelWithoutImage, f, 0, "no image %s.* beside it or under images/", strings.TrimSuffix(path.Base(f), ".txt"))
		}
	}
	return nil
}

// yoloLabelFile is the label file of img, "" when it has none.
func yoloLabelFile(t *tree, img string) string {
	stem := strings.TrimSuffix(img, path.Ext(img)) + ".txt"
	elems := strings.Split(stem, "/")
	for i := len(elems) - 2; i >= 0; i-- {
		if elems[i] == "images" {
			elems[i] = "labels"
			if p := strings.Join(elems, "/"); t.files[p] {
				return p
			}
			break
		}
	}
	if t.files[stem] {
		return stem
	}
	return ""
}

// isYOLOLabelPlace tells a .txt that should have had an image (in a labels
// folder, or among images) from the lists and notes a tree also holds.
func isYOLOLabelPlace(t *tree, f string) bool {
	if yoloLists[strings.ToLower(path.Base(f))] {
		return false
	}
	if strings.HasPrefix(f, "labels/") || strings.Contains(f, "/labels/") {
		return true
	}
	dir := pathDir(f)
	for _, img := range t.images {
		if pathDir(img) == dir {
			return true
		}
	}
	return false
}

// yoloFile reads one label file: "class cx cy w h" a line, normalised;
// a sixth number (a confidence) is left out; a longer line of coordinate
// pairs is a segment (a polygon); with pose declared, a line of its
// length is a box with keypoints (yolopose.go).
func (rd *reader) yoloFile(rel string, names []string, pose *yoloPose) ([]Box, error) {
	f, err := os.Open(rd.tree.abs(rel))
	if err != nil {
		return nil, relErr(err, rel)
	}
	defer f.Close()
	var boxes []Box
	over, overLine := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(boxes) >= rd.caps.ShapesPerFile {
			if over++; over == 1 {
				overLine = n
			}
			continue
		}
		b, ok := rd.yoloLine(rel, n, fields, names, pose)
		if ok {
			boxes = append(boxes, b)
		}
	}
	if over > 0 {
		rd.rep.AddN(Problem{Kind: OverLimit, File: rel, Line: overLine, Message: fmt.Sprintf(
			"%d lines past the limit of %d boxes a file, not imported (the first here)", over, rd.caps.ShapesPerFile)}, over)
	}
	if err := sc.Err(); err != nil {
		rd.rep.add(Malformed, rel, 0, "unreadable: %v", relErr(err, rel))
	}
	return boxes, nil
}

func (rd *reader) yoloLine(rel string, n int, fields []string, names []string, pose *yoloPose) (Box, bool) {
	cls, err := strconv.Atoi(fields[0])
	nums := make([]float64, len(fields)-1)
	for i, s := range fields[1:] {
		v, perr := strconv.ParseFloat(s, 64)
		if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			err = perr
			if err == nil {
				err = strconv.ErrRange
			}
		}
		nums[i] = v
	}
	isPose := pose != nil && len(nums) == 4+pose.k*pose.dims
	// A pose data set has no segments: a line of another length is a pose
	// that lost or gained numbers, not a polygon.
	segment := pose == nil && len(nums) >= 6 && len(nums)%2 == 0
	if err != nil || cls < 0 || !(len(nums) == 4 || len(nums) == 5 || segment || isPose) {
		want := `"class cx cy w h" or "class x1 y1 x2 y2 ..."`
		if pose != nil {
			want = fmt.Sprintf(`"class cx cy w h" or, as data.yaml's kpt_shape says, a pose: "class cx cy w h" and %d points of %d numbers`, pose.k, pose.dims)
		}
		rd.rep.add(Malformed, rel, n, "want %s with a class number and numbers, got %q", want, strings.Join(fields, " "))
		return Box{}, false
	}
	label := strconv.Itoa(cls)
	if len(names) > 0 {
		if cls >= len(names) {
			rd.rep.add(UnknownCategory, rel, n, "class %d: the names list has %d classes", cls, len(names))
			return Box{}, false
		}
		label = names[cls]
	}
	b := Box{Label: label, Relative: true, Line: n}
	if segment {
		// Ultralytics' segmentation line: a polygon in fractions of the
		// image; Fit places it and gives it its box.
		b.Geometry = shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{nums}}
		return b, true
	}
	b.X, b.Y, b.W, b.H = nums[0]-nums[2]/2, nums[1]-nums[3]/2, nums[2], nums[3]
	if b.W <= 0 || b.H <= 0 {
		rd.rep.add(ZeroSize, rel, n, "%s box of size %gx%g", label, b.W, b.H)
		return Box{}, false
	}
	if isPose {
		kps, ok := rd.poseKeypoints(pose, rel, n, cls, nums)
		if !ok {
			return Box{}, false
		}
		if shape.Labelled(kps) > 0 {
			b.Geometry = shape.Geometry{Type: shape.Keypoints, Keypoints: kps}
		}
	}
	return b, true
}

// lines are the non-empty trimmed lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// yamlNames reads the names of a YOLO data.yaml in the three ways
// Ultralytics and Roboflow write them: names: [a, b], a block list
// "- a", or a map "0: a". Only this key is read, so no YAML library.
func yamlNames(s string) []string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		rest, ok := strings.CutPrefix(l, "names:")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(stripComment(rest))
		if strings.HasPrefix(rest, "[") {
			for j := i + 1; !strings.Contains(rest, "]") && j < len(ls); j++ {
				rest += " " + strings.TrimSpace(ls[j])
			}
			rest = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(rest), "["), "]")
			var out []string
			for _, n := range strings.Split(rest, ",") {
				if n = unquote(n); n != "" {
					out = append(out, n)
				}
			}
			return out
		}
		return yamlBlock(ls[i+1:])
	}
	return nil
}

// yamlBlock reads the indented lines under names:, a list or an id map.
func yamlBlock(ls []string) []string {
	byID := map[int]string{}
	var list []string
	for _, l := range ls {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if l[0] != ' ' && l[0] != '\t' && l[0] != '-' {
			break
		}
		l = strings.TrimSpace(stripComment(l))
		if v, ok := strings.CutPrefix(l, "-"); ok {
			list = append(list, unquote(v))
		} else if k, v, ok := strings.Cut(l, ":"); ok {
			if id, err := strconv.Atoi(strings.TrimSpace(k)); err == nil {
				byID[id] = unquote(v)
			}
		}
	}
	for id := 0; id < len(byID); id++ {
		list = append(list, byID[id])
	}
	return list
}

// stripComment cuts a " #" comment that is not inside a quoted scalar.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case (c == '"' || c == '\'') && (i == 0 || strings.IndexByte(" \t[,", s[i-1]) >= 0):
			quote = c // a quote opens a scalar only at its start: "don't" is plain
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// unquote reads a plain or quoted YAML scalar; a double-quoted one may
// carry escapes (framelake's Ultralytics export writes names as JSON
// strings, which are such scalars).
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var v string
		if json.Unmarshal([]byte(s), &v) == nil {
			return v
		}
	}
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// Writing: YOLO Darknet, the export (ExportYOLO); Ultralytics layouts are
// ultralytics.go's and yoloshapes.go's.

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
