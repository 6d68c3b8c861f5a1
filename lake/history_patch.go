package lake

import (
	"encoding/json"
	"slices"
)

// A change that moves a box removes the old shape and adds the new one,
// which differ in a field or two. The added shape is then kept as a patch
// of the removed one, {"of": <its hash>, "set": {fields}, "unset": [keys]},
// when that is shorter: a session of adjustments costs little more than
// the shapes it drew.

type patch struct {
	Of    string                     `json:"of"`
	Set   map[string]json.RawMessage `json:"set,omitempty"`
	Unset []string                   `json:"unset,omitempty"`
}

func fields(shapeJSON string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(shapeJSON), &m) // shapeJSONs wrote it
	return m
}

// asPatches writes each added shape as a patch of a removed shape of the
// same label and type where that is shorter; each removed shape serves
// one added shape at most.
func asPatches(removed, added []string) []string {
	used := make([]bool, len(removed))
	out := make([]string, len(added))
	for i, a := range added {
		out[i] = a
		am := fields(a)
		for j, r := range removed {
			if used[j] {
				continue
			}
			rm := fields(r)
			if string(rm["label"]) != string(am["label"]) || string(rm["type"]) != string(am["type"]) {
				continue
			}
			p := patch{Of: shapeHash(r), Set: map[string]json.RawMessage{}}
			for k, v := range am {
				if string(rm[k]) != string(v) {
					p.Set[k] = v
				}
			}
			for k := range rm {
				if _, ok := am[k]; !ok {
					p.Unset = append(p.Unset, k)
				}
			}
			slices.Sort(p.Unset)
			if b, _ := json.Marshal(p); len(b) < len(a) {
				out[i], used[j] = string(b), true
			}
			break
		}
	}
	return out
}

// unpatch is the shape an added entry stands for: itself, or the removed
// shape it patches with the patch applied.
func unpatch(entry string, gone []string) string {
	if _, ok := fields(entry)["of"]; !ok {
		return entry
	}
	var p patch
	if json.Unmarshal([]byte(entry), &p) != nil {
		return entry
	}
	for _, g := range gone {
		if shapeHash(g) != p.Of {
			continue
		}
		base := fields(g)
		for k, v := range p.Set {
			base[k] = v
		}
		for _, k := range p.Unset {
			delete(base, k)
		}
		b, _ := json.Marshal(base) // keys sorted, as shapeJSONs writes
		return string(b)
	}
	return entry
}
