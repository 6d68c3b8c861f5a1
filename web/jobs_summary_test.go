package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestSummarizeResultBounded: whatever a result holds (a list of 100,000
// names, a 1 MB string, 500 keys, nesting 50 deep), its summary is a few
// KB and keeps the counts a job list shows.
func TestSummarizeResultBounded(t *testing.T) {
	names := make([]string, 100000)
	for i := range names {
		names[i] = fmt.Sprintf("category-%06d", i)
	}
	wide := map[string]int{}
	for i := range 500 {
		wide[fmt.Sprintf("k%03d", i)] = i
	}
	deep := any(1)
	for range 50 {
		deep = map[string]any{"a": deep}
	}
	raw, _ := json.Marshal(map[string]any{"stored": 2, "format": "coco", "note": strings.Repeat("x", 1<<20),
		"labels": map[string]any{"categories": names, "counts": map[string]int{"over_limit": 5}, "boxes": 7},
		"wide":   wide, "deep": deep})
	sum := summarizeResult(raw)
	if len(sum) > 4<<10 {
		t.Fatalf("summary of %d bytes: %.300s", len(sum), sum)
	}
	var got struct {
		Stored int
		Labels struct {
			CategoriesCount, Boxes int
			Counts                 map[string]int
		}
		Wide map[string]int
	}
	if err := json.Unmarshal(sum, &got); err != nil || got.Stored != 2 || got.Labels.CategoriesCount != 100000 ||
		got.Labels.Boxes != 7 || got.Labels.Counts["over_limit"] != 5 || got.Wide["keysLeftOut"] != 500-summaryKeys {
		t.Errorf("summary %s (%v)", sum, err)
	}
}
