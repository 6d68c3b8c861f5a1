// Writing. Write exports a dataset version as a zip archive in one of the
// export formats: RAW, YOLO Darknet and Semantic Segmentation (the formats of
// the interface), and COCO, Pascal VOC, TFRecord, YOLO Ultralytics, YOLO
// Segmentation, YOLO Pose and CVAT (for images 1.1) beyond it. It also gives
// the per-frame box conventions of the REST Download Dataset operation
// (YOLOBoxes, RCNNBoxes, TFBoxes).
//
// Write streams: frames are pulled one at a time, media is copied as stored
// (never decoded or re-encoded), and the zip's central directory is spooled
// to a temp file, so memory stays flat however many frames a version has.
// Aggregates that a format needs in one file (split lists, COCO JSON, the RAW
// document, TFRecord shards) go through temp files too and are appended when
// their turn comes; all temp files are removed before Write returns.
//
// Archive layout (decided here): every entry sits under one root folder,
// "<dataset>-<version>-<format>/" (slugs, e.g. "streets-1.0-yolo-darknet/"),
// so unpacking never spills files into the current directory. Inside it:
//
//	YOLO Darknet          obj.names, obj.data, train.txt, valid.txt, test.txt, backup/,
//	                      {train,valid,test}/<uniqueName>.<ext> with <uniqueName>.txt beside it
//	YOLO Ultralytics      data.yaml, images/{train,val,test}/<uniqueName>.<ext>,
//	                      labels/{train,val,test}/<uniqueName>.txt
//	Semantic Segmentation labelmap.txt, ImageSets/Segmentation/{train,val,test}.txt,
//	                      SegmentationClass/<uniqueName>.png, JPEGImages/<uniqueName>.<ext>
//	Pascal VOC            VOCdevkit/VOC2007/{Annotations/<uniqueName>.xml, JPEGImages/...,
//	                      ImageSets/Main/{train,val,trainval,test}.txt}; frames with segments add
//	                      Segmentation{Class,Object}/<uniqueName>.png, ImageSets/Segmentation/ (vocseg.go)
//	COCO                  {train,valid,test}/annotations.json beside the images
//	TFRecord              label_map.pbtxt, {train,valid,test}-NNNNN.tfrecord
//	RAW                   dataset.json, {train,valid,test}/<uniqueName>.<ext>
//	YOLO Segmentation     as YOLO Ultralytics, outline lines (yoloshapes.go)
//	YOLO Pose             as YOLO Ultralytics, pose lines; data.yaml adds kpt_shape, kpt_names, flip_idx
//	CVAT                  annotations.xml, images/<uniqueName>.<ext>
//
// Augmented frames are marked in every format, in a way its readers ignore:
// RAW frames carry augmented, derivedFrom and params; COCO image records get
// "augmented": true and "derived_from": <the source's file_name>; Pascal VOC
// XML gets <augmented>1</augmented> and <derived_from>, the source's
// <filename>; TFRecord examples all carry image/augmented (int64 0 or 1) and
// image/derived_from (the source's image/source_id, empty for real frames);
// YOLO Darknet, the three Ultralytics layouts, CVAT and Semantic Segmentation, whose files have
// no room for it, get augmented/<split>.txt (Darknet and CVAT: train, valid, test;
// Ultralytics and segmentation: train, val, test), one line per augmented frame: its image and its source's, as
// the split lists name images (YOLO paths, segmentation stems), separated by
// a space. An augmented frame's source is in the same split, since augmented
// frames inherit it.
//
// Split "validation" is "valid" in folder and list names, and "val" in the
// Ultralytics and the two VOC-style layouts, as each ecosystem expects. Media files are named
// "<uniqueName>.<ext>" with the stored extension lower-cased and "jpeg"
// spelled "jpg", because darknet and torchvision derive label paths from
// ".jpg"; the bytes are the stored ones.

package format

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// ExportType is an export format. The values are the names users pass as
// export_type. (Format, in format.go, names the layouts import reads.)
type ExportType string

const (
	ExportRAW                  ExportType = "RAW"
	ExportYOLO                 ExportType = "YOLO Darknet"
	ExportSemanticSegmentation ExportType = "Semantic Segmentation"
	ExportCOCO                 ExportType = "COCO"
	ExportVOC                  ExportType = "Pascal VOC"
	ExportTFRecord             ExportType = "TFRecord"
	ExportYOLOUltralytics      ExportType = "YOLO Ultralytics"
	ExportYOLOSegmentation     ExportType = "YOLO Segmentation"
	ExportYOLOPose             ExportType = "YOLO Pose"
	ExportCVAT                 ExportType = "CVAT"
)

var exportTypes = [...]ExportType{ExportRAW, ExportYOLO, ExportSemanticSegmentation, ExportCOCO, ExportVOC,
	ExportTFRecord, ExportYOLOUltralytics, ExportYOLOSegmentation, ExportYOLOPose, ExportCVAT}

// ExportTypes lists every export format in a stable order.
func ExportTypes() []ExportType { return append([]ExportType(nil), exportTypes[:]...) }

// ParseExportType returns the export format named s, ignoring case.
func ParseExportType(s string) (ExportType, error) {
	for _, f := range exportTypes {
		if strings.EqualFold(strings.TrimSpace(s), string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(exportTypes))
	for i, f := range exportTypes {
		names[i] = "'" + string(f) + "'"
	}
	return "", errs.Invalid("export_type", "export_type %q is not one of %s", s, strings.Join(names, ", "))
}

// slug names the format in the archive's root folder.
func (f ExportType) slug() string { return slugify(string(f)) }

// ExportBox is one annotation box of a frame, and the shape it is the box of
// when it is more (a polygon, mask, keypoints or polyline): formats that
// keep shapes write it, the others the box.
type ExportBox struct {
	Label   string
	ClassID int     // 0-based index into Dataset.Labels
	X, Y    float64 // top-left corner in pixels, origin at the image's top-left
	W, H    float64 // size in pixels
	shape.Geometry
	// Attributes are the annotation's (nil when none): COCO and CVAT write
	// them; COCO's iscrowd and CVAT's occluded and rotation are read from here.
	Attributes map[string]any
	// Track is the video track's number when the shape is a track's on a
	// frame sampled from a video, nil otherwise; Interpolated says it lies
	// between keyframes. COCO writes both (track_id, and attributes
	// track_id and keyframe), RAW too.
	Track        *int
	Interpolated bool
}

// Frame is one image of a dataset version, real or augmented.
type Frame struct {
	UniqueName  string
	Name        string // original file name
	Ext         string // stored extension, e.g. "jpg"
	Split       string // "train", "test" or "validation"
	Augmented   bool
	DerivedFrom string // uniqueName of the source of an augmented frame
	// DerivedFromExt is the source's stored extension, which names its media
	// file; "" when it is the frame's own.
	DerivedFromExt string
	Width          int
	Height         int
	Boxes          []ExportBox
	Params         json.RawMessage // augmentation steps; may be nil
	// Open returns the media bytes as stored; nil when media is not included.
	Open func() (io.ReadCloser, error)
	// Video is the uniqueName of the video the frame was sampled from ("" for
	// an image) and VideoFrame its frame there; COCO and RAW write them.
	Video      string
	VideoFrame int
}

// Dataset describes the version being exported.
type Dataset struct {
	Name    string
	Version string
	Labels  []string // class order: Box.ClassID indexes it
	// Skeletons finds a keypoints label's declaration (point order, edges,
	// flip pairs) for COCO's categories, YOLO Pose's kpt_shape and flip_idx
	// and CVAT's skeleton labels; nil, or nil for a label, when none is
	// declared: the points are then ordered as first seen.
	Skeletons shape.SkeletonOf
}

// Split names as frames carry them.
const (
	SplitTrain      = "train"
	SplitValidation = "validation"
	SplitTest       = "test"
)

var splits = [...]string{SplitTrain, SplitValidation, SplitTest}

// splitIndex gives a split's position in splits, -1 when unknown.
func splitIndex(s string) int {
	for i, v := range splits {
		if v == s {
			return i
		}
	}
	return -1
}

// Folder and list names of the splits: darknet and Roboflow-style layouts say
// "valid", the VOC-style ones "val".
var (
	splitDirs = [...]string{"train", "valid", "test"}
	vocSplits = [...]string{"train", "val", "test"}
)

// Write streams a zip archive of the dataset in format f to w, reading frames
// one at a time from next until it returns io.EOF. includeMedia=false writes
// annotations only (Frame.Open is then not called). Memory stays constant in
// the number of frames; temp files hold aggregates and are removed on return.
// On an error the bytes already written are a truncated archive: an HTTP
// handler should abort the response rather than end it normally.
func Write(ctx context.Context, w io.Writer, f ExportType, ds Dataset, next func() (Frame, error), includeMedia bool) (err error) {
	if _, err := ParseExportType(string(f)); err != nil {
		return err
	}
	if err := checkDataset(ds); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "framelake-export-")
	if err != nil {
		return errs.Wrap(errs.Internal, err, "export: temp dir")
	}
	defer os.RemoveAll(tmp)
	a, err := newArchive(w, tmp, rootFolder(ds, f), ds, includeMedia)
	if err != nil {
		return err
	}
	defer a.close()
	if a.skel, err = declaredSkeletons(ctx, ds); err != nil {
		return err
	}
	fw, err := newFormatWriter(f, a)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fr, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := a.checkFrame(&fr); err != nil {
			return err
		}
		if err := fw.frame(&fr); err != nil {
			return errs.Prefix(err, "export frame "+fr.UniqueName)
		}
	}
	if err := fw.finish(); err != nil {
		return err
	}
	return a.z.close()
}

// formatWriter is one format's layout: frame is called per frame in the order
// given, finish once after the last.
type formatWriter interface {
	frame(fr *Frame) error
	finish() error
}

func newFormatWriter(f ExportType, a *archive) (formatWriter, error) {
	switch f {
	case ExportYOLO:
		return newYOLOWriter(a)
	case ExportYOLOUltralytics:
		return newUltralyticsWriter(a)
	case ExportSemanticSegmentation:
		return newSegWriter(a)
	case ExportVOC:
		return newVOCWriter(a)
	case ExportCOCO:
		return newCOCOWriter(a)
	case ExportTFRecord:
		return newTFWriter(a)
	case ExportYOLOSegmentation:
		return newYOLOSegWriter(a)
	case ExportYOLOPose:
		return newYOLOPoseWriter(a)
	case ExportCVAT:
		return newCVATWriter(a)
	default:
		return newRAWWriter(a)
	}
}

func checkDataset(ds Dataset) error {
	if len(ds.Labels) == 0 {
		return errs.Invalid("labels", "a dataset export needs at least one label")
	}
	seen := make(map[string]bool, len(ds.Labels))
	for _, l := range ds.Labels {
		if l == "" || strings.ContainsAny(l, "\n\r") {
			return errs.Invalid("labels", "label %q is empty or spans lines", l)
		}
		if seen[l] {
			return errs.Invalid("labels", "label %q appears twice", l)
		}
		seen[l] = true
	}
	return nil
}

// checkFrame rejects frames the layouts cannot name or place; it is the
// caller's data, so the errors say which frame.
func (a *archive) checkFrame(fr *Frame) error {
	bad := func(format string, args ...any) error {
		return errs.New(errs.FailedPrecondition, "", "export frame %q: %s", fr.UniqueName, fmt.Sprintf(format, args...))
	}
	if fr.UniqueName == "" {
		return errs.New(errs.FailedPrecondition, "", "export: a frame has no uniqueName")
	}
	if splitIndex(fr.Split) < 0 {
		return bad("split %q is not train, validation or test", fr.Split)
	}
	if fr.Width < 0 || fr.Height < 0 {
		return bad("negative size %dx%d", fr.Width, fr.Height)
	}
	if fr.Augmented && fr.DerivedFrom == "" {
		return bad("augmented but derived from no frame")
	}
	if a.media && fr.Open == nil {
		return bad("media requested but the frame has none")
	}
	if len(fr.Params) > 0 && !json.Valid(fr.Params) {
		return bad("params are not JSON")
	}
	for i, b := range fr.Boxes {
		if b.ClassID < 0 || b.ClassID >= len(a.ds.Labels) {
			return bad("box %d has class %d of %d labels", i, b.ClassID, len(a.ds.Labels))
		}
		if b.Label != "" && b.Label != a.ds.Labels[b.ClassID] {
			return bad("box %d label %q is not class %d (%q)", i, b.Label, b.ClassID, a.ds.Labels[b.ClassID])
		}
		for _, v := range []float64{b.X, b.Y, b.W, b.H} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad("box %d is not finite", i)
			}
		}
	}
	return nil
}

// needSize is for formats that normalize by or rasterize at the image size.
func needSize(fr *Frame) error {
	if fr.Width <= 0 || fr.Height <= 0 {
		return errs.New(errs.FailedPrecondition, "", "frame has no image size")
	}
	return nil
}

// rootFolder is the single top folder of the archive.
func rootFolder(ds Dataset, f ExportType) string {
	name := slugify(ds.Name)
	if name == "" {
		name = "dataset"
	}
	parts := []string{name}
	if v := slugify(ds.Version); v != "" {
		parts = append(parts, v)
	}
	return strings.Join(append(parts, f.slug()), "-") + "/"
}

// slugify keeps lower-case letters, digits, dots and dashes; runs of anything
// else become one dash.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' && b.Len() > 0 {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-.")
}

// baseName makes a uniqueName safe as one path element: it keeps letters,
// digits, '-', '_' and '.', and never yields "", "." or "..".
func baseName(unique string) string {
	b := []byte(unique)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	s := string(b)
	if strings.Trim(s, ".") == "" {
		s = strings.Repeat("_", len(s)+1)
	}
	return s
}

// mediaExt is the extension media is stored under in the archive.
func mediaExt(ext string) string {
	e := strings.ToLower(strings.TrimPrefix(ext, "."))
	for _, c := range []byte(e) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "bin"
		}
	}
	switch e {
	case "":
		return "bin"
	case "jpeg", "jpe":
		return "jpg"
	}
	return e
}

// mediaFile is the file name of a frame's media.
func mediaFile(fr *Frame) string { return baseName(fr.UniqueName) + "." + mediaExt(fr.Ext) }

// sourceFile is the file name of an augmented frame's source's media.
func sourceFile(fr *Frame) string {
	ext := fr.DerivedFromExt
	if ext == "" {
		ext = fr.Ext
	}
	return baseName(fr.DerivedFrom) + "." + mediaExt(ext)
}

// augmentedLists are the augmented/<split>.txt files of the layouts whose
// own files cannot mark augmented frames: one line per augmented frame, its
// image and its source's as the layout's split lists name images.
type augmentedLists struct {
	a     *archive
	names [3]string // list names per split
	lists [3]*spool
}

func newAugmentedLists(a *archive, names [3]string) (*augmentedLists, error) {
	lists, err := a.splitSpools()
	return &augmentedLists{a: a, names: names, lists: lists}, err
}

// add lists an augmented frame; real frames are not listed.
func (l *augmentedLists) add(fr *Frame, image, source string) error {
	if !fr.Augmented {
		return nil
	}
	_, err := l.lists[splitIndex(fr.Split)].WriteString(image + " " + source + "\n")
	return err
}

func (l *augmentedLists) finish() error { return l.a.splitEntries("augmented/", l.names, l.lists) }
