package format

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CVAT for video 1.1 (docs/tracks.md): <meta><task> gives the frame count
// (<size>) and the frames' size (<original_size>); each <track id label>
// holds one shape element a frame, with frame, outside and keyframe
// attributes. CVAT's own exports list every frame of a track, interpolated
// ones with keyframe="0": only keyframes are read (a file without keyframe
// attributes has every shape as one). An outside shape starts an outside
// span; one after the track's last keyframe is its end.

// VideoTrack is one <track> of a CVAT for video file.
type VideoTrack struct {
	ID        int
	Label     string
	Keyframes []VideoKeyframe
	Outside   []int
}

// VideoKeyframe is a track's shape on one frame, as Box holds shapes.
type VideoKeyframe struct {
	Frame int
	Box
}

// CVATVideo is what a CVAT for video file says.
type CVATVideo struct {
	Frames        int // the task's size; 0 when not given
	Width, Height int
	Tracks        []VideoTrack
}

// MaxVideoShapes bounds the shape elements one CVAT video file may hold.
const MaxVideoShapes = 5_000_000

// ReadCVATVideo reads a CVAT for video 1.1 XML. A malformed shape is an
// error naming its track, frame and line: a track cannot be kept in part.
func ReadCVATVideo(r io.Reader) (CVATVideo, error) {
	var v CVATVideo
	dec := xml.NewDecoder(r)
	shapes := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return v, nil
		}
		if err != nil {
			line, _ := dec.InputPos()
			return v, fmt.Errorf("line %d: not XML: %w", line, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "size":
			if err := readInt(dec, &se, &v.Frames); err != nil {
				return v, err
			}
		case "original_size":
			var sz struct {
				Width  int `xml:"width"`
				Height int `xml:"height"`
			}
			if err := dec.DecodeElement(&sz, &se); err != nil {
				return v, fmt.Errorf("original_size: %w", err)
			}
			v.Width, v.Height = sz.Width, sz.Height
		case "track":
			t, n, err := readCVATTrack(dec, se, v.Width, v.Height)
			if err != nil {
				return v, err
			}
			if shapes += n; shapes > MaxVideoShapes {
				return v, fmt.Errorf("more than %d shapes", MaxVideoShapes)
			}
			v.Tracks = append(v.Tracks, t)
		}
	}
}

func readInt(dec *xml.Decoder, se *xml.StartElement, n *int) error {
	var s string
	if err := dec.DecodeElement(&s, se); err != nil {
		return err
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 0 {
		return fmt.Errorf("size %q is not a frame count", s)
	}
	*n = v
	return nil
}

// cvatTrackShape is a shape element of a track: a cvatShape with its frame.
type cvatTrackShape struct {
	cvatShape
	Frame    string `xml:"frame,attr"`
	Keyframe string `xml:"keyframe,attr"`
}

func readCVATTrack(dec *xml.Decoder, se xml.StartElement, width, height int) (VideoTrack, int, error) {
	line, _ := dec.InputPos()
	var t VideoTrack
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "id":
			id, err := strconv.Atoi(a.Value)
			if err != nil || id < 0 {
				return t, 0, fmt.Errorf("line %d: track id %q is not a whole number", line, a.Value)
			}
			t.ID = id
		case "label":
			t.Label = a.Value
		}
	}
	n, lastOutside := 0, -1
	for {
		tok, err := dec.Token()
		if err != nil {
			return t, n, fmt.Errorf("line %d: track %d: %w", line, t.ID, err)
		}
		if end, ok := tok.(xml.EndElement); ok && end.Name.Local == "track" {
			break
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		at, _ := dec.InputPos()
		var s cvatTrackShape
		if err := dec.DecodeElement(&s, &el); err != nil {
			return t, n, fmt.Errorf("line %d: track %d: %w", at, t.ID, err)
		}
		n++
		frame, err := strconv.Atoi(s.Frame)
		if err != nil || frame < 0 {
			return t, n, fmt.Errorf("line %d: track %d: frame %q is not a frame number", at, t.ID, s.Frame)
		}
		if s.Keyframe == "0" {
			continue // interpolated: CVAT computes it again, and so does framelake
		}
		if s.Outside == "1" {
			t.Outside, lastOutside = append(t.Outside, frame), frame
			continue
		}
		if !cvatKinds[el.Name.Local] || el.Name.Local == "tag" {
			return t, n, fmt.Errorf("line %d: track %d: a %s cannot be tracked", at, t.ID, el.Name.Local)
		}
		b, err := cvatTrackBox(el.Name.Local, s.cvatShape, width, height)
		if err != nil {
			return t, n, fmt.Errorf("line %d: track %d frame %d: %w", at, t.ID, frame, err)
		}
		b.Label = t.Label
		t.Keyframes = append(t.Keyframes, VideoKeyframe{Frame: frame, Box: b})
	}
	// Outside markers from the last keyframe on only end the track.
	if k := len(t.Keyframes); k > 0 && lastOutside >= 0 {
		last := t.Keyframes[k-1].Frame
		kept := t.Outside[:0]
		for _, o := range t.Outside {
			if o < last {
				kept = append(kept, o)
			}
		}
		t.Outside = kept
	}
	return t, n, nil
}

// cvatTrackBox reads one keyframe's shape with its attributes.
func cvatTrackBox(kind string, s cvatShape, width, height int) (Box, error) {
	var b Box
	if kind == "box" {
		var v [4]float64
		for i, f := range []string{s.XTL, s.YTL, s.XBR, s.YBR} {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return b, fmt.Errorf("box corner %q is not a number", f)
			}
			v[i] = x
		}
		b.X, b.Y, b.W, b.H = v[0], v[1], v[2]-v[0], v[3]-v[1]
	} else {
		g, err := cvatGeometry(kind, s, width, height)
		if err != nil {
			return b, err
		}
		b.Geometry = g
	}
	// Attributes as the image reader keeps them (cvat.go).
	if s.Occluded == "1" {
		b.Attributes = withAttr(b.Attributes, "occluded", true)
	}
	if r, err := strconv.ParseFloat(s.Rotation, 64); err == nil && r != 0 {
		b.Attributes = withAttr(b.Attributes, "rotation", r)
	}
	for _, a := range s.Attrs {
		b.Attributes = withAttr(b.Attributes, a.Name, strings.TrimSpace(a.Value))
	}
	return b, nil
}
