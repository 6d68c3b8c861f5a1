package curate

import (
	"cmp"
	"slices"
	"sync"

	"github.com/framelake/framelake/lake"
)

// unionFind joins items into groups; safe for concurrent union.
type unionFind struct {
	mu     sync.Mutex
	parent []int32
}

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
	}
	return u
}

func (u *unionFind) find(i int32) int32 {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *unionFind) union(a, b int32) {
	u.mu.Lock()
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u.parent[max(ra, rb)] = min(ra, rb)
	}
	u.mu.Unlock()
}

// better says whether a should be kept over b: more pixels, then more
// bytes, then sharper, then the smaller uniqueName (so the choice is
// stable). Bytes before sharpness: of two encodings of one picture the
// larger is the less compressed, and JPEG blocking raises the Laplacian's
// variance, so a heavily re-encoded copy measures sharper than its source.
func better(a, b lake.Scored) bool {
	if c := cmp.Compare(a.Pixels, b.Pixels); c != 0 {
		return c > 0
	}
	if c := cmp.Compare(a.Size, b.Size); c != 0 {
		return c > 0
	}
	if c := cmp.Compare(a.Sharpness, b.Sharpness); c != 0 {
		return c > 0
	}
	return a.UniqueName < b.UniqueName
}

// groupsOf lists the groups of two or more items, each keeper first and
// the groups by their id.
func groupsOf(items []lake.Scored, u *unionFind) [][]int32 {
	size := make([]int32, len(items))
	for i := range items {
		size[u.find(int32(i))]++
	}
	byRoot := map[int32][]int32{}
	for i := range items {
		if r := u.find(int32(i)); size[r] > 1 {
			byRoot[r] = append(byRoot[r], int32(i))
		}
	}
	var out [][]int32
	for _, m := range byRoot {
		slices.SortFunc(m, func(a, b int32) int {
			if better(items[a], items[b]) {
				return -1
			}
			return 1
		})
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b []int32) int { return cmp.Compare(items[a[0]].UniqueName, items[b[0]].UniqueName) })
	return out
}
