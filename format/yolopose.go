package format

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// Ultralytics' pose layout: data.yaml declares kpt_shape: [K, D] (D = 2
// for x y, 3 for x y visibility) and a label line is "class cx cy w h"
// followed by K points of D numbers, in fractions of the image. With
// kpt_shape declared, a line is a box or a pose of exactly 4 + K·D
// numbers: a pose data set has no segments, so a line of another length
// is a problem, not a polygon.
//
// The points are named by data.yaml's kpt_names (a list for every class,
// or per class id: "0: [nose, ...]" or a block list under "0:"); without
// them, K = 17 with no flip_idx or COCO's is COCO's person (Ultralytics'
// coco-pose layout), and any other K names its points "0" to "K-1" in
// line order. D = 3 visibility must be 0, 1 or 2 (COCO's); with D = 2 a
// point at exactly (0, 0) is not labelled (Ultralytics' plots skip it),
// any other is visible. A pose with no labelled point is its box, as a
// COCO annotation with num_keypoints 0 is.

// yoloPose is what data.yaml declares of poses.
type yoloPose struct {
	k, dims  int
	perClass map[int][]string // kpt_names by class id
	all      []string         // kpt_names for every class
	dflt     []string         // names when kpt_names gives none
}

// cocoFlip is Ultralytics' flip_idx for COCO's 17 person keypoints.
var cocoFlip = []int{0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15}

// readYOLOPose reads kpt_shape, kpt_names and flip_idx from data.yaml
// (nf); nil when it declares no kpt_shape. What it cannot use is a note
// or a problem of nf, and the lines are then read as boxes and segments.
func (rd *reader) readYOLOPose(nf, doc string) *yoloPose {
	raw, ok := yamlKeyList(doc, "kpt_shape")
	if !ok {
		return nil
	}
	ks := atois(raw)
	if len(ks) != 2 || ks[0] < 1 || ks[0] > 1000 || ks[1] != 2 && ks[1] != 3 {
		rd.rep.add(Malformed, nf, 0, "kpt_shape %v: want [keypoints (1-1000), 2 or 3]; lines are read as boxes and segments", raw)
		return nil
	}
	p := &yoloPose{k: ks[0], dims: ks[1]}
	flipRaw, hasFlip := yamlKeyList(doc, "flip_idx")
	flip := atois(flipRaw)
	p.dflt = make([]string, p.k)
	for i := range p.dflt {
		p.dflt[i] = strconv.Itoa(i)
	}
	if p.k == 17 && (!hasFlip || slices.Equal(flip, cocoFlip)) {
		p.dflt = shape.COCOPerson.Names
	}
	perClass, all := yamlKptNames(doc)
	check := func(what string, names []string) []string {
		if names == nil {
			return nil
		}
		if len(names) != p.k {
			rd.rep.Notes = append(rd.rep.Notes, fmt.Sprintf("%s has %d names, kpt_shape %d points: not used", what, len(names), p.k))
			return nil
		}
		for i, n := range names {
			if n == "" || slices.Index(names, n) != i {
				rd.rep.Notes = append(rd.rep.Notes, fmt.Sprintf("%s: name %d (%q) is empty or given twice: not used", what, i, n))
				return nil
			}
		}
		return names
	}
	p.all = check("kpt_names", all)
	p.perClass = map[int][]string{}
	for _, id := range sortedInts(perClass) {
		if ns := check(fmt.Sprintf("kpt_names of class %d", id), perClass[id]); ns != nil {
			p.perClass[id] = ns
		}
	}
	note := fmt.Sprintf("%s kpt_shape [%d, %d]: lines of %d numbers are poses, their points named %s",
		nf, p.k, p.dims, 5+p.k*p.dims, strings.Join(p.names(0), ", "))
	if len(p.perClass) > 0 {
		note += " (class 0's; kpt_names names each class's)"
	}
	rd.rep.Notes = append(rd.rep.Notes, note+p.flipNote(flip, hasFlip))
	return p
}

// names are the point names of class cls's poses.
func (p *yoloPose) names(cls int) []string {
	if ns := p.perClass[cls]; ns != nil {
		return ns
	}
	if p.all != nil {
		return p.all
	}
	return p.dflt
}

// flipNote says which points flip_idx swaps in a horizontal flip: the
// pairs to declare on the label's skeleton, as YOLO files cannot carry it.
func (p *yoloPose) flipNote(flip []int, has bool) string {
	if !has {
		return ""
	}
	if len(flip) != p.k {
		return fmt.Sprintf("; flip_idx of %d entries for %d points is not used", len(flip), p.k)
	}
	names := p.names(0)
	var pairs []string
	for i, j := range flip {
		if j < 0 || j >= p.k || flip[j] != i {
			return fmt.Sprintf("; flip_idx is not a pairing of the %d points (entry %d is %d), not used", p.k, i, j)
		}
		if i < j {
			pairs = append(pairs, names[i]+"↔"+names[j])
		}
	}
	return "; flip_idx pairs (declare them on the label's skeleton): " + strings.Join(pairs, ", ")
}

// poseKeypoints reads the K points after a pose line's box; ok false when a
// visibility is not 0, 1 or 2 (a problem then says which).
func (rd *reader) poseKeypoints(p *yoloPose, rel string, n, cls int, nums []float64) ([]shape.Keypoint, bool) {
	names := p.names(cls)
	kps := make([]shape.Keypoint, p.k)
	for i := range p.k {
		at := nums[4+i*p.dims:]
		k := shape.Keypoint{Name: names[i], X: at[0], Y: at[1], V: 2}
		if p.dims == 3 {
			v := at[2]
			if v != 0 && v != 1 && v != 2 {
				rd.rep.add(Malformed, rel, n, "keypoint %d (%s) has visibility %g; want 0, 1 or 2", i, names[i], v)
				return nil, false
			}
			k.V = int(v)
		} else if at[0] == 0 && at[1] == 0 {
			k.V = 0
		}
		kps[i] = k
	}
	return kps, true
}

// yamlKeyList reads a top-level key's list (flow [a, b] or a block of
// "- a" lines) as strings; ok false when the key is absent.
func yamlKeyList(doc, key string) ([]string, bool) {
	ls := strings.Split(doc, "\n")
	for i, l := range ls {
		rest, ok := strings.CutPrefix(l, key+":")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(stripComment(rest))
		if strings.HasPrefix(rest, "[") {
			return flowItems(flowJoin(rest, ls[i+1:])), true
		}
		return yamlBlock(ls[i+1:]), true
	}
	return nil, false
}

// flowJoin joins a flow collection that starts in rest and may run over
// the following lines, up to its closing bracket.
func flowJoin(rest string, more []string) string {
	depth := strings.Count(rest, "[") - strings.Count(rest, "]")
	for j := 0; depth > 0 && j < len(more); j++ {
		l := strings.TrimSpace(stripComment(more[j]))
		rest += " " + l
		depth += strings.Count(l, "[") - strings.Count(l, "]")
	}
	return rest
}

// flowItems splits a flow list "[a, 'b', [c, d]]" at its top-level commas,
// unquoting scalars and keeping nested lists as written.
func flowItems(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
				continue
			case c == '"' || c == '\'':
				quote = c
				continue
			case c == '[':
				depth++
				continue
			case c == ']':
				depth--
				continue
			case c != ',' || depth > 0:
				continue
			}
		}
		if it := strings.TrimSpace(s[start:i]); it != "" {
			if !strings.HasPrefix(it, "[") {
				it = unquote(it)
			}
			out = append(out, it)
		}
		start = i + 1
	}
	return out
}

// yamlKptNames reads kpt_names: a list for every class (flow or block),
// a flow list of per-class lists, or a map of class ids to lists (flow,
// or a block of "- name" lines under "0:").
func yamlKptNames(doc string) (perClass map[int][]string, all []string) {
	ls := strings.Split(doc, "\n")
	perClass = map[int][]string{}
	for i, l := range ls {
		rest, ok := strings.CutPrefix(l, "kpt_names:")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(stripComment(rest))
		if strings.HasPrefix(rest, "[") {
			items := flowItems(flowJoin(rest, ls[i+1:]))
			if len(items) > 0 && strings.HasPrefix(items[0], "[") {
				for id, it := range items {
					perClass[id] = flowItems(it)
				}
				return perClass, nil
			}
			return perClass, items
		}
		cur := -1
		for j := i + 1; j < len(ls); j++ {
			raw := ls[j]
			t := strings.TrimSpace(stripComment(raw))
			if t == "" {
				continue
			}
			if raw[0] != ' ' && raw[0] != '\t' && raw[0] != '-' {
				break
			}
			if v, ok := strings.CutPrefix(t, "-"); ok {
				if cur >= 0 {
					perClass[cur] = append(perClass[cur], unquote(v))
				} else {
					all = append(all, unquote(v))
				}
				continue
			}
			k, v, ok := strings.Cut(t, ":")
			id, err := strconv.Atoi(strings.TrimSpace(k))
			if !ok || err != nil {
				continue
			}
			cur = id
			if v = strings.TrimSpace(v); strings.HasPrefix(v, "[") {
				perClass[id] = flowItems(flowJoin(v, ls[j+1:]))
			}
		}
		return perClass, all
	}
	return perClass, nil
}

// atois reads whole numbers; any item that is not one makes the list empty.
func atois(ss []string) []int {
	out := make([]int, 0, len(ss))
	for _, s := range ss {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// sortedInts returns m's keys in order.
func sortedInts[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
