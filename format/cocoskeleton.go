package format

import (
	"maps"
	"slices"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// cocoSkeletons declares, in the report, each keypoints category's point
// names and skeleton (COCO numbers a skeleton's points from 1). COCO files
// name no flip pairs: left_X and right_X points pair, as COCO's person's do,
// and COCO's 17 person points get its sigmas, so a COCO person import
// declares exactly shape.COCOPerson. A skeleton edge that names no point is
// a Malformed problem and the category keeps its names alone.
func (rd *reader) cocoSkeletons(rel string, doc *cocoDoc) {
	for _, id := range slices.Sorted(maps.Keys(doc.kps)) {
		names := doc.kps[id]
		label, ok := doc.cats[id]
		if !ok || !slices.Contains(rd.rep.Categories, label) {
			continue
		}
		sk := shape.Skeleton{Names: names}
		for _, e := range doc.skel[id] {
			if e[0] < 1 || e[1] < 1 || e[0] > len(names) || e[1] > len(names) {
				rd.rep.add(Malformed, rel, 0, "category %d (%s): skeleton edge %v names no keypoint of its %d; its skeleton not declared",
					id, label, e, len(names))
				sk.Edges = nil
				break
			}
			sk.Edges = append(sk.Edges, [2]string{names[e[0]-1], names[e[1]-1]})
		}
		sk.Flip = leftRightPairs(names)
		if slices.Equal(names, shape.COCOPerson.Names) {
			sk.Sigmas = shape.COCOPerson.Sigmas
		}
		if err := sk.Check(); err != nil {
			rd.rep.add(Malformed, rel, 0, "category %d (%s): %v; its keypoints not declared", id, label, err)
			continue
		}
		if rd.rep.Skeletons == nil {
			rd.rep.Skeletons = map[string]shape.Skeleton{}
		}
		rd.rep.Skeletons[label] = sk
	}
}

// leftRightPairs pairs each left_X point with a right_X one, in names' order.
func leftRightPairs(names []string) [][2]string {
	var out [][2]string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "left_"); ok && slices.Contains(names, "right_"+rest) {
			out = append(out, [2]string{n, "right_" + rest})
		}
	}
	return out
}
