package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framelake/framelake/labelio"
	"github.com/framelake/framelake/lake"
)

// importSummary is what an import did, printed as text or --json. Files
// counts the images and videos sent; Ignored, the other files left out.
// Format says which labels were read (raw: none) and why; Labels, what
// they gave.
type importSummary struct {
	Format    labelio.Format   `json:"format"`
	FormatWhy string           `json:"formatWhy"`
	Files     int              `json:"files"`
	Stored    int              `json:"stored"`
	Skipped   int              `json:"skipped"`
	Rejected  []lake.Rejection `json:"rejected"`
	Ignored   []ignoredFiles   `json:"ignored"`
	Labels    *labelSummary    `json:"labels,omitempty"`
	Seconds   float64          `json:"seconds"`
	PerSec    float64          `json:"filesPerSecond"`
}

// ignoredFiles counts the files of one extension import left out, and why.
type ignoredFiles struct {
	Ext    string `json:"ext"` // ".xml"; "" for names without one
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// batchFunc stores one batch of paths and reports what happened to them.
type batchFunc func(ctx context.Context, paths []string) (stored, skipped int, rejected []lake.Rejection, err error)

// importFlags are the flags of import that say where files go.
type importFlags struct {
	coll, data, url, key, secret, meta string
	batch, parallel                    int
	maxPixels                          int
	media                              string
}

func cmdImport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var f importFlags
	fs.StringVar(&f.coll, "collection", "", "collection to import into (default: the folder's name)")
	fs.StringVar(&f.data, "data", envOr("FRAMELAKE_DATA", ""), "data folder to import into directly (env FRAMELAKE_DATA)")
	fs.StringVar(&f.url, "url", envOr("FRAMELAKE_URL", ""), "server to import into over HTTP (env FRAMELAKE_URL)")
	fs.StringVar(&f.key, "key", os.Getenv("FRAMELAKE_KEY"), "API key for --url (env FRAMELAKE_KEY)")
	fs.StringVar(&f.secret, "secret", os.Getenv("FRAMELAKE_SECRET"), "API secret for --url (env FRAMELAKE_SECRET)")
	fs.StringVar(&f.meta, "metadata", "", "JSON object stored on every imported file")
	fs.StringVar(&f.media, "media", os.Getenv("FRAMELAKE_MEDIA"), "with --data: where media lives, as serve --media "+
		"(env FRAMELAKE_MEDIA; default: what the lake records)")
	format := fs.String("format", "auto", "labels to read with the media: auto, yolo, coco, voc, cvat, labelstudio or raw (media only)")
	fs.IntVar(&f.batch, "batch", 64, "files per batch")
	fs.IntVar(&f.parallel, "parallel", 4, "batches in flight at once")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pixels := maxPixelsFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: framelake import DIR|ARCHIVE.zip [--format auto|yolo|coco|voc|cvat|labelstudio|raw] [--collection NAME] (--data DIR | --url URL) [flags]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	if (f.data == "") == (f.url == "") {
		return errors.New("give exactly one of --data DIR (write the data folder directly) or --url URL (send to a server)")
	}
	if f.batch < 1 || f.parallel < 1 {
		return errors.New("--batch and --parallel must be at least 1")
	}
	var err error
	if f.maxPixels, err = parsePixels(*pixels); err != nil {
		return err
	}
	lf, err := labelio.ParseFormat(*format)
	if err != nil {
		return err
	}
	dir := fs.Arg(0)
	if f.coll == "" {
		abs, _ := filepath.Abs(dir)
		f.coll = strings.TrimSuffix(filepath.Base(abs), ".zip")
	}
	if strings.EqualFold(filepath.Ext(dir), ".zip") {
		tmp, err := unpackZip(dir)
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	why := "given with --format"
	if lf != labelio.Raw {
		read, err := readLabels(ctx, dir, lf)
		if err != nil {
			return err
		}
		if read.rep.Format != labelio.Raw {
			return importLabelled(ctx, dir, f, read, *asJSON)
		}
		why = read.rep.Why
	}
	return importRaw(ctx, dir, f, why, *asJSON)
}

// importRaw imports the media under dir without labels.
func importRaw(ctx context.Context, dir string, f importFlags, why string, asJSON bool) error {
	paths, err := walkMedia(dir)
	if err != nil {
		return err
	}
	paths, ignored, err := mediaOnly(paths)
	if err != nil {
		return err
	}
	s, err := openSink(ctx, f)
	if err != nil {
		return err
	}
	defer s.close()
	store := func(ctx context.Context, paths []string) (int, int, []lake.Rejection, error) {
		o, err := s.add(ctx, json.RawMessage(f.meta), nil, paths, nil)
		return len(o.stored), len(o.skipped), o.rejected, err
	}
	sum, err := runImport(ctx, chunks(paths, f.batch), f.parallel, store, newProgress(len(paths)))
	if err != nil {
		return err
	}
	sum.Format, sum.FormatWhy, sum.Ignored = labelio.Raw, why, ignored
	return report(sum, asJSON)
}

// chunks cuts paths into batches of size.
func chunks(paths []string, size int) [][]string {
	var out [][]string
	for i := 0; i < len(paths); i += size {
		out = append(out, paths[i:min(i+size, len(paths))])
	}
	return out
}

// maxPixelsFlag is the --max-pixels flag of serve and import --data.
func maxPixelsFlag(fs *flag.FlagSet) *string {
	return fs.String("max-pixels", envOr("FRAMELAKE_MAX_PIXELS", strconv.Itoa(lake.DefaultMaxPixels)),
		"largest image accepted, width times height, read from its header (env FRAMELAKE_MAX_PIXELS)")
}

func parsePixels(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--max-pixels must be a positive whole number of pixels, got %q", s)
	}
	return n, nil
}

// walkMedia lists the regular files under dir, skipping hidden files and folders.
func walkMedia(dir string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	return paths, err
}

// mediaOnly keeps the images and videos among paths, as the lake judges
// them by name or, for a name it does not know, by magic bytes, and counts
// the rest by extension. A folder of both imports into one collection typed
// by its majority (images on a tie; see lake's collectionTypeOf): that
// type's files go first, so the first batch, which creates the
// collection, is of it.
func mediaOnly(paths []string) (media []string, ignored []ignoredFiles, err error) {
	var images, videos []string
	byExt := map[string]int{}
	ignored = []ignoredFiles{}
	for _, p := range paths {
		t, err := lake.MediaTypeOfFile(p)
		if err != nil {
			return nil, nil, err
		}
		switch t {
		case lake.Image:
			images = append(images, p)
		case lake.Video:
			videos = append(videos, p)
		default:
			byExt[strings.ToLower(filepath.Ext(p))]++
		}
	}
	for _, ext := range slices.Sorted(maps.Keys(byExt)) {
		ignored = append(ignored, ignoredFiles{Ext: ext, Count: byExt[ext], Reason: "not an image or video"})
	}
	if len(videos) > len(images) {
		return append(videos, images...), ignored, nil
	}
	return append(images, videos...), ignored, nil
}

// runImport feeds batches to store with parallel batches in flight.
func runImport(ctx context.Context, batches [][]string, parallel int, store batchFunc, prog *progress) (importSummary, error) {
	start := time.Now()
	n := 0
	for _, b := range batches {
		n += len(b)
	}
	sum := importSummary{Files: n, Rejected: []lake.Rejection{}, Ignored: []ignoredFiles{}}
	var mu sync.Mutex
	var firstErr error
	queue := make(chan []string)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for b := range queue {
				stored, skipped, rej, err := store(ctx, b)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				sum.Stored += stored
				sum.Skipped += skipped
				sum.Rejected = append(sum.Rejected, rej...)
				mu.Unlock()
				prog.add(len(b), len(rej))
			}
		})
	}
	for _, b := range batches {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		queue <- b
	}
	close(queue)
	wg.Wait()
	prog.finish()
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.PerSec = float64(sum.Stored+sum.Skipped+len(sum.Rejected)) / sum.Seconds
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return sum, firstErr
}

func report(sum importSummary, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		fmt.Printf("format %s: %s\n", sum.Format, sum.FormatWhy)
		fmt.Printf("imported %d files in %.1fs (%.0f files/s): %d stored, %d already there, %d rejected\n",
			sum.Files, sum.Seconds, sum.PerSec, sum.Stored, sum.Skipped, len(sum.Rejected))
		for _, r := range sum.Rejected {
			fmt.Printf("  rejected %s: %s\n", r.Name, r.Reason)
		}
		for _, g := range sum.Ignored {
			fmt.Printf("  ignored %d %s file(s): %s\n", g.Count, cmp.Or(g.Ext, "extensionless"), g.Reason)
		}
		sum.Labels.print()
	}
	refused := sum.Labels.refused()
	switch {
	case len(sum.Rejected) > 0 && refused > 0:
		return fmt.Errorf("%d file(s) rejected, %d label(s) refused", len(sum.Rejected), refused)
	case len(sum.Rejected) > 0:
		return fmt.Errorf("%d file(s) rejected", len(sum.Rejected))
	case refused > 0:
		return fmt.Errorf("%d label(s) refused", refused)
	}
	return nil
}

// progress draws a one-line bar on a terminal and nothing otherwise.
type progress struct {
	total, done, rejected atomic.Int64
	tty                   bool
	start                 time.Time
	mu                    sync.Mutex
	last                  time.Time
}

func newProgress(total int) *progress {
	p := &progress{start: time.Now()}
	p.total.Store(int64(total))
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty = true
	}
	return p
}

func (p *progress) add(n, rejected int) {
	p.done.Add(int64(n))
	p.rejected.Add(int64(rejected))
	p.draw(false)
}

func (p *progress) finish() { p.draw(true) }

func (p *progress) draw(final bool) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !final && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	done, total := p.done.Load(), max(1, p.total.Load())
	const width = 30
	fill := int(done * width / total)
	rate := float64(done) / max(time.Since(p.start).Seconds(), 0.001)
	fmt.Fprintf(os.Stderr, "\r[%s%s] %d/%d files  %.0f/s  %d rejected ", strings.Repeat("=", fill),
		strings.Repeat(" ", width-fill), done, p.total.Load(), rate, p.rejected.Load())
	if final {
		fmt.Fprintln(os.Stderr)
	}
}
