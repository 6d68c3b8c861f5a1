package format

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// YOLO Segmentation and YOLO Pose are the Ultralytics layout (data.yaml,
// images/ and labels/ per split) with the label lines of Ultralytics'
// segment and pose datasets (docs.ultralytics.com/datasets/segment and
// /pose), all numbers normalised by the image's width and height:
//
//	segment  class x1 y1 x2 y2 ...        one outline a line
//	pose     class cx cy w h x1 y1 v1 ... K points a line, data.yaml kpt_shape: [K, 3]
//
// Segmentation: a shape is a line, one instance, as Ultralytics reads a
// line: a polygon's rings joined into one (mergeRings), its holes kept as
// holes when the line is read even-odd; a mask traced into rings
// (shape.Outline, within half a pixel) and joined the same way; a box its
// four corners, because Ultralytics reads a file with any outline as
// outlines only. Keypoints, polylines and classes have no area and are
// left out.
//
// Pose: K is the largest point count of any label (declared points, then
// those the frames bring); every line carries K points, missing or
// unlabelled ones as 0 0 0, and boxes of other shapes carry K such points,
// as Ultralytics requires one width for all lines. v is COCO's (1 labelled
// but hidden, 2 visible). flip_idx is written when one label has points
// and declares flip pairs (without it Ultralytics turns off flipping).
// kpt_names (Ultralytics' per-class point names) names each class's K
// points; a class with fewer has the rest named by their index.
// Label files are written at the end, once K is known. A version without
// keypoints gets kpt_shape [1, 3] with every point 0 0 0.

const segTolerance = 0.5 // pixels a traced mask's outline may stray

func newYOLOSegWriter(a *archive) (*ultralyticsWriter, error) {
	u, err := newUltralyticsWriter(a)
	if err == nil {
		u.lines = segLines
	}
	return u, err
}

// segLines appends one "class x1 y1 ..." line per shape that has an area.
func segLines(b []byte, fr *Frame) []byte {
	w, h := float64(fr.Width), float64(fr.Height)
	for _, bx := range fr.Boxes {
		ring := outline(bx, fr.Width, fr.Height)
		if ring == nil {
			continue
		}
		b = strconv.AppendInt(b, int64(bx.ClassID), 10)
		for i := 0; i+1 < len(ring); i += 2 {
			b = append(b, ' ')
			b = strconv.AppendFloat(b, unit(ring[i]/w), 'f', 6, 64)
			b = append(b, ' ')
			b = strconv.AppendFloat(b, unit(ring[i+1]/h), 'f', 6, 64)
		}
		b = append(b, '\n')
	}
	return b
}

// outline is the one ring a shape is written as in YOLO Segmentation, nil
// for a shape without an area.
func outline(bx ExportBox, width, height int) []float64 {
	switch bx.Type {
	case shape.Polygon:
		return mergeRings(bx.Polygon)
	case shape.Mask:
		if bx.Mask == nil {
			return nil
		}
		r, err := bx.Mask.RLE()
		if err != nil {
			return nil
		}
		return mergeRings(shape.Outline(r, segTolerance))
	case "", shape.Box:
		r, ok := clip(bx, width, height)
		if !ok {
			return nil
		}
		return []float64{r.x0, r.y0, r.x1, r.y0, r.x1, r.y1, r.x0, r.y1}
	}
	return nil
}

// mergeRings joins a shape's rings (x1, y1, x2, y2, ...) into one, as
// Ultralytics' COCO converter joins an annotation's polygons
// (merge_multi_segment): each ring is bridged to the next at their nearest
// points, by the first nearest pair, the bridges walked out on a forward
// pass and back on a return pass, so each is drawn twice in opposite
// directions and adds nothing to the area. One line is then one instance,
// as Ultralytics reads a line, and read even-odd (as OpenCV's fillPoly fills
// it when Ultralytics makes its masks) it is the shape: its parts, and its
// holes as holes. One deliberate difference: Ultralytics reverses a middle
// ring whose way in comes after its way out and then indexes it with the
// indexes of the ring unreversed, which moves that ring's bridges off the
// nearest points; here it keeps its direction and its bridges.
func mergeRings(rings [][]float64) []float64 {
	var parts [][]float64
	for _, r := range rings {
		if len(r) >= 6 {
			parts = append(parts, r)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	links := make([][]int, len(parts)) // a ring's way in (from the one before), then its way out
	for i := 1; i < len(parts); i++ {
		a, b := nearestPoints(parts[i-1], parts[i])
		links[i-1] = append(links[i-1], a)
		links[i] = append(links[i], b)
	}
	var out []float64
	var back [][]float64
	last := len(parts) - 1
	for i, r := range parts {
		n := len(r) / 2
		closed := append(append(r[2*links[i][0]:len(r):len(r)], r[:2*links[i][0]]...), r[2*links[i][0]:2*links[i][0]+2]...)
		if i == 0 || i == last {
			out = append(out, closed...)
			continue
		}
		turn := ((links[i][1]-links[i][0])%n + n) % n // the way out, counted from the way in
		out = append(out, closed[:2*turn+2]...)
		back = append(back, closed[2*turn:])
	}
	for i := len(back) - 1; i >= 0; i-- {
		out = append(out, back[i]...)
	}
	return out
}

// nearestPoints are the indexes of the nearest points of rings a and b, the
// first pair in a's order, then b's, at the least squared distance.
func nearestPoints(a, b []float64) (int, int) {
	bi, bj, best := 0, 0, math.Inf(1)
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			dx, dy := a[i]-b[j], a[i+1]-b[j+1]
			if d := dx*dx + dy*dy; d < best {
				bi, bj, best = i/2, j/2, d
			}
		}
	}
	return bi, bj
}

// unit clamps a normalised coordinate to [0, 1], as Ultralytics requires.
func unit(v float64) float64 { return min(max(v, 0), 1) }

// poseWriter holds each frame's label lines back (as JSON a line in a
// spool) until K is known.
type poseWriter struct {
	*ultralyticsWriter
	points *pointOrder
	held   *spool
}

// poseFrame is a frame's label file waiting for K.
type poseFrame struct {
	Path  string    `json:"p"`
	Lines []poseBox `json:"b"`
}

type poseBox struct {
	Class  int              `json:"c"`
	Box    [4]float64       `json:"r"` // cx, cy, w, h normalised
	Label  string           `json:"l"`
	Points []shape.Keypoint `json:"k,omitempty"` // normalised
}

func newYOLOPoseWriter(a *archive) (*poseWriter, error) {
	u, err := newUltralyticsWriter(a)
	if err != nil {
		return nil, err
	}
	held, err := a.spool()
	return &poseWriter{ultralyticsWriter: u, points: newPointOrder(a.skel), held: held}, err
}

func (p *poseWriter) frame(fr *Frame) error {
	if err := needSize(fr); err != nil {
		return err
	}
	i := splitIndex(fr.Split)
	image := "images/" + vocSplits[i] + "/" + mediaFile(fr)
	if p.a.media {
		if err := p.a.copyMedia(image, fr); err != nil {
			return err
		}
	}
	w, h := float64(fr.Width), float64(fr.Height)
	pf := poseFrame{Path: "labels/" + vocSplits[i] + "/" + baseName(fr.UniqueName) + ".txt", Lines: []poseBox{}}
	for _, bx := range fr.Boxes {
		r, ok := clip(bx, fr.Width, fr.Height)
		if !ok {
			continue
		}
		pb := poseBox{Class: bx.ClassID, Box: [4]float64{(r.x0 + r.x1) / 2 / w, (r.y0 + r.y1) / 2 / h, (r.x1 - r.x0) / w, (r.y1 - r.y0) / h}}
		if bx.Type == shape.Keypoints {
			pb.Label = p.a.ds.Labels[bx.ClassID]
			p.points.see(pb.Label, bx.Keypoints)
			for _, k := range bx.Keypoints {
				pb.Points = append(pb.Points, shape.Keypoint{Name: k.Name, X: unit(k.X / w), Y: unit(k.Y / h), V: k.V})
			}
		}
		pf.Lines = append(pf.Lines, pb)
	}
	line, err := json.Marshal(pf)
	if err != nil {
		return err
	}
	p.held.Write(append(line, '\n'))
	p.frames[i]++
	return p.augmented.add(fr, image, "images/"+vocSplits[i]+"/"+sourceFile(fr))
}

func (p *poseWriter) finish() error {
	// A version without points still makes a valid pose set of its boxes
	// (K = 1, never labelled): failing here, after the frames, would cut
	// a download off that already began.
	a, k := p.a, max(p.points.widest(), 1)
	err := p.held.eachLine(func(line []byte) error {
		var pf poseFrame
		if err := json.Unmarshal(line, &pf); err != nil {
			return err
		}
		a.text.Reset()
		b := a.text.AvailableBuffer()
		for _, pb := range pf.Lines {
			b = strconv.AppendInt(b, int64(pb.Class), 10)
			for _, v := range pb.Box {
				b = append(b, ' ')
				b = strconv.AppendFloat(b, v, 'f', 6, 64)
			}
			for j, v := range p.points.triples(pb.Label, pb.Points, k) {
				b = append(b, ' ')
				if j%3 == 2 {
					b = strconv.AppendInt(b, int64(v), 10)
				} else {
					b = strconv.AppendFloat(b, v, 'f', 6, 64)
				}
			}
			b = append(b, '\n')
		}
		a.text.Write(b)
		return a.textEntry(pf.Path)
	})
	if err != nil {
		return err
	}
	yaml := ultralyticsYAML(a.ds, p.frames) + fmt.Sprintf("kpt_shape: [%d, 3]\n", k)
	if f := p.points.flipIndex(k); f != nil {
		yaml += "flip_idx: [" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(f)), ", "), "[]") + "]\n"
	}
	yaml += p.kptNames(k)
	if err := a.z.bytesEntry(a.path("data.yaml"), []byte(yaml)); err != nil {
		return err
	}
	return p.augmented.finish()
}

// kptNames is data.yaml's kpt_names: each class with points, its K names
// as a block list of JSON strings (YAML double-quoted scalars).
func (p *poseWriter) kptNames(k int) string {
	var b strings.Builder
	for id, l := range p.a.ds.Labels {
		names := p.points.names[l]
		if len(names) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("kpt_names:\n")
		}
		fmt.Fprintf(&b, "  %d:\n", id)
		for i := range k {
			n := strconv.Itoa(i)
			if i < len(names) {
				n = names[i]
			}
			q, _ := json.Marshal(oneLine(n))
			fmt.Fprintf(&b, "    - %s\n", q)
		}
	}
	return b.String()
}
