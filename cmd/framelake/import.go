package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
)

// importFlags are the flags of import.
type importFlags struct {
	coll, data, url, key, secret, meta, project, media string
	format                                             format.Format
	batch, parallel                                    int
	maxPixels                                          int
	limits                                             labelimport.Limits
}

func cmdImport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var f importFlags
	fs.StringVar(&f.coll, "collection", "", "collection to import into (default: the folder's or archive's name)")
	fs.StringVar(&f.data, "data", envOr("FRAMELAKE_DATA", ""), "data folder to import into directly (env FRAMELAKE_DATA)")
	fs.StringVar(&f.url, "url", envOr("FRAMELAKE_URL", ""), "server to import into over HTTP (env FRAMELAKE_URL)")
	fs.StringVar(&f.key, "key", os.Getenv("FRAMELAKE_KEY"), "API key for --url (env FRAMELAKE_KEY)")
	fs.StringVar(&f.secret, "secret", os.Getenv("FRAMELAKE_SECRET"), "API secret for --url (env FRAMELAKE_SECRET)")
	fs.StringVar(&f.meta, "metadata", "", "JSON object stored on every imported file")
	fs.StringVar(&f.media, "media", os.Getenv("FRAMELAKE_MEDIA"), "with --data: where media lives, as serve --media "+
		"(env FRAMELAKE_MEDIA; default: what the lake records)")
	fs.StringVar(&f.project, "project", "", "annotation project (name or id) whose upload sessions, one per split, receive the files and boxes; a new name creates an image project")
	formatName := fs.String("format", "auto", "labels to read with the media: auto, yolo, coco, voc, cvat, labelstudio, labelme or raw (media only)")
	fs.IntVar(&f.batch, "batch", 0, "files per batch (default 256 with --data, 64 with --url)")
	fs.IntVar(&f.parallel, "parallel", 4, "batches in flight at once")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pixels := maxPixelsFlag(fs)
	archiveLimitFlags(fs, &f.limits)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the import to this file (for go tool pprof)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: framelake import DIR|ARCHIVE [--format auto|yolo|coco|voc|cvat|labelstudio|labelme|raw] [--collection NAME] [--project NAME] (--data DIR | --url URL) [flags]\n  ARCHIVE: .zip, .tar, .tar.gz or .tgz")
		fs.PrintDefaults()
	}
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	if (f.data == "") == (f.url == "") {
		return errors.New("give exactly one of --data DIR (write the data folder directly) or --url URL (send to a server)")
	}
	if f.batch == 0 {
		f.batch = defaultBatch(f.data != "")
	}
	if f.batch < 1 || f.parallel < 1 {
		return errors.New("--batch and --parallel must be at least 1")
	}
	var err error
	if f.maxPixels, err = parsePixels(*pixels); err != nil {
		return err
	}
	if f.format, err = format.ParseFormat(*formatName); err != nil {
		return err
	}
	limitImportHeap()
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	dir := fs.Arg(0)
	if f.coll == "" {
		abs, _ := filepath.Abs(dir)
		f.coll = labelimport.TrimArchiveExt(filepath.Base(abs))
	}
	archive := labelimport.ArchiveName(dir)
	if f.url != "" && (archive || f.project != "") {
		return importByJob(ctx, dir, f, *asJSON)
	}
	if archive {
		tmp, err := os.MkdirTemp("", "framelake-import-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := labelimport.Unpack(ctx, dir, filepath.Join(tmp, "x"), f.limits); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		dir = filepath.Join(tmp, "x")
	}
	sum, err := importDir(ctx, dir, f)
	if err != nil {
		return err
	}
	return report(sum, *asJSON)
}

// limitImportHeap sets import's heap limit and GC percent, unless the
// environment sets them.
func limitImportHeap() {
	if os.Getenv("GOMEMLIMIT") == "" {
		// The importer holds the labels of the whole data set (a million
		// COCO boxes are some 100 MB) while SQLite's page cache and mapped
		// file grow beside them; left to GOGC alone the heap's garbage
		// doubled them, and peak RSS passed 400 MB at 100,000 images.
		debug.SetMemoryLimit(importHeapLimit)
		if os.Getenv("GOGC") == "" {
			// Under the limit the heap may grow to five times what is live
			// between collections: with GOGC's 100 a 10,000-image import of
			// a small live heap spent a fifth of its CPU time collecting.
			debug.SetGCPercent(400)
		}
	}
}

// startCPUProfile profiles the process into the file at path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// importHeapLimit is import's soft Go heap limit (GOMEMLIMIT overrides it).
// At 160 MiB a YOLO import of 100,000 images with a million boxes, whose
// labels are most of the live heap, collected without pause (38% of its
// CPU time); the rest of its RSS (SQLite, libjpeg, the runtime) is some
// 100 MB more.
const importHeapLimit = 224 << 20

// archiveLimitFlags are the bounds on an archive's unpacking, of import and serve.
func archiveLimitFlags(fs *flag.FlagSet, lim *labelimport.Limits) {
	fs.Int64Var(&lim.MaxBytes, "archive-max-bytes", envInt64("FRAMELAKE_ARCHIVE_MAX_BYTES", labelimport.DefaultMaxBytes),
		"largest total of uncompressed bytes an import archive may unpack to (env FRAMELAKE_ARCHIVE_MAX_BYTES)")
	fs.IntVar(&lim.MaxEntries, "archive-max-entries", int(envInt64("FRAMELAKE_ARCHIVE_MAX_ENTRIES", labelimport.DefaultMaxEntries)),
		"most entries an import archive may hold (env FRAMELAKE_ARCHIVE_MAX_ENTRIES)")
	fs.Int64Var(&lim.MaxEntryBytes, "archive-max-entry-bytes", envInt64("FRAMELAKE_ARCHIVE_MAX_ENTRY_BYTES", labelimport.DefaultMaxEntryBytes),
		"largest uncompressed entry of an import archive (env FRAMELAKE_ARCHIVE_MAX_ENTRY_BYTES)")
	fs.Float64Var(&lim.MaxRatio, "archive-max-ratio", float64(envInt64("FRAMELAKE_ARCHIVE_MAX_RATIO", labelimport.DefaultMaxRatio)),
		"most uncompressed bytes per compressed byte of an import archive entry, and of the archive, past 1 MiB (env FRAMELAKE_ARCHIVE_MAX_RATIO)")
}

func envInt64(name string, def int64) int64 {
	if n, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil && n > 0 {
		return n
	}
	return def
}

// importDir imports a folder into the data folder or, batch by batch, through a server.
func importDir(ctx context.Context, dir string, f importFlags) (labelimport.Summary, error) {
	opt := labelimport.Options{Collection: f.coll, Format: f.format, Metadata: f.meta, Project: f.project,
		Batch: f.batch, Parallel: f.parallel}
	prog := newProgress()
	opt.Files, opt.Progress = prog.start, prog.add
	defer prog.finish()
	if f.data != "" {
		// A 32 MiB window: an import mostly writes, and a database of a
		// million boxes mapped whole put 250 MB into the importer's RSS.
		// Checkpoints every 10,000 pages (40 MB of WAL) instead of 1,000:
		// 100,000 COCO images took 8% less CPU and 10% less time.
		a, err := appliance.Open(ctx, appliance.Config{DataDir: f.data, JobWorkers: -1, MaxPixels: f.maxPixels,
			DBMmapSize: 32 << 20, DBCheckpointPages: 10_000, Media: f.media})
		if err != nil {
			return labelimport.Summary{}, err
		}
		defer a.Close()
		return labelimport.Run(ctx, dir, opt, labelimport.LakeSink(a.Lake, a.Annotate, f.coll), a.Annotate)
	}
	return labelimport.Run(ctx, dir, opt, httpSink(f), nil)
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

// report prints the summary and fails when anything was refused.
func report(sum labelimport.Summary, asJSON bool) error {
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
		printLabels(sum.Labels)
		printProject(sum.Project)
	}
	return sum.Refused()
}

// progress draws a one-line bar on a terminal and nothing otherwise.
type progress struct {
	total, done, rejected atomic.Int64
	tty                   bool
	begin                 time.Time
	mu                    sync.Mutex
	last                  time.Time
}

func newProgress() *progress {
	p := &progress{begin: time.Now()}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty = true
	}
	return p
}

func (p *progress) start(total int) { p.total.Store(int64(total)) }

func (p *progress) add(done, rejected int) {
	p.done.Store(int64(done))
	p.rejected.Store(int64(rejected))
	p.draw(false)
}

func (p *progress) finish() { p.draw(true) }

func (p *progress) draw(final bool) {
	if !p.tty || p.total.Load() == 0 {
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
	fill := int(min(done, total) * width / total)
	rate := float64(done) / max(time.Since(p.begin).Seconds(), 0.001)
	fmt.Fprintf(os.Stderr, "\r[%s%s] %d/%d files  %.0f/s  %d rejected ", strings.Repeat("=", fill),
		strings.Repeat(" ", width-fill), done, p.total.Load(), rate, p.rejected.Load())
	if final {
		fmt.Fprintln(os.Stderr)
	}
}

// defaultBatch is --batch when not given. Into a data folder a batch is one
// transaction: 256 files wrote their rows in two thirds of the CPU time
// that 64 did, the pages of the indexes they share written out once a
// commit. To a server, 64 keeps each request small.
func defaultBatch(direct bool) int {
	if direct {
		return 256
	}
	return 64
}
