package lake_test

import (
	"bytes"
	"context"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// TestIngestWritesGridThumbnail: the decode that checks and scores a
// 1400x1050 JPEG at ingest also makes its 256 px grid thumbnail, in the
// cache once the file is stored, so the grid's first view is a cache hit;
// its quality scores are those of the bytes (curate.Score). A 640x480 JPEG,
// whose grey decodes at 240 px, gets none (made on first view, as before),
// and a file refused by a check or truncated leaves none.
func TestIngestWritesGridThumbnail(t *testing.T) {
	dir := t.TempDir()
	thumbs := filepath.Join(dir, "thumbs")
	l, _ := reopenLake(t, dir, func(o *lake.Options) { o.ThumbDir = thumbs })
	l.ScoreAtIngest(curate.IngestScorer())
	ctx := context.Background()
	big, small, refused := testmedia.JPEG(1400, 1050, 1), testmedia.JPEG(640, 480, 2), testmedia.JPEG(1400, 1050, 3)
	res, err := l.Add(ctx, lake.AddOptions{Check: func(i int, f lake.File) error {
		if f.Name == "refused.jpg" {
			return errs.Invalid("files", "refused")
		}
		return nil
	}}, []lake.Upload{mem("big.jpg", big), mem("small.jpg", small), mem("refused.jpg", refused),
		mem("cut.jpg", big[:len(big)/2])})
	if err != nil || len(res.Stored) != 2 || len(res.Rejected) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	entries, _ := filepath.Glob(filepath.Join(thumbs, "*", "*", "*"))
	if len(entries) != 1 {
		t.Fatalf("cache entries after ingest: %v, want big.jpg's alone", entries)
	}
	f := res.Stored[0]
	entry, err := os.ReadFile(filepath.Join(thumbs, "256", f.Blob[:2], f.Blob+".jpg"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(entry))
	if err != nil || cfg.Width != 256 || cfg.Height != 192 {
		t.Fatalf("thumbnail %+v %v, want 256x192", cfg, err)
	}
	got, err := l.Thumbnail(ctx, f, 256)
	if err != nil || !bytes.Equal(got, entry) {
		t.Fatalf("first view is not the ingest entry: %v", err)
	}
	q, err := l.FileQuality(ctx, f.Seq())
	want, werr := curate.Score(big, 1400, 1050)
	if err != nil || werr != nil || q == nil || *q != (lake.Quality{Sharpness: want.Sharpness, Brightness: want.Brightness,
		Contrast: want.Contrast, Entropy: want.Entropy, Aspect: want.Aspect, PHash: want.PHash}) {
		t.Fatalf("scores %+v %v, want those of the bytes %+v %v", q, err, want, werr)
	}
}
