package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// Label Studio's JSON export: a list of tasks, each with data (the image's
// URL: /data/upload/<project>/<8 hex>-<name> for uploads,
// /data/local-files/?d=<path> for local storage, or any URL) and
// annotations whose results give shapes in percent of the image:
// rectanglelabels (x, y, width, height), polygonlabels (points), keypointlabels
// (x, y: one point, named and labelled by its label, as Label Studio groups
// no points into an instance), brushlabels (a mask from its RLE, lsbrush.go)
// and choices (a class each); ellipses and brushes in another format than
// "rle" are counted ignored. The first annotation not cancelled is
// read; predictions are not (they are a model's, not a human's). The
// images are found in the folder by base name, with or without the
// upload's prefix.

type lsTask struct {
	ID          int64          `json:"id"`
	Data        map[string]any `json:"data"`
	FileUpload  string         `json:"file_upload"`
	Annotations []struct {
		ID           int64      `json:"id"`
		WasCancelled bool       `json:"was_cancelled"`
		Result       []lsResult `json:"result"`
	} `json:"annotations"`
}

type lsResult struct {
	Type           string `json:"type"`
	OriginalWidth  int    `json:"original_width"`
	OriginalHeight int    `json:"original_height"`
	Value          struct {
		X, Y, Width, Height, Rotation float64
		RectangleLabels               []string    `json:"rectanglelabels"`
		Labels                        []string    `json:"labels"`
		PolygonLabels                 []string    `json:"polygonlabels"`
		KeypointLabels                []string    `json:"keypointlabels"`
		Choices                       []string    `json:"choices"`
		BrushLabels                   []string    `json:"brushlabels"`
		Format                        string      `json:"format"`
		RLE                           []int       `json:"rle"`
		Points                        [][]float64 `json:"points"`
	} `json:"value"`
}

// uploadPrefix is the random prefix Label Studio puts on uploaded names.
var uploadPrefix = regexp.MustCompile(`^[0-9a-f]{8}-`)

func (rd *reader) labelStudio() error {
	labels := map[string]bool{}
	for _, j := range rd.tree.withExt(".json") {
		if h := bytes.TrimSpace(rd.tree.head(j, 8192)); !bytes.HasPrefix(h, []byte("[")) {
			continue
		}
		rd.found = true
		if err := rd.labelStudioFile(j, labels); err != nil {
			return err
		}
	}
	rd.rep.Categories = sortedKeys(labels)
	return nil
}

func (rd *reader) labelStudioFile(rel string, labels map[string]bool) error {
	f, err := os.Open(rd.tree.abs(rel))
	if err != nil {
		return relErr(err, rel)
	}
	defer f.Close()
	guard := newJSONGuard(f)
	dec := json.NewDecoder(guard)
	err = eachElement(dec, func() error {
		var raw json.RawMessage
		start := dec.InputOffset()
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var t lsTask
		if err := json.Unmarshal(raw, &t); err != nil {
			rd.rep.add(Malformed, rel, 0, "task %d at byte %d: %v; not imported", t.ID, start, err)
			return nil
		}
		if fl, hit := guard.flagged(start, dec.InputOffset()); hit {
			rd.rep.add(Malformed, rel, 0, "task %d at byte %d: %s; not imported", t.ID, start, fl.message())
			return nil
		}
		if err := rd.labelStudioTask(rel, t, labels); err != nil {
			return stopRead{err}
		}
		return nil
	})
	var stop stopRead
	if errors.As(err, &stop) {
		return stop.err
	}
	if err != nil {
		// The stream cannot be read past a syntax error: what came before it stays.
		rd.rep.add(Malformed, rel, 0, "%v (at byte %d); the rest of the file is not read", err, dec.InputOffset())
	}
	return nil
}

// stopRead carries an error that stops the read (emit's, a cancel) through
// a file's decoding, whose own errors only stop that file.
type stopRead struct{ err error }

func (s stopRead) Error() string { return s.err.Error() }

func (rd *reader) labelStudioTask(rel string, t lsTask, labels map[string]bool) error {
	ref := lsImageRef(t)
	it := Item{Source: rel}
	for _, a := range t.Annotations {
		if a.WasCancelled {
			continue
		}
		over := 0
		for _, r := range a.Result {
			if len(it.Boxes) >= rd.caps.ShapesPerFile {
				over++
				continue
			}
			for _, b := range rd.lsShapes(rel, t.ID, r) {
				labels[b.Label] = true
				it.Boxes = append(it.Boxes, b)
			}
			if r.OriginalWidth > 0 && r.OriginalHeight > 0 {
				it.Width, it.Height = r.OriginalWidth, r.OriginalHeight
			}
		}
		rd.rep.AddN(Problem{Kind: OverLimit, File: rel, Message: fmt.Sprintf(
			"task %d: %d results past the limit of %d boxes a file, not imported", t.ID, over, rd.caps.ShapesPerFile)}, over)
		break
	}
	name := path.Base(ref)
	media := rd.tree.find(name, name, uploadPrefix.ReplaceAllString(name, ""))
	if media == "" {
		media = rd.tree.find(uploadPrefix.ReplaceAllString(name, ""))
	}
	if media == "" {
		rd.rep.add(LabelWithoutImage, rel, 0, "task %d: image %q not found in the folder (%d boxes not imported)",
			t.ID, ref, len(it.Boxes))
		return nil
	}
	it.Media = media
	return rd.send(it)
}

// lsImageRef is the image a task names: data.image, else its only string.
func lsImageRef(t lsTask) string {
	ref, _ := t.Data["image"].(string)
	if ref == "" {
		keys := make([]string, 0, len(t.Data))
		for k := range t.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := t.Data[k].(string); ok {
				ref = s
				break
			}
		}
	}
	if u, err := url.Parse(ref); err == nil {
		if d := u.Query().Get("d"); d != "" {
			return d // local storage: /data/local-files/?d=dir/x.jpg
		}
		if u.Path != "" {
			ref = u.Path
		}
	}
	if ref == "" {
		ref = t.FileUpload
	}
	return ref
}

// lsShapes reads one result: a shape, a class for each choice, or nothing
// (a problem then says why).
func (rd *reader) lsShapes(rel string, task int64, r lsResult) []Box {
	v := r.Value
	switch r.Type {
	case "choices":
		out := make([]Box, 0, len(v.Choices))
		for _, c := range v.Choices {
			out = append(out, Box{Label: c, Geometry: shape.Geometry{Type: shape.Class}})
		}
		return out
	case "polygonlabels":
		if len(v.PolygonLabels) == 0 {
			rd.rep.add(Malformed, rel, 0, "task %d: a polygon without a label", task)
			return nil
		}
		ring := make([]float64, 0, 2*len(v.Points))
		for _, p := range v.Points {
			if len(p) != 2 {
				rd.rep.add(Malformed, rel, 0, "task %d: polygon point %v is not [x, y]", task, p)
				return nil
			}
			ring = append(ring, p[0]/100, p[1]/100)
		}
		return []Box{{Label: v.PolygonLabels[0], Relative: true,
			Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{ring}}}}
	case "brushlabels", "brush":
		return rd.lsBrush(rel, task, r)
	case "labels":
		if len(v.RLE) > 0 {
			// A brush labelled by a separate Labels tag, as label-studio-converter also reads.
			r.Value.BrushLabels = v.Labels
			return rd.lsBrush(rel, task, r)
		}
	case "keypointlabels":
		if len(v.KeypointLabels) == 0 {
			rd.rep.add(Malformed, rel, 0, "task %d: a keypoint without a label", task)
			return nil
		}
		name := v.KeypointLabels[0]
		return []Box{{Label: name, Relative: true, Geometry: shape.Geometry{Type: shape.Keypoints,
			Keypoints: []shape.Keypoint{{Name: name, X: v.X / 100, Y: v.Y / 100, V: 2}}}}}
	}
	if b, ok := rd.lsBox(rel, task, r); ok {
		return []Box{b}
	}
	return nil
}

// lsBrush reads a brush result as a mask of its image's size.
func (rd *reader) lsBrush(rel string, task int64, r lsResult) []Box {
	v := r.Value
	if v.Format != "" && v.Format != "rle" || len(v.RLE) == 0 {
		rd.rep.add(Ignored, rel, 0, "task %d: a brush in format %q without an rle list; only Label Studio's rle is read; not imported", task, v.Format)
		return nil
	}
	if len(v.BrushLabels) == 0 {
		rd.rep.add(Malformed, rel, 0, "task %d: a brush without a label", task)
		return nil
	}
	m, err := lsBrushMask(v.RLE, r.OriginalWidth, r.OriginalHeight)
	if err != nil {
		rd.rep.add(Malformed, rel, 0, "task %d: %s brush: %v; not imported", task, v.BrushLabels[0], err)
		return nil
	}
	b := Box{Label: v.BrushLabels[0], Geometry: shape.Geometry{Type: shape.Mask, Mask: m}}
	if len(v.BrushLabels) > 1 {
		b.Attributes = withAttr(b.Attributes, "labels", strings.Join(v.BrushLabels, ","))
	}
	return []Box{b}
}

func (rd *reader) lsBox(rel string, task int64, r lsResult) (Box, bool) {
	names := r.Value.RectangleLabels
	if r.Type == "labels" && len(r.Value.Labels) > 0 && r.Value.Width > 0 {
		names = r.Value.Labels
	}
	if r.Type != "rectanglelabels" && (r.Type != "labels" || len(names) == 0) {
		rd.rep.add(Ignored, rel, 0, "task %d: a %s result is no rectangle; not imported", task, r.Type)
		return Box{}, false
	}
	if len(names) == 0 {
		rd.rep.add(Malformed, rel, 0, "task %d: a rectangle without a label", task)
		return Box{}, false
	}
	v := r.Value
	b := Box{Label: names[0], X: v.X / 100, Y: v.Y / 100, W: v.Width / 100, H: v.Height / 100, Relative: true}
	if b.W <= 0 || b.H <= 0 {
		rd.rep.add(ZeroSize, rel, 0, "task %d: %s rectangle of %g%% x %g%%", task, b.Label, v.Width, v.Height)
		return Box{}, false
	}
	if v.Rotation != 0 {
		b.Attributes = withAttr(b.Attributes, "rotation", v.Rotation)
	}
	if len(names) > 1 {
		b.Attributes = withAttr(b.Attributes, "labels", strings.Join(names, ","))
	}
	return b, true
}

// eachElement calls fn for each element of the JSON array dec is at.
func eachElement(dec *json.Decoder, fn func() error) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		if err == nil {
			err = fmt.Errorf("want an array, got %v", t)
		}
		return err
	}
	for dec.More() {
		if err := fn(); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}
