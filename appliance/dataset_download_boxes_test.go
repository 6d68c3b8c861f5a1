package appliance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

// TestDownloadOnlyFramesWithBoxes: of the twelve cars, the four with a bus
// box are the only frames of a "bus" version that download_dataset's
// only_with_boxes keeps; without it every frame is there, and without
// media the archive holds labels only.
func TestDownloadOnlyFramesWithBoxes(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "Buses", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"bus"}}))
	labelFiles := func(opt client.DownloadDatasetOptions) (all, nonEmpty int) {
		opt.VersionID, opt.ExportType, opt.Path = b.VersionID, "YOLO Darknet", t.TempDir()
		dir, err := e.read.DownloadDatasetWith(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		if opt.ExcludeMedia && countFiles(t, dir, ".jpg") != 0 {
			t.Errorf("media in a download without media")
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), "cars") && strings.HasSuffix(d.Name(), ".txt") {
				all++
				if b, _ := os.ReadFile(p); len(b) > 0 {
					nonEmpty++
				}
			}
			return nil
		})
		return all, nonEmpty
	}
	if all, boxed := labelFiles(client.DownloadDatasetOptions{ExcludeMedia: true}); all != 12 || boxed != 4 {
		t.Errorf("every frame: %d label files, %d with boxes; want 12 and 4", all, boxed)
	}
	if all, boxed := labelFiles(client.DownloadDatasetOptions{OnlyWithBoxes: true}); all != 4 || boxed != 4 {
		t.Errorf("only_with_boxes: %d label files, %d with boxes; want 4 and 4", all, boxed)
	}
}
