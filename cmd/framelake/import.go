package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// importSummary is what an import did, printed as text or --json. Files
// counts the images and videos sent; Ignored, the other files left out.
type importSummary struct {
	Files    int              `json:"files"`
	Stored   int              `json:"stored"`
	Skipped  int              `json:"skipped"`
	Rejected []lake.Rejection `json:"rejected"`
	Ignored  []ignoredFiles   `json:"ignored"`
	Seconds  float64          `json:"seconds"`
	PerSec   float64          `json:"filesPerSecond"`
}

// ignoredFiles counts the files of one extension import left out, and why.
type ignoredFiles struct {
	Ext    string `json:"ext"` // ".xml"; "" for names without one
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// batchFunc stores one batch of paths and reports what happened to them.
type batchFunc func(ctx context.Context, paths []string) (stored, skipped int, rejected []lake.Rejection, err error)

func cmdImport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	coll := fs.String("collection", "", "collection to import into (default: the folder's name)")
	data := fs.String("data", envOr("FRAMELAKE_DATA", ""), "data folder to import into directly (env FRAMELAKE_DATA)")
	url := fs.String("url", envOr("FRAMELAKE_URL", ""), "server to import into over HTTP (env FRAMELAKE_URL)")
	key := fs.String("key", os.Getenv("FRAMELAKE_KEY"), "API key for --url (env FRAMELAKE_KEY)")
	secret := fs.String("secret", os.Getenv("FRAMELAKE_SECRET"), "API secret for --url (env FRAMELAKE_SECRET)")
	meta := fs.String("metadata", "", "JSON object stored on every imported file")
	batch := fs.Int("batch", 64, "files per batch")
	parallel := fs.Int("parallel", 4, "batches in flight at once")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pixels := maxPixelsFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: framelake import DIR [--collection NAME] (--data DIR | --url URL) [flags]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	if (*data == "") == (*url == "") {
		return errors.New("give exactly one of --data DIR (write the data folder directly) or --url URL (send to a server)")
	}
	if *batch < 1 || *parallel < 1 {
		return errors.New("--batch and --parallel must be at least 1")
	}
	maxPixels, err := parsePixels(*pixels)
	if err != nil {
		return err
	}
	dir := fs.Arg(0)
	if *coll == "" {
		abs, _ := filepath.Abs(dir)
		*coll = filepath.Base(abs)
	}
	paths, err := walkMedia(dir)
	if err != nil {
		return err
	}
	paths, ignored, err := mediaOnly(paths)
	if err != nil {
		return err
	}
	opt := lake.AddOptions{Collection: *coll, Metadata: json.RawMessage(*meta), SkipExisting: true}
	var store batchFunc
	if *data != "" {
		a, err := appliance.Open(ctx, appliance.Config{DataDir: *data, JobWorkers: -1, MaxPixels: maxPixels})
		if err != nil {
			return err
		}
		defer a.Close()
		store = lakeBatches(a.Lake, opt)
	} else {
		store = httpBatches(client.New(*url, *key, *secret), opt)
	}
	sum, err := runImport(ctx, paths, *batch, *parallel, store, newProgress(len(paths)))
	if err != nil {
		return err
	}
	sum.Ignored = ignored
	return report(sum, *asJSON)
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

func lakeBatches(l *lake.Lake, opt lake.AddOptions) batchFunc {
	return func(ctx context.Context, paths []string) (int, int, []lake.Rejection, error) {
		ups := make([]lake.Upload, len(paths))
		for i, p := range paths {
			ups[i] = lake.Upload{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return os.Open(p) }}
		}
		res, err := l.Add(ctx, opt, ups)
		return len(res.Stored), len(res.Skipped), res.Rejected, err
	}
}

func httpBatches(c *client.Client, opt lake.AddOptions) batchFunc {
	copt := client.UploadOptions{Collection: opt.Collection, Metadata: opt.Metadata, SkipExisting: true}
	return func(ctx context.Context, paths []string) (int, int, []lake.Rejection, error) {
		files := make([]client.UploadFile, len(paths))
		for i, p := range paths {
			files[i] = client.FileFromPath(p)
		}
		res, err := c.UploadFiles(ctx, copt, files...)
		if err != nil {
			return 0, 0, nil, err
		}
		rej := make([]lake.Rejection, len(res.Rejected))
		for i, r := range res.Rejected {
			rej[i] = lake.Rejection{Name: r.Name, Code: errs.Code(r.Code), Reason: r.Reason}
		}
		return len(res.Stored), len(res.Skipped), rej, nil
	}
}

// runImport feeds batches to store with parallel batches in flight.
func runImport(ctx context.Context, paths []string, size, parallel int, store batchFunc, prog *progress) (importSummary, error) {
	start := time.Now()
	sum := importSummary{Files: len(paths), Rejected: []lake.Rejection{}, Ignored: []ignoredFiles{}}
	var mu sync.Mutex
	var firstErr error
	batches := make(chan []string)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for b := range batches {
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
	for i := 0; i < len(paths); i += size {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		batches <- paths[i:min(i+size, len(paths))]
	}
	close(batches)
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
		if err := json.NewEncoder(os.Stdout).Encode(sum); err != nil {
			return err
		}
	} else {
		fmt.Printf("imported %d files in %.1fs (%.0f files/s): %d stored, %d already there, %d rejected\n",
			sum.Files, sum.Seconds, sum.PerSec, sum.Stored, sum.Skipped, len(sum.Rejected))
		for _, r := range sum.Rejected {
			fmt.Printf("  rejected %s: %s\n", r.Name, r.Reason)
		}
		for _, g := range sum.Ignored {
			fmt.Printf("  ignored %d %s file(s): %s\n", g.Count, cmp.Or(g.Ext, "extensionless"), g.Reason)
		}
	}
	if len(sum.Rejected) > 0 {
		return fmt.Errorf("%d file(s) rejected", len(sum.Rejected))
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
