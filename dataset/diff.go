package dataset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Version diff (issue 21): what changed from one built version to another.
//
//   - Frames are the lake images of each version, told apart by uniqueName;
//     augmented frames are remade by every build, so they count only in the
//     statistics. A frame is added (only in the later version), removed
//     (only in the earlier) or kept; a kept frame moved when its split
//     differs.
//   - Boxes are compared per label. A kept frame's boxes that are equal in
//     both (label and x, y, w, h) are unchanged; of the rest, boxes of one
//     label that overlap (IoU > 0) are paired greedily, highest IoU first,
//     and counted as changed (moved or resized); the unpaired ones are added
//     or removed. Every box of an added frame is added, of a removed one
//     removed. A box whose label changed is a removal and an addition.
//   - The versions may belong to different datasets (frames are lake files
//     either way); SameDataset says whether they do. Both must be built.

// DiffSide names one of the two versions with its statistics.
type DiffSide struct {
	VersionID string   `json:"versionId"`
	VersionNo string   `json:"versionNo"`
	DatasetID string   `json:"datasetId"`
	Dataset   string   `json:"datasetName"`
	Labels    []string `json:"labels"`
	Split     Split    `json:"splitInfo"`
	Stats     Stats    `json:"stats"`
}

// FrameChanges counts the frames of a diff.
type FrameChanges struct {
	Added        int `json:"added"`
	Removed      int `json:"removed"`
	Moved        int `json:"moved"`
	Kept         int `json:"kept"`         // in both, moved or not
	BoxesChanged int `json:"boxesChanged"` // kept frames whose boxes differ
}

// Move is a kept frame whose split changed.
type Move struct {
	UniqueName string `json:"uniqueName"`
	From       string `json:"from"`
	To         string `json:"to"`
}

// BoxChanges counts the boxes of one label.
type BoxChanges struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// Diff is what changed from version From to version To.
type Diff struct {
	From         DiffSide              `json:"from"`
	To           DiffSide              `json:"to"`
	SameDataset  bool                  `json:"sameDataset"`
	Frames       FrameChanges          `json:"frames"`
	MovedBetween map[string]int        `json:"movedBetween"` // "train->test": frames
	Boxes        map[string]BoxChanges `json:"boxes"`        // by label
	AddedNames   []string              `json:"addedNames"`   // uniqueNames, sorted
	RemovedNames []string              `json:"removedNames"`
	Moves        []Move                `json:"moves"` // by uniqueName
}

// diffItem is a real frame of a version: its split and boxes as stored.
type diffItem struct {
	split string
	boxes string
}

// Diff compares two built versions (see the comment above).
func (s *Service) Diff(ctx context.Context, fromID, toID string) (Diff, error) {
	var d Diff
	fr, fv, err := s.built(ctx, fromID, "from_version_id")
	if err != nil {
		return d, err
	}
	tr, tv, err := s.built(ctx, toID, "to_version_id")
	if err != nil {
		return d, err
	}
	d = Diff{From: side(fv), To: side(tv), SameDataset: fr.groupSeq == tr.groupSeq, MovedBetween: map[string]int{},
		Boxes: map[string]BoxChanges{}, AddedNames: []string{}, RemovedNames: []string{}, Moves: []Move{}}
	// The two reads are independent: one on another core.
	var from map[string]diffItem
	var fromErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		from, fromErr = s.diffItems(ctx, fr)
	}()
	to, err := s.diffItems(ctx, tr)
	<-done
	if err = cmp.Or(fromErr, err); err != nil {
		return d, err
	}
	for name, t := range to {
		f, kept := from[name]
		if !kept {
			d.AddedNames = append(d.AddedNames, name)
			if err := d.countBoxes(name, "", t.boxes); err != nil {
				return d, err
			}
			continue
		}
		d.Frames.Kept++
		if f.split != t.split {
			d.Moves = append(d.Moves, Move{UniqueName: name, From: f.split, To: t.split})
			d.MovedBetween[f.split+"->"+t.split]++
		}
		if err := d.countBoxes(name, f.boxes, t.boxes); err != nil {
			return d, err
		}
	}
	for name, f := range from {
		if _, kept := to[name]; !kept {
			d.RemovedNames = append(d.RemovedNames, name)
			if err := d.countBoxes(name, f.boxes, ""); err != nil {
				return d, err
			}
		}
	}
	d.Frames.Added, d.Frames.Removed, d.Frames.Moved = len(d.AddedNames), len(d.RemovedNames), len(d.Moves)
	sort.Strings(d.AddedNames)
	sort.Strings(d.RemovedNames)
	sort.Slice(d.Moves, func(i, j int) bool { return d.Moves[i].UniqueName < d.Moves[j].UniqueName })
	return d, nil
}

func side(v Version) DiffSide {
	return DiffSide{VersionID: v.ID, VersionNo: v.VersionNo, DatasetID: v.DatasetID, Dataset: v.Dataset,
		Labels: v.Labels, Split: v.Split, Stats: v.Stats}
}

// diffItems reads the real frames of a version's current build.
func (s *Service) diffItems(ctx context.Context, vr versionRow) (map[string]diffItem, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT unique_name, split, boxes FROM version_item
		WHERE version_seq = ? AND build = ? AND derived_from IS NULL`, vr.seq, vr.current)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]diffItem{}
	for rows.Next() {
		var name string
		var it diffItem
		if err := rows.Scan(&name, &it.split, &it.boxes); err != nil {
			return nil, err
		}
		out[name] = it
	}
	return out, rows.Err()
}

// countBoxes adds one frame's box changes; "" stands for a frame absent
// from that version. Boxes of a frame stored alike, added or removed need
// only their labels, read without parsing the boxes.
func (d *Diff) countBoxes(name, from, to string) error {
	switch {
	case from == to:
		return d.countLabels(name, from, func(c *BoxChanges) { c.Unchanged++ })
	case from == "":
		return d.countLabels(name, to, func(c *BoxChanges) { c.Added++ })
	case to == "":
		return d.countLabels(name, from, func(c *BoxChanges) { c.Removed++ })
	}
	d.Frames.BoxesChanged++
	var fb, tb []Box
	if err := json.Unmarshal([]byte(from), &fb); err != nil {
		return fmt.Errorf("frame %s boxes: %w", name, err)
	}
	if err := json.Unmarshal([]byte(to), &tb); err != nil {
		return fmt.Errorf("frame %s boxes: %w", name, err)
	}
	for label, c := range compareBoxes(fb, tb) {
		sum := d.Boxes[label]
		sum.Added, sum.Removed, sum.Changed, sum.Unchanged = sum.Added+c.Added, sum.Removed+c.Removed,
			sum.Changed+c.Changed, sum.Unchanged+c.Unchanged
		d.Boxes[label] = sum
	}
	return nil
}

// countLabels calls add for the count of each box's label in boxes.
func (d *Diff) countLabels(name, boxes string, add func(*BoxChanges)) error {
	labels, err := boxLabels(boxes)
	if err != nil {
		return fmt.Errorf("frame %s boxes: %w", name, err)
	}
	for _, l := range labels {
		c := d.Boxes[l]
		add(&c)
		d.Boxes[l] = c
	}
	return nil
}

const labelKey = `"label":"`

// boxLabels returns the labels of a stored box array ("" none). Builds
// store boxes as encoding/json writes them, label first, so the labels are
// found by scanning; a label with an escape, or any other shape, is parsed.
func boxLabels(boxes string) ([]string, error) {
	if boxes == "" || boxes == "[]" {
		return nil, nil
	}
	var out []string
	for rest := boxes; ; {
		i := strings.Index(rest, labelKey)
		if i < 0 {
			break
		}
		rest = rest[i+len(labelKey):]
		j := strings.IndexByte(rest, '"')
		if j < 0 || strings.IndexByte(rest[:j], '\\') >= 0 {
			return parsedLabels(boxes)
		}
		out = append(out, rest[:j])
		rest = rest[j:]
	}
	if len(out) != strings.Count(boxes, `"label"`) {
		return parsedLabels(boxes)
	}
	return out, nil
}

func parsedLabels(boxes string) ([]string, error) {
	var bs []Box
	if err := json.Unmarshal([]byte(boxes), &bs); err != nil {
		return nil, err
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Label
	}
	return out, nil
}

// boxKey is a box as compareBoxes compares it: equal boxes with equal
// shapes (as JSON) are the same.
type boxKey struct {
	label      string
	x, y, w, h float64
	shape      string
}

func keyOf(b Box) boxKey {
	k := boxKey{label: b.Label, x: b.X, y: b.Y, w: b.W, h: b.H}
	if b.Type != "" {
		j, _ := json.Marshal(b.Geometry)
		k.shape = string(j)
	}
	return k
}

// compareBoxes counts, per label, how one frame's boxes from became to.
func compareBoxes(from, to []Box) map[string]BoxChanges {
	out := map[string]BoxChanges{}
	// Equal boxes first, as a multiset.
	left := map[boxKey]int{}
	for _, b := range from {
		left[keyOf(b)]++
	}
	var added []Box
	for _, b := range to {
		if k := keyOf(b); left[k] > 0 {
			left[k]--
			c := out[b.Label]
			c.Unchanged++
			out[b.Label] = c
		} else {
			added = append(added, b)
		}
	}
	var removed []Box
	for _, b := range from {
		if k := keyOf(b); left[k] > 0 {
			left[k]--
			removed = append(removed, b)
		}
	}
	// Overlapping boxes of one label pair up, highest IoU first.
	type pair struct {
		i, j int
		iou  float64
	}
	var pairs []pair
	for i, r := range removed {
		for j, a := range added {
			if r.Label == a.Label {
				if v := iou(r, a); v > 0 {
					pairs = append(pairs, pair{i, j, v})
				}
			}
		}
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].iou > pairs[b].iou })
	usedR, usedA := make([]bool, len(removed)), make([]bool, len(added))
	for _, p := range pairs {
		if !usedR[p.i] && !usedA[p.j] {
			usedR[p.i], usedA[p.j] = true, true
			c := out[removed[p.i].Label]
			c.Changed++
			out[removed[p.i].Label] = c
		}
	}
	for i, b := range removed {
		if !usedR[i] {
			c := out[b.Label]
			c.Removed++
			out[b.Label] = c
		}
	}
	for j, b := range added {
		if !usedA[j] {
			c := out[b.Label]
			c.Added++
			out[b.Label] = c
		}
	}
	return out
}

// iou is the intersection over union of two boxes.
func iou(a, b Box) float64 {
	w := min(a.X+a.W, b.X+b.W) - max(a.X, b.X)
	h := min(a.Y+a.H, b.Y+b.H) - max(a.Y, b.Y)
	if w <= 0 || h <= 0 {
		return 0
	}
	inter := w * h
	return inter / (a.W*a.H + b.W*b.H - inter)
}
