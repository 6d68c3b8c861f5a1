package labelimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// Request is what an archive import asks for.
type Request struct {
	Format     string `json:"format"`     // as import --format; "" is auto
	Collection string `json:"collection"` // "" is the archive's name without its extension
	Project    string `json:"project,omitempty"`
	Metadata   string `json:"metadata,omitempty"` // a JSON object stored on every file
	Name       string `json:"name,omitempty"`     // the archive's file name, for the collection's default
}

// payload is an import job's: the request and its archive in the service's folder.
type payload struct {
	Request
	Archive string `json:"archive"`
}

// NewService registers the import job handler on jobs (call it before the
// queue starts). Uploaded archives wait in dir for their job, which
// unpacks each under lim into a folder of its own there.
func NewService(l *lake.Lake, ann *annotate.Service, jobs *job.Queue, dir string, lim Limits) (*Service, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("imports folder: %w", err)
	}
	s := &Service{lake: l, annotate: ann, jobs: jobs, dir: dir, limits: lim.withDefaults()}
	jobs.Handle(JobType, s.run)
	return s, s.sweep(context.Background())
}

// sweep removes what ended jobs left in the folder: a cancelled job's
// handler cannot tell its cancel from a stop, after which it resumes, so it
// keeps its archive. A failed job keeps its archive for a retry (POST
// /jobs/{id}/retry); only the unpacked folder goes.
func (s *Service) sweep(ctx context.Context) error {
	for page := 0; ; page++ {
		jobs, _, err := s.jobs.List(ctx, job.ListOptions{Types: []string{JobType},
			Status: []job.Status{job.Completed, job.Failed, job.Cancelled}, PageIndex: page, PageSize: job.MaxPageSize})
		if err != nil {
			return fmt.Errorf("imports folder: %w", err)
		}
		for _, j := range jobs {
			var p payload
			if j.Status != job.Failed && json.Unmarshal(j.Payload, &p) == nil && p.Archive != "" {
				os.Remove(filepath.Join(s.dir, filepath.Base(p.Archive)))
			}
			os.RemoveAll(filepath.Join(s.dir, j.ID))
		}
		if len(jobs) < job.MaxPageSize {
			return nil
		}
	}
}

// Limits are the service's archive limits.
func (s *Service) Limits() Limits { return s.limits }

// Enqueue stores the archive body, checks it and the request, and queues
// the job that imports it. A request or archive refused is an
// InvalidArgument error that leaves nothing behind.
func (s *Service) Enqueue(ctx context.Context, req Request, body io.Reader) (string, error) {
	if _, err := format.ParseFormat(defaultFormat(req.Format)); err != nil {
		return "", errs.Invalid("format", "%v", err)
	}
	if req.Collection == "" {
		req.Collection = TrimArchiveExt(filepath.Base(req.Name))
	}
	if err := lake.ValidateCollectionName(req.Collection); err != nil {
		return "", err
	}
	if req.Metadata != "" {
		var m map[string]any
		if json.Unmarshal([]byte(req.Metadata), &m) != nil || m == nil {
			return "", errs.Invalid("metadata", "metadata must be a JSON object")
		}
	}
	name := id.New("imp") + ".archive"
	path := filepath.Join(s.dir, name)
	if err := s.save(path, body); err != nil {
		os.Remove(path)
		return "", err
	}
	if err := Check(ctx, path, s.limits); err != nil {
		os.Remove(path)
		return "", err
	}
	jobID, err := s.jobs.Enqueue(ctx, nil, JobType, payload{Request: req, Archive: name})
	if err != nil {
		os.Remove(path)
	}
	return jobID, err
}

func defaultFormat(f string) string {
	if f == "" {
		return string(format.Auto)
	}
	return f
}

// save writes body to path, synced: the job may run after a restart.
func (s *Service) save(path string, body io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// run is the job: unpack (again, after a restart or a retry: the folder is
// made anew), import into the lake, and keep the summary as the result. The
// archive stays while the job may be resumed or retried: it goes when the
// job completes, or with a cancelled job at the next start.
func (s *Service) run(ctx context.Context, r *job.Run) error {
	var p payload
	if err := r.Decode(&p); err != nil {
		return err
	}
	archive := filepath.Join(s.dir, filepath.Base(p.Archive))
	dest := filepath.Join(s.dir, r.Job().ID)
	os.RemoveAll(dest)
	defer os.RemoveAll(dest)
	if _, err := os.Stat(archive); errors.Is(err, fs.ErrNotExist) {
		return errs.New(errs.FailedPrecondition, "", "the job's archive is gone (a failed import of an older "+
			"version did not keep it): upload it again")
	}
	sum, err := s.importArchive(ctx, r, p, archive, dest)
	if err != nil {
		return scrubPaths(err, dest, s.dir)
	}
	if err := r.SetResult(sum); err != nil {
		return err
	}
	os.Remove(archive) // done: the result is set
	return nil
}

func (s *Service) importArchive(ctx context.Context, r *job.Run, p payload, archive, dest string) (Summary, error) {
	if err := Unpack(ctx, archive, dest, s.limits); err != nil {
		return Summary{}, err
	}
	opt := Options{Collection: p.Collection, Format: format.Format(defaultFormat(p.Format)), Metadata: p.Metadata,
		Project: p.Project, SpillDir: dest} // hidden there, and gone with the folder however the job ends
	last := 0
	opt.Files = func(n int) { r.SetTotal(int64(n)) }
	opt.Progress = func(done, _ int) {
		r.Advance(int64(done - last))
		last = done
	}
	return Run(ctx, dest, opt, LakeSink(s.lake, s.annotate, p.Collection), s.annotate)
}

// scrubPaths takes the server's folders out of a job's error, which any
// holder of a read key sees: a file of the archive is named by its path in
// the archive.
func scrubPaths(err error, dirs ...string) error {
	msg := err.Error()
	for _, d := range dirs {
		msg = strings.ReplaceAll(msg, d+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, d, "the archive")
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// Check reads the archive at path without writing anything and refuses it
// as Unpack would: hostile entries and the limits.
func Check(ctx context.Context, path string, lim Limits) error {
	kind, err := ArchiveKindOf(path)
	if err != nil {
		return err
	}
	if kind == "" {
		return errArchive("not a zip, tar or tar.gz archive")
	}
	u := &unpacker{ctx: ctx, lim: lim.withDefaults(), dryRun: true}
	if kind == Zip {
		return u.zip(path)
	}
	return u.tar(path, kind == TarGz)
}
