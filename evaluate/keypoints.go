package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// iou_type keypoints: pycocotools' computeOks, with points matched by name.
//
// A label's points are its declared skeleton's names in order (Options.
// Skeletons), else COCO's 17 person names when every point it carries is
// one of them, else the names the request's sigmas give it. Its sigmas are
// the declared ones, else COCO's person sigmas for COCO's names
// (Skeleton.SigmasOr), else the request's; a label with none is refused.
//
// On a frame, a label is judged when it has keypoints there (either side):
// its human keypoints are the truth, and its other human annotations
// (COCO's people with num_keypoints 0, which the import keeps as boxes or
// segments) truth with no labelled point, ignored as pycocotools ignores
// them; its predicted keypoints are judged, other predicted shapes not.

// LabelSigmas are the OKS sigmas a keypoints label was judged with.
type LabelSigmas struct {
	// Source is "declared" (the label's skeleton), "coco" (COCO's person
	// sigmas) or "request" (the evaluation's sigmas).
	Source    string    `json:"source"`
	Keypoints []string  `json:"keypoints"`
	Sigmas    []float64 `json:"sigmas"`
}

// kpLabel is a label's points as OKS reads them: names and vars = (2σ)².
type kpLabel struct {
	index map[string]int
	vars  []float64
}

// kpShape is one annotation's points in its label's name order. For the
// truth v is COCO's visibility (0: not labelled) and k1 counts v > 0; a
// prediction's v is 1 where it gave the point, 0 where it did not.
type kpShape struct {
	lbl  *kpLabel
	x, y []float64
	v    []int8
	k1   int
}

// kpResolver finds each label's points and sigmas once per evaluation.
type kpResolver struct {
	skel   shape.SkeletonOf
	req    map[string]map[string]float64
	labels map[string]*kpLabel
	used   map[string]LabelSigmas
	buf    []shape.Keypoint // reused by points
}

func newKPResolver(skel shape.SkeletonOf, req map[string]map[string]float64) *kpResolver {
	return &kpResolver{skel: skel, req: req, labels: map[string]*kpLabel{}, used: map[string]LabelSigmas{}}
}

// sigmasOf resolves a label's names and sigmas; seen are the point names of
// one of its annotations (for a label that declares no skeleton).
func sigmasOf(ctx context.Context, skel shape.SkeletonOf, req map[string]map[string]float64, label string, seen []string) (LabelSigmas, error) {
	var sk *shape.Skeleton
	if skel != nil {
		var err error
		if sk, err = skel(ctx, label); err != nil {
			return LabelSigmas{}, err
		}
	}
	if sk != nil {
		if s := sk.SigmasOr(); s != nil {
			src := "declared"
			if len(sk.Sigmas) == 0 {
				src = "coco"
			}
			return LabelSigmas{Source: src, Keypoints: sk.Names, Sigmas: s}, nil
		}
		return fromRequest(req, label, sk.Names)
	}
	coco := true
	for _, n := range seen {
		coco = coco && slices.Contains(shape.COCOPerson.Names, n)
	}
	if coco && len(seen) > 0 {
		return LabelSigmas{Source: "coco", Keypoints: shape.COCOPerson.Names, Sigmas: shape.COCOPerson.Sigmas}, nil
	}
	names := make([]string, 0, len(req[label]))
	for n := range req[label] {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range seen {
		if !slices.Contains(names, n) {
			names = append(names, n) // refused by fromRequest, naming it
		}
	}
	return fromRequest(req, label, names)
}

// fromRequest takes the request's sigmas of a label, which must name every point.
func fromRequest(req map[string]map[string]float64, label string, names []string) (LabelSigmas, error) {
	ls := LabelSigmas{Source: "request", Keypoints: names}
	for _, n := range names {
		s, ok := req[label][n]
		if !ok {
			return ls, errs.Invalid("sigmas", "keypoints label %q declares no OKS sigmas and its points are not COCO's person "+
				"keypoints: give sigmas.%s.%s (and one for each of its points: %v)", label, label, n, names)
		}
		ls.Sigmas = append(ls.Sigmas, s)
	}
	return ls, nil
}

// checkSigmas validates the request's sigmas: each above 0, at most 10.
func checkSigmas(req map[string]map[string]float64) error {
	for l, m := range req {
		for n, s := range m {
			if !(s > 0) || s > 10 {
				return errs.Invalid("sigmas", "sigmas.%s.%s is %v: a sigma is above 0 and at most 10", l, n, s)
			}
		}
	}
	return nil
}

// checkKeypointLabels resolves, before the job starts, the sigmas of every
// label the run has keypoints of, so a label without any is a 400 naming it.
func (s *Service) checkKeypointLabels(ctx context.Context, p Params) error {
	if err := checkSigmas(p.Sigmas); err != nil {
		return err
	}
	labels, err := s.lake.KeypointLabels(ctx, p.PredRunID)
	if err != nil {
		return err
	}
	// Label order, so the label an error names does not depend on map order.
	for _, label := range slices.Sorted(maps.Keys(labels)) {
		geom := labels[label]
		var kps []shape.Keypoint
		_ = json.Unmarshal([]byte(geom), &kps)
		if _, err := sigmasOf(ctx, s.opt.Skeletons, p.Sigmas, label, kpNames(kps)); err != nil {
			return err
		}
	}
	return nil
}

func kpNames(kps []shape.Keypoint) []string {
	out := make([]string, len(kps))
	for i, k := range kps {
		out[i] = k.Name
	}
	return out
}

// label returns a label's points, resolving them on first sight.
func (r *kpResolver) label(ctx context.Context, label string, kps []shape.Keypoint) (*kpLabel, error) {
	if l := r.labels[label]; l != nil {
		return l, nil
	}
	ls, err := sigmasOf(ctx, r.skel, r.req, label, kpNames(kps))
	if err != nil {
		return nil, err
	}
	l := &kpLabel{index: map[string]int{}, vars: make([]float64, len(ls.Sigmas))}
	for i, n := range ls.Keypoints {
		l.index[n] = i
		l.vars[i] = (ls.Sigmas[i] * 2) * (ls.Sigmas[i] * 2)
	}
	r.labels[label], r.used[label] = l, ls
	return l, nil
}

// frame keeps what a keypoints evaluation judges of a frame (see the top of
// this file) and gives each kept annotation its points; a prediction's area
// becomes its points' box, as pycocotools' loadRes sets it.
func (r *kpResolver) frame(ctx context.Context, fr *frameBoxes) error {
	judged := map[string]bool{}
	for _, bs := range [2][]box{fr.gs, fr.ds} {
		for _, b := range bs {
			if b.typ == shape.Keypoints {
				judged[b.label] = true
			}
		}
	}
	gs, ds := fr.gs[:0], fr.ds[:0]
	for _, g := range fr.gs {
		if judged[g.label] {
			gs = append(gs, g)
		}
	}
	for _, d := range fr.ds {
		if d.typ == shape.Keypoints {
			ds = append(ds, d)
		}
	}
	fr.gs, fr.ds = gs, ds
	for side, bs := range [2][]box{gs, ds} {
		for i := range bs {
			if err := r.points(ctx, &bs[i], side == 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// points parses one annotation's points in its label's order.
func (r *kpResolver) points(ctx context.Context, b *box, human bool) error {
	var kps []shape.Keypoint
	if b.typ == shape.Keypoints {
		var err error
		if kps, err = parseKeypoints(b.geom, r.buf); err != nil {
			return fmt.Errorf("keypoints of annotation %d: %w", b.seq, err)
		}
		r.buf = kps[:0]
	}
	l, err := r.label(ctx, b.label, kps)
	if err != nil {
		return err
	}
	k := &kpShape{lbl: l, x: make([]float64, len(l.vars)), y: make([]float64, len(l.vars)), v: make([]int8, len(l.vars))}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range kps {
		i, ok := l.index[p.Name]
		if !ok {
			if human && p.V > 0 {
				return fmt.Errorf("keypoints label %q: point %q of annotation %d has no OKS sigma (its points are %v)",
					b.label, p.Name, b.seq, r.used[b.label].Keypoints)
			}
			continue // a prediction's point the label does not have: not judged
		}
		k.x[i], k.y[i] = p.X, p.Y
		switch {
		case !human:
			k.v[i] = 1
			x0, y0, x1, y1 = min(x0, p.X), min(y0, p.Y), max(x1, p.X), max(y1, p.Y)
		case p.V > 0:
			k.v[i] = int8(min(p.V, 2))
			k.k1++
		}
	}
	b.kp = k
	if human {
		b.noPoints = k.k1 == 0
	} else if x1 >= x0 {
		b.cocoArea, b.areaSet = (x1-x0)*(y1-y0), true
	}
	return nil
}

// oks is pycocotools' computeOks for one prediction d and truth g: over g's
// labelled points (all points when it has none), exp(-d²/(2·s²·vars)) with
// s² g's area (+ numpy's spacing(1)), averaged; with no labelled point d is
// the distance outside g's box enlarged to 3× its size about its centre. A
// point the prediction lacks counts 0 (pycocotools' predictions have every
// point).
func oks(d, g box) float64 {
	dk, gk := d.kp, g.kp
	if dk == nil || gk == nil || dk.lbl != gk.lbl {
		return 0
	}
	area := g.rangeArea() + eps
	x0, x1 := g.x-g.w, g.x+g.w*2
	y0, y1 := g.y-g.h, g.y+g.h*2
	sum, n := 0.0, 0
	for i, v := range gk.lbl.vars {
		if gk.k1 > 0 && gk.v[i] == 0 {
			continue
		}
		n++
		if dk.v[i] == 0 {
			continue
		}
		var dx, dy float64
		if gk.k1 > 0 {
			dx, dy = dk.x[i]-gk.x[i], dk.y[i]-gk.y[i]
		} else {
			dx = max(0, x0-dk.x[i]) + max(0, dk.x[i]-x1)
			dy = max(0, y0-dk.y[i]) + max(0, dk.y[i]-y1)
		}
		e := (dx*dx + dy*dy) / v / area / 2
		sum += math.Exp(-e)
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// parseKeypoints reads a stored keypoints geometry. The lake writes it with
// encoding/json ([{"name":"nose","x":1,"y":2,"v":2},...]), which this reads
// without reflection (a quarter of a 20,000-image evaluation's CPU went to
// decoding); anything else in the column goes to encoding/json. Names are
// substrings of s.
func parseKeypoints(s string, dst []shape.Keypoint) ([]shape.Keypoint, error) {
	if kps, ok := scanKeypoints(s, dst[:0]); ok {
		return kps, nil
	}
	var kps []shape.Keypoint
	err := json.Unmarshal([]byte(s), &kps)
	return kps, err
}

func scanKeypoints(s string, out []shape.Keypoint) ([]shape.Keypoint, bool) {
	if len(s) < 2 || s[0] != '[' {
		return nil, false
	}
	i := 1
	if s[i] == ']' {
		return out, i+1 == len(s)
	}
	for {
		var k shape.Keypoint
		const name = `{"name":"`
		if !strings.HasPrefix(s[i:], name) {
			return nil, false
		}
		i += len(name)
		end := strings.IndexByte(s[i:], '"')
		if end < 0 || strings.IndexByte(s[i:i+end], '\\') >= 0 {
			return nil, false
		}
		k.Name, i = s[i:i+end], i+end+1
		var ok bool
		var v float64
		if k.X, i, ok = scanField(s, i, `,"x":`); !ok {
			return nil, false
		}
		if k.Y, i, ok = scanField(s, i, `,"y":`); !ok {
			return nil, false
		}
		if v, i, ok = scanField(s, i, `,"v":`); !ok || v != math.Trunc(v) {
			return nil, false
		}
		k.V = int(v)
		if i >= len(s) || s[i] != '}' {
			return nil, false
		}
		out = append(out, k)
		i++
		switch {
		case i < len(s) && s[i] == ',':
			i++
		case i == len(s)-1 && s[i] == ']':
			return out, true
		default:
			return nil, false
		}
	}
}

// scanField reads `key` and the number after it at s[i:].
func scanField(s string, i int, key string) (float64, int, bool) {
	if !strings.HasPrefix(s[i:], key) {
		return 0, i, false
	}
	i += len(key)
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' {
		j++
	}
	f, err := strconv.ParseFloat(s[i:j], 64)
	return f, j, err == nil
}
