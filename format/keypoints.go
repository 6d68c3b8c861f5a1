package format

import (
	"bufio"
	"context"
	"io"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// declaredSkeletons asks ds.Skeletons for each label's declaration once,
// before the frames, so the writers never need a context.
func declaredSkeletons(ctx context.Context, ds Dataset) (map[string]*shape.Skeleton, error) {
	out := map[string]*shape.Skeleton{}
	if ds.Skeletons == nil {
		return out, nil
	}
	for _, l := range ds.Labels {
		s, err := ds.Skeletons(ctx, l)
		if err != nil {
			return nil, errs.Prefix(err, "export: keypoints of label "+l)
		}
		if s != nil {
			if err := s.Check(); err != nil {
				return nil, errs.New(errs.FailedPrecondition, "", "export: label %q declares keypoints wrongly: %v", l, err)
			}
			out[l] = s
		}
	}
	return out, nil
}

// pointOrder is each keypoints label's point names in the order the files
// write them: the declared names, then any name the frames bring that the
// declaration lacks (or all of them, undeclared), in the order first seen.
// Formats that need one count for all points of a label (COCO's triples,
// YOLO Pose's kpt_shape) hold their keypoints back until the order is
// final, at finish.
type pointOrder struct {
	skel  map[string]*shape.Skeleton
	names map[string][]string
	index map[string]map[string]int
}

func newPointOrder(skel map[string]*shape.Skeleton) *pointOrder {
	o := &pointOrder{skel: skel, names: map[string][]string{}, index: map[string]map[string]int{}}
	for l, s := range skel {
		for _, n := range s.Names {
			o.add(l, n)
		}
	}
	return o
}

func (o *pointOrder) add(label, name string) {
	idx := o.index[label]
	if idx == nil {
		idx = map[string]int{}
		o.index[label] = idx
	}
	if _, ok := idx[name]; !ok {
		idx[name] = len(o.names[label])
		o.names[label] = append(o.names[label], name)
	}
}

// see registers the names of a keypoints shape.
func (o *pointOrder) see(label string, kps []shape.Keypoint) {
	for _, k := range kps {
		o.add(label, k.Name)
	}
}

// triples is COCO's x, y, v for each of the label's n points (n at least
// its known count); points the shape lacks, or does not label, are 0, 0, 0.
func (o *pointOrder) triples(label string, kps []shape.Keypoint, n int) []float64 {
	out := make([]float64, 3*max(n, len(o.names[label])))
	for _, k := range kps {
		i, ok := o.index[label][k.Name]
		if !ok || k.V <= 0 {
			continue
		}
		out[3*i], out[3*i+1], out[3*i+2] = round6(k.X), round6(k.Y), float64(k.V)
	}
	return out
}

// edges is the label's declared skeleton as 1-based index pairs (COCO's).
func (o *pointOrder) edges(label string) [][2]int {
	s := o.skel[label]
	if s == nil {
		return nil
	}
	out := make([][2]int, 0, len(s.Edges))
	for _, e := range s.Edges {
		out = append(out, [2]int{o.index[label][e[0]] + 1, o.index[label][e[1]] + 1})
	}
	return out
}

// flipIndex is YOLO Pose's flip_idx for n points: each point's index after
// a horizontal flip. Only when exactly one label has points and it declares
// flip pairs: one flip_idx serves every class in Ultralytics, and without
// declared pairs a left point would be taken for one without a side.
func (o *pointOrder) flipIndex(n int) []int {
	var label string
	for l, names := range o.names {
		if len(names) == 0 {
			continue
		}
		if label != "" {
			return nil
		}
		label = l
	}
	s := o.skel[label]
	if s == nil || len(s.Flip) == 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
		if i < len(o.names[label]) {
			out[i] = o.index[label][s.FlipName(o.names[label][i])]
		}
	}
	return out
}

// widest is the largest point count of any label (YOLO Pose's K).
func (o *pointOrder) widest() int {
	n := 0
	for _, names := range o.names {
		n = max(n, len(names))
	}
	return n
}

// eachLine calls fn with each line spooled so far (without its newline).
func (s *spool) eachLine(fn func([]byte) error) error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.LimitReader(s.f, s.n), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 1 {
			if err := fn(line[:len(line)-1]); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	_, err := s.f.Seek(0, io.SeekEnd)
	return err
}
