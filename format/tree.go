package format

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// imageExts are the image extensions readers look for; the caller's media
// checks decide later what is really an image.
var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".bmp": true, ".webp": true,
	".tif": true, ".tiff": true, ".gif": true}

// tree is one walk of the folder read: every file by its slash-separated
// path relative to root, the images among them, and the images by base name
// (for formats that name an image without its folder).
type tree struct {
	root   string
	files  map[string]bool
	images []string // sorted
	byBase map[string][]string
	other  []string // sorted non-image files
}

// scanTree walks dir, skipping hidden files and folders as import does.
func scanTree(dir string) (*tree, error) {
	t := &tree{root: dir, files: map[string]bool{}, byBase: map[string][]string{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		t.files[rel] = true
		if imageExts[strings.ToLower(path.Ext(rel))] {
			t.images = append(t.images, rel)
			b := strings.ToLower(path.Base(rel))
			t.byBase[b] = append(t.byBase[b], rel)
		} else {
			t.other = append(t.other, rel)
		}
		return nil
	})
	sort.Strings(t.images)
	sort.Strings(t.other)
	return t, err
}

// find returns the first candidate path that is an image of the tree, then
// the one image whose base name is name's (case aside), or "".
func (t *tree) find(name string, candidates ...string) string {
	for _, c := range candidates {
		c = path.Clean(strings.TrimPrefix(c, "./"))
		if t.files[c] && imageExts[strings.ToLower(path.Ext(c))] {
			return c
		}
	}
	if m := t.byBase[strings.ToLower(path.Base(name))]; len(m) == 1 {
		return m[0]
	}
	return ""
}

// withExt lists the non-image files ending in ext, sorted.
func (t *tree) withExt(ext string) []string {
	var out []string
	for _, f := range t.other {
		if strings.EqualFold(path.Ext(f), ext) {
			out = append(out, f)
		}
	}
	return out
}

// head returns the first n bytes of a file of the tree.
func (t *tree) head(rel string, n int) []byte {
	f, err := os.Open(t.abs(rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := io.ReadFull(f, b)
	return b[:k]
}

func (t *tree) abs(rel string) string { return filepath.Join(t.root, filepath.FromSlash(rel)) }

// pathDir is path.Dir with "" for the root.
func pathDir(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// joinRel joins slash paths relative to the root, "" being the root.
func joinRel(elem ...string) string { return path.Clean(path.Join(elem...)) }

// splitOf finds the split a path names in one of its folders, deepest
// first (and in its file name too when withFile: COCO's
// instances_val2017.json): train, val (also valid, validation) or test.
func splitOf(p string, withFile bool) string {
	elems := strings.Split(p, "/")
	if !withFile {
		elems = elems[:len(elems)-1]
	}
	for i := len(elems) - 1; i >= 0; i-- {
		e := strings.ToLower(strings.TrimSuffix(elems[i], path.Ext(elems[i])))
		for _, tok := range strings.FieldsFunc(e, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' }) {
			if s := splitName(strings.TrimRight(tok, "0123456789")); s != "" {
				return s
			}
		}
	}
	return ""
}

// splitName maps the names tools give splits to train, val and test.
func splitName(s string) string {
	switch strings.ToLower(s) {
	case "train", "training":
		return "train"
	case "val", "valid", "validation":
		return "val"
	case "test", "testing":
		return "test"
	}
	return ""
}

// detect recognises the format of a tree from its files and says why.
func detect(t *tree) (Format, string, error) {
	for _, x := range t.withExt(".xml") {
		h := t.head(x, 4096)
		if bytes.Contains(h, []byte("<annotations")) && bytes.Contains(h, []byte("<version>1.1")) {
			return CVAT, fmt.Sprintf("%s is a CVAT for images 1.1 XML (<annotations>, <version>1.1)", x), nil
		}
	}
	for _, j := range t.withExt(".json") {
		h := bytes.TrimSpace(t.head(j, 8192))
		switch {
		case isLabelmeHead(h):
			return Labelme, fmt.Sprintf("%s is a labelme JSON (an object with shapes)", j), nil
		case isCOCOHead(h):
			return COCO, fmt.Sprintf("%s is a COCO JSON (an object with images)", j), nil
		case bytes.HasPrefix(h, []byte("[")) && (bytes.Contains(h, []byte(`"data"`)) || bytes.Contains(h, []byte(`"result"`))):
			return LabelStudio, fmt.Sprintf("%s is a Label Studio JSON export (a list of tasks with data)", j), nil
		}
	}
	for _, x := range t.withExt(".xml") {
		if bytes.Contains(t.head(x, 4096), []byte("<annotation>")) {
			return VOC, fmt.Sprintf("%s is a Pascal VOC XML (<annotation>)", x), nil
		}
	}
	if png := vocSegOnly(t); png != "" {
		return VOC, fmt.Sprintf("%s is a Pascal VOC segmentation PNG (SegmentationClass)", png), nil
	}
	if names := yoloNamesFile(t); names != "" {
		return YOLO, fmt.Sprintf("%s names YOLO classes", names), nil
	}
	for _, f := range t.withExt(".txt") {
		if strings.HasPrefix(f, "labels/") || strings.Contains(f, "/labels/") {
			return YOLO, fmt.Sprintf("%s is a YOLO label file in a labels folder", f), nil
		}
	}
	return Raw, "no labels recognised (no COCO, Label Studio or labelme JSON, VOC or CVAT XML, YOLO names or labels folder): media only", nil
}

// isCOCOHead tells a COCO JSON by its first bytes: an object whose keys
// include images, annotations or categories (tools write them in any order,
// after info and licenses).
func isCOCOHead(h []byte) bool {
	if !bytes.HasPrefix(h, []byte("{")) {
		return false
	}
	for _, k := range []string{`"images"`, `"annotations"`, `"categories"`} {
		if bytes.Contains(h, []byte(k)) {
			return true
		}
	}
	return false
}
