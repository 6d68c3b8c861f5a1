package trackio

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// ReadCVAT reads a CVAT for video 1.1 XML into tracks (format reads the
// file; see format/cvatvideo.go for what is kept).
func ReadCVAT(r io.Reader) ([]lake.Track, error) {
	v, err := format.ReadCVATVideo(r)
	if err != nil {
		return nil, err
	}
	tracks := make([]lake.Track, 0, len(v.Tracks))
	for _, t := range v.Tracks {
		if len(t.Keyframes) == 0 {
			continue // a track that is only outside markers has nothing to show
		}
		out := lake.Track{Number: t.ID, Label: t.Label, Outside: t.Outside, Keyframes: make([]lake.Box, len(t.Keyframes))}
		if out.Outside == nil {
			out.Outside = []int{}
		}
		for i, k := range t.Keyframes {
			b := lake.Box{Frame: k.Frame, Label: t.Label, X: k.X, Y: k.Y, W: k.W, H: k.H, Geometry: k.Geometry}
			if k.Attributes != nil {
				raw, err := json.Marshal(k.Attributes)
				if err != nil {
					return nil, fmt.Errorf("track %d frame %d: attributes: %w", t.ID, k.Frame, err)
				}
				b.Attributes = raw
			}
			out.Keyframes[i] = b
		}
		out.FirstFrame, out.LastFrame = out.Keyframes[0].Frame, out.Keyframes[len(out.Keyframes)-1].Frame
		tracks = append(tracks, out)
	}
	return tracks, nil
}

// VideoInfo is what a CVAT file's <meta> says of the video.
type VideoInfo struct {
	Frames, Width, Height int
}

// WriteCVAT writes tracks as CVAT for video 1.1, as CVAT writes it: every
// frame of a track from its first keyframe to its last, keyframes marked
// keyframe="1" and interpolated frames keyframe="0"; where an outside span
// starts, the previous shape with outside="1"; and after the last keyframe
// (when the video goes on) an outside shape that ends the track. A polygon
// of several rings, which a CVAT polygon cannot hold, is written as a mask.
func WriteCVAT(w io.Writer, tracks []lake.Track, v VideoInfo) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<annotations>\n  <version>1.1</version>\n  <meta>\n    <task>\n"+
		"      <size>%d</size>\n      <mode>interpolation</mode>\n      <original_size><width>%d</width><height>%d</height></original_size>\n      <labels>\n",
		v.Frames, v.Width, v.Height)
	var labels []string
	for _, t := range tracks {
		if !slices.Contains(labels, t.Label) {
			labels = append(labels, t.Label)
		}
	}
	for _, l := range labels {
		fmt.Fprintf(bw, "        <label><name>%s</name><type>any</type></label>\n", xmlText(l))
	}
	bw.WriteString("      </labels>\n    </task>\n  </meta>\n")
	for i := range tracks {
		if err := writeCVATTrack(bw, &tracks[i], v); err != nil {
			return err
		}
	}
	bw.WriteString("</annotations>\n")
	return bw.Flush()
}

func writeCVATTrack(w *bufio.Writer, t *lake.Track, v VideoInfo) error {
	fmt.Fprintf(w, "  <track id=\"%d\" label=\"%s\" source=\"manual\">\n", t.Number, xmlAttr(t.Label))
	var last lake.TrackShape
	for frame := t.FirstFrame; frame <= t.LastFrame; frame++ {
		s, ok := t.At(frame)
		if !ok {
			if slices.Contains(t.Outside, frame) {
				if err := writeCVATShape(w, last, frame, true, true, v); err != nil {
					return err
				}
			}
			continue
		}
		if err := writeCVATShape(w, s, frame, !s.Interpolated, false, v); err != nil {
			return err
		}
		last = s
	}
	if v.Frames == 0 || t.LastFrame+1 < v.Frames {
		if err := writeCVATShape(w, last, t.LastFrame+1, true, true, v); err != nil {
			return err
		}
	}
	w.WriteString("  </track>\n")
	return nil
}

func writeCVATShape(w *bufio.Writer, s lake.TrackShape, frame int, key, outside bool, v VideoInfo) error {
	attrs, occluded, err := cvatAttributes(s.Attributes)
	if err != nil {
		return fmt.Errorf("frame %d: %w", frame, err)
	}
	kind, geometry, err := cvatGeometryAttrs(s, v)
	if err != nil {
		return fmt.Errorf("frame %d: %w", frame, err)
	}
	fmt.Fprintf(w, "    <%s frame=\"%d\" keyframe=\"%s\" outside=\"%s\" occluded=\"%s\"%s z_order=\"0\"", kind, frame,
		flag(key), flag(outside), flag(occluded), geometry)
	if kind == "skeleton" {
		w.WriteString(">\n")
		for _, k := range s.Keypoints {
			fmt.Fprintf(w, "      <points label=\"%s\" outside=\"%s\" occluded=\"%s\" points=\"%s,%s\"/>\n", xmlAttr(k.Name),
				flag(k.V == 0), flag(k.V == 1), num(k.X), num(k.Y))
		}
	} else if len(attrs) == 0 {
		w.WriteString("/>\n")
		return nil
	} else {
		w.WriteString(">\n")
	}
	for _, a := range attrs {
		fmt.Fprintf(w, "      <attribute name=\"%s\">%s</attribute>\n", xmlAttr(a[0]), xmlText(a[1]))
	}
	fmt.Fprintf(w, "    </%s>\n", kind)
	return nil
}

// cvatGeometryAttrs is the element and its geometry's attributes.
func cvatGeometryAttrs(s lake.TrackShape, v VideoInfo) (string, string, error) {
	switch s.Type {
	case shape.Polygon:
		if len(s.Polygon) == 1 {
			return "polygon", ` points="` + cvatPoints(s.Polygon[0]) + `"`, nil
		}
		if v.Width <= 0 || v.Height <= 0 {
			return "", "", fmt.Errorf("a polygon of %d rings needs the video's size to become a mask", len(s.Polygon))
		}
		return cvatMask(shape.Rings(s.Polygon, v.Height, v.Width))
	case shape.Polyline:
		return "polyline", ` points="` + cvatPoints(s.Points) + `"`, nil
	case shape.Keypoints:
		return "skeleton", "", nil
	case shape.Mask:
		r, err := s.Mask.RLE()
		if err != nil {
			return "", "", err
		}
		return cvatMask(r)
	}
	return "box", fmt.Sprintf(` xtl="%s" ytl="%s" xbr="%s" ybr="%s"`, num(s.X), num(s.Y), num(s.X+s.W), num(s.Y+s.H)), nil
}

// cvatMask is CVAT's mask: run lengths over the mask's box, row by row,
// zeros first, and the box as left, top, width, height.
func cvatMask(r shape.RLE) (string, string, error) {
	b := r.Bounds()
	left, top, w, h := int(b.X), int(b.Y), int(b.W), int(b.H)
	if w <= 0 || h <= 0 {
		return "", "", fmt.Errorf("an empty mask")
	}
	bits := r.Decode() // column-major
	var runs []string
	on, n := false, 0
	for y := top; y < top+h; y++ {
		for x := left; x < left+w; x++ {
			if (bits[x*r.Height+y] == 1) != on {
				runs = append(runs, strconv.Itoa(n))
				on, n = !on, 0
			}
			n++
		}
	}
	runs = append(runs, strconv.Itoa(n))
	return "mask", fmt.Sprintf(` rle="%s" left="%d" top="%d" width="%d" height="%d"`, strings.Join(runs, ", "), left, top, w, h), nil
}

func cvatPoints(xy []float64) string {
	var b strings.Builder
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(num(xy[i]) + "," + num(xy[i+1]))
	}
	return b.String()
}

// cvatAttributes lists a keyframe's attributes as CVAT's text values, by
// name, with occluded taken out (it is the element's own flag).
func cvatAttributes(raw json.RawMessage) ([][2]string, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false, fmt.Errorf("attributes: %w", err)
	}
	occluded := m["occluded"] == true
	delete(m, "occluded")
	var out [][2]string
	for k, v := range m {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case float64:
			s = num(v)
		case bool:
			s = strconv.FormatBool(v)
		default:
			b, _ := json.Marshal(v)
			s = string(b)
		}
		out = append(out, [2]string{k, s})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out, occluded, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func num(v float64) string { return strconv.FormatFloat(lake.RoundCoord(v), 'f', -1, 64) }

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func xmlAttr(s string) string { return xmlText(s) } // EscapeText escapes quotes too
