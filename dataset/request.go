package dataset

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// recipe is what a build makes, stored on the version so that a resumed or
// retried build makes the same thing.
type recipe struct {
	Base       string  `json:"base,omitempty"`       // version id whose frames are carried over
	KeepSplits bool    `json:"keepSplits,omitempty"` // carried frames keep their split (updates)
	Source     *Source `json:"source,omitempty"`     // images to add; nil for none
	Spec
}

// buildPayload is a build job's payload: which build of which version.
type buildPayload struct {
	VersionID string `json:"versionId"`
	Build     int    `json:"build"`
}

// New returns the service on a migrated database, registers the build job's
// handler on jobs (call it before jobs.Start) and the lake delete hook that
// takes deleted files out of versions; call it before serving requests. ops
// are where operation_list ids come from besides the lake's annotations.
func New(db *sqlitedb.DB, l *lake.Lake, jobs *job.Queue, opt Options, ops ...OperationSource) *Service {
	if opt.Batch <= 0 {
		opt.Batch = 32
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, lake: l, jobs: jobs, ops: append(append([]OperationSource{}, ops...), l), opt: opt, log: opt.Logger.With("component", "dataset"), now: time.Now}
	jobs.Handle(BuildJob, s.build)
	l.OnDelete(s.filesDeleted)
	l.OnBlobCheck(s.namesBlob)
	return s
}

// namesBlob tells the lake that a version's frame still needs a blob, so its
// clean-ups (a failed upload of the same bytes, a deleted file that shared
// them, a crash sweep) leave it on disk.
func (s *Service) namesBlob(ctx context.Context, hash, ext string) (bool, error) {
	var named bool
	err := s.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM version_item WHERE blob = ? AND ext = ?)`,
		hash, ext).Scan(&named)
	return named, err
}

// Create validates a new dataset and, in one transaction, creates its group
// and version 1.0 and queues the build. Bad input creates nothing.
func (s *Service) Create(ctx context.Context, nd NewDataset) (Created, error) {
	name := strings.TrimSpace(nd.Name)
	if name == "" {
		return Created{}, errs.Invalid("dataset_name", "dataset_name is required and must not be blank")
	}
	if err := s.checkSpec(ctx, &nd.Spec); err != nil {
		return Created{}, err
	}
	if err := checkVideoSource(nd.Source, nd.Spec); err != nil {
		return Created{}, err
	}
	n, err := s.countSource(ctx, nd.Source)
	if err != nil {
		return Created{}, err
	}
	if n == 0 {
		field, what := sourceField(nd.Source)
		return Created{}, errs.Invalid(field, "the selection (%s) holds no images: a dataset needs at least one", what)
	}
	r := recipe{Source: &nd.Source, Spec: nd.Spec}
	var out Created
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		now := millis(s.now())
		out.DatasetID = id.New("dsg")
		res, err := tx.ExecContext(ctx, `INSERT INTO dataset_group (id, name, seed, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)`, out.DatasetID, name, rand.Int64(), nd.CreatedBy, now, now)
		if err != nil {
			return err
		}
		groupSeq, _ := res.LastInsertId()
		return s.insertVersion(ctx, tx, groupSeq, r, nd.CreatedBy, &out)
	})
	return out, err
}

// Update adds a source's images to a version (see the package comment).
func (s *Service) Update(ctx context.Context, u Update) (Created, error) {
	v, err := s.versionRow(ctx, s.db.R, u.VersionID)
	if err != nil {
		return Created{}, fieldNotFound(err, "dataset_version_id")
	}
	if u.DatasetID != "" && u.DatasetID != v.groupID {
		return Created{}, errs.Invalid("dataset_id", "version %s belongs to dataset %s, not %s", v.id, v.groupID, u.DatasetID)
	}
	if v.current == 0 {
		return Created{}, errs.New(errs.FailedPrecondition, "dataset_version_id",
			"version %s has no completed build yet (job %s); wait for it or retry it", v.id, v.jobID)
	}
	var base recipe
	if err := json.Unmarshal([]byte(v.built.String), &base); err != nil {
		return Created{}, fmt.Errorf("version %s recipe: %w", v.id, err)
	}
	inherit(&u.Spec, base.Spec)
	if err := s.checkSpec(ctx, &u.Spec); err != nil {
		return Created{}, err
	}
	if err := checkVideoSource(u.Source, u.Spec); err != nil {
		return Created{}, err
	}
	n, err := s.countSource(ctx, u.Source)
	if err != nil {
		return Created{}, err
	}
	if n == 0 {
		field, what := sourceField(u.Source)
		return Created{}, errs.Invalid(field, "the selection (%s) holds no images: an update must select at "+
			"least one; version %s was left as it is", what, v.id)
	}
	r := recipe{Base: v.id, KeepSplits: true, Source: &u.Source, Spec: u.Spec}
	out := Created{DatasetID: v.groupID}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if u.NewVersion {
			return s.insertVersion(ctx, tx, v.groupSeq, r, u.CreatedBy, &out)
		}
		return s.rebuild(ctx, tx, v.id, &r, &out)
	})
	return out, err
}

// inherit gives an update the source version's augmentation and export
// types when the call leaves them out (absent or null): an update adds
// images, it does not silently drop the source's augmented frames.
func inherit(sp *Spec, base Spec) {
	if a := bytes.TrimSpace(sp.Augmentation); len(a) == 0 || bytes.Equal(a, []byte("null")) {
		sp.Augmentation = base.Augmentation
	}
	if sp.ExportTypes == nil {
		sp.ExportTypes = base.ExportTypes
	}
	if sp.VideoFrames == nil { // the source's videos are sampled as they were
		sp.VideoFrames = base.VideoFrames
	}
}

// checkVideoSource: a selection of videos needs to say how to sample them.
func checkVideoSource(src Source, sp Spec) error {
	if src.ItemType == "video" && sp.VideoFrames == nil {
		return errs.Invalid("video_frames", `item_type video needs video_frames, how to sample the videos' frames: `+
			`{"sample": "every", "every": 10}, {"sample": "keyframes"} or {"sample": "all"}`)
	}
	return nil
}

// CreateVersion makes the group's next version from the frames of its latest
// built version, every frame re-bucketed with split (REST Create Dataset
// Version); labels, annotation sources and augmentation are the latest's.
func (s *Service) CreateVersion(ctx context.Context, groupID string, split Split, createdBy string) (Created, error) {
	if err := split.Check("validationSetPercentage", restSplitFields); err != nil {
		if e := (*errs.Error)(nil); errors.As(err, &e) && e.Field == "validationSetPercentage" &&
			split.Validation >= 0 && split.Validation <= 100 {
			// The sum is off: say what the last part would have to be.
			return Created{}, errs.Invalid(e.Field, "trainingSetPercentage + testingSetPercentage + "+
				"validationSetPercentage must sum to 100: with %s and %s, validationSetPercentage must be %s, got %s",
				trimFloat(split.Train), trimFloat(split.Test), trimFloat(100-split.Train-split.Test), trimFloat(split.Validation))
		}
		return Created{}, err
	}
	var groupSeq int64
	err := s.db.R.QueryRowContext(ctx, `SELECT seq FROM dataset_group WHERE id = ?`, groupID).Scan(&groupSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return Created{}, errs.New(errs.NotFound, "datasetGroupId", "dataset %q not found", groupID)
	} else if err != nil {
		return Created{}, err
	}
	var baseID, built string
	err = s.db.R.QueryRowContext(ctx, `SELECT id, built_recipe FROM dataset_version
		WHERE group_seq = ? AND current_build > 0 ORDER BY version_no DESC LIMIT 1`, groupSeq).Scan(&baseID, &built)
	if errors.Is(err, sql.ErrNoRows) {
		return Created{}, errs.New(errs.FailedPrecondition, "datasetGroupId",
			"dataset %s has no built version to make a new one from", groupID)
	} else if err != nil {
		return Created{}, err
	}
	var base recipe
	if err := json.Unmarshal([]byte(built), &base); err != nil {
		return Created{}, fmt.Errorf("version %s recipe: %w", baseID, err)
	}
	r := recipe{Base: baseID, Spec: base.Spec}
	r.Split = split
	out := Created{DatasetID: groupID}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error { return s.insertVersion(ctx, tx, groupSeq, r, createdBy, &out) })
	return out, err
}

// Retry runs the latest build of a version again after it failed or was
// cancelled.
func (s *Service) Retry(ctx context.Context, versionID string) (Created, error) {
	var out Created
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		v, err := s.versionRow(ctx, tx, versionID)
		if err != nil {
			return err
		}
		st, _, err := s.status(ctx, v.status, v.jobID)
		if err != nil {
			return err
		}
		if st != StatusFailed && st != StatusCancelled {
			return errs.New(errs.FailedPrecondition, "", "version %s is %s (job %s): only a failed or cancelled "+
				"build is retried", v.id, st, v.jobID)
		}
		var r recipe
		if err := json.Unmarshal([]byte(v.recipe), &r); err != nil {
			return fmt.Errorf("version %s recipe: %w", v.id, err)
		}
		out.DatasetID = v.groupID
		return s.rebuild(ctx, tx, v.id, &r, &out)
	})
	return out, err
}

var restSplitFields = [3]string{"trainingSetPercentage", "testingSetPercentage", "validationSetPercentage"}

// insertVersion adds the group's next version in tx and queues its build.
func (s *Service) insertVersion(ctx context.Context, tx *sql.Tx, groupSeq int64, r recipe, by string, out *Created) error {
	var no int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version_no), 0) + 1 FROM dataset_version WHERE group_seq = ?`,
		groupSeq).Scan(&no); err != nil {
		return err
	}
	out.VersionID, out.VersionNo = id.New("dsv"), versionNo(no)
	rj, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if out.JobID, err = s.jobs.Enqueue(ctx, tx, BuildJob, buildPayload{VersionID: out.VersionID, Build: 1}); err != nil {
		return err
	}
	now := millis(s.now())
	_, err = tx.ExecContext(ctx, `INSERT INTO dataset_version (id, group_seq, version_no, status, job_id, recipe,
		pending_build, created_by, created_at, updated_at) VALUES (?, ?, ?, 'building', ?, ?, 1, ?, ?, ?)`,
		out.VersionID, groupSeq, no, out.JobID, string(rj), by, now, now)
	return err
}

// rebuild queues a new build of an existing version in tx, unless one is
// already queued or running.
func (s *Service) rebuild(ctx context.Context, tx *sql.Tx, versionID string, r *recipe, out *Created) error {
	v, err := s.versionRow(ctx, tx, versionID)
	if err != nil {
		return err
	}
	if st, _, err := s.status(ctx, v.status, v.jobID); err != nil {
		return err
	} else if st == StatusBuilding {
		return errs.New(errs.FailedPrecondition, "dataset_version_id",
			"version %s is being built (job %s); wait for the build to finish", v.id, v.jobID)
	}
	build := max(v.current, v.pending) + 1
	rj, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if out.JobID, err = s.jobs.Enqueue(ctx, tx, BuildJob, buildPayload{VersionID: v.id, Build: build}); err != nil {
		return err
	}
	out.VersionID, out.VersionNo = v.id, versionNo(v.no)
	_, err = tx.ExecContext(ctx, `UPDATE dataset_version SET status = 'building', job_id = ?, recipe = ?,
		pending_build = ?, updated_at = ? WHERE seq = ?`, out.JobID, string(rj), build, millis(s.now()), v.seq)
	return err
}

// status is a version's status: a building version whose job ended without
// completing it has failed, with the job's error.
func (s *Service) status(ctx context.Context, stored, jobID string) (string, string, error) {
	if stored == StatusReady {
		return StatusReady, "", nil
	}
	j, err := s.jobs.Get(ctx, jobID)
	if errs.Is(err, errs.NotFound) {
		return StatusFailed, "build job " + jobID + " is gone", nil
	} else if err != nil {
		return "", "", err
	}
	switch j.Status {
	case job.Failed:
		return StatusFailed, j.Error, nil
	case job.Cancelled:
		return StatusCancelled, "", nil
	case job.Completed: // completed without making the build current: superseded
		return StatusFailed, "build ended without completing", nil
	}
	return StatusBuilding, "", nil
}

func versionNo(n int) string { return fmt.Sprintf("%d.0", n) }

// checkSpec validates and normalizes what a create or update fixes.
func (s *Service) checkSpec(ctx context.Context, sp *Spec) error {
	if len(sp.Labels) == 0 {
		return errs.Invalid("labels", "labels is required: at least one label")
	}
	seen := map[string]bool{}
	for i, l := range sp.Labels {
		f := fmt.Sprintf("labels[%d]", i)
		switch {
		case strings.TrimSpace(l) == "":
			return errs.Invalid(f, "%s is blank", f)
		case seen[l]:
			return errs.Invalid(f, "%s: label %q is listed twice", f, l)
		}
		seen[l] = true
	}
	if err := sp.Split.Check("split_info", SplitFields); err != nil {
		return err
	}
	types := []string{} // canonical names, each once, in the order given
	for i, t := range sp.ExportTypes {
		f, err := format.ParseExportType(t)
		if err != nil {
			return errs.Invalid("export_types", "export_types[%d]: %s", i, strings.TrimPrefix(err.Error(), "export_type "))
		}
		if !slices.Contains(types, string(f)) {
			types = append(types, string(f))
		}
	}
	sp.ExportTypes = types
	if sp.VideoFrames != nil {
		if err := sp.VideoFrames.check(); err != nil {
			return err
		}
	}
	for i, op := range sp.Operations {
		f := fmt.Sprintf("operation_list[%d]", i)
		if strings.TrimSpace(op) == "" {
			return errs.Invalid(f, "%s is blank", f)
		}
		ok, err := s.knownOperation(ctx, op)
		if err != nil {
			return err
		} else if !ok {
			return errs.New(errs.NotFound, "operation_list",
				"%s: %q is not an annotation project or model run id, and no annotation comes from it", f, op)
		}
	}
	return normalizeAugmentation(sp)
}

// knownOperation reports whether op names a project or run (the sources
// given to New) or is carried by some annotation in the lake (the last source).
func (s *Service) knownOperation(ctx context.Context, op string) (bool, error) {
	for _, src := range s.ops {
		if ok, err := src.HasOperation(ctx, op); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// normalizeAugmentation validates the configuration and drops a null one.
func normalizeAugmentation(sp *Spec) error {
	raw := bytes.TrimSpace(sp.Augmentation)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		sp.Augmentation = nil
		return nil
	}
	cfg, err := augment.Parse(raw)
	if err != nil {
		return err
	}
	if len(selected(cfg)) == 0 {
		sp.Augmentation = nil // nothing selected: a build without augmentation
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return errs.Invalid(augment.Field, "augmentation_list: %v", err)
	}
	sp.Augmentation = b.Bytes()
	return nil
}

func selected(cfg *augment.Config) []augment.Entry {
	var out []augment.Entry
	for _, e := range cfg.ImageLevel {
		if e.Selected() {
			out = append(out, e)
		}
	}
	return out
}

// sourceField names the request field a source's emptiness is about.
func sourceField(src Source) (field, what string) {
	if src.Query != "" {
		return "query", fmt.Sprintf("query %q", src.Query)
	}
	if src.CollectionID != "" {
		return "collection_id", "collection " + src.CollectionID
	}
	return "item_type", "item_type " + defaultItemType(src.ItemType)
}

func defaultItemType(t string) string {
	if t == "" {
		return "image"
	}
	return t
}

// sourceSQL is the boolean SQL over "file AS f" for the images src selects.
func (s *Service) sourceSQL(ctx context.Context, src Source) (string, []any, error) {
	sel := lake.Selection{CollectionID: src.CollectionID, Query: src.Query, Filter: src.Filter, ItemType: src.ItemType}
	if src.CollectionID != "" {
		if src.ItemType != "" && src.ItemType != "image" && src.ItemType != "video" {
			return "", nil, errs.Invalid("item_type", "item_type %q does not apply to a collection", src.ItemType)
		}
		if _, err := s.lake.Collection(ctx, src.CollectionID); err != nil {
			return "", nil, fieldNotFound(err, "collection_id")
		}
	}
	inDatasets := false
	switch sel.ItemType {
	case "", "image", "image_collection":
	case "dataset":
		sel.ItemType, inDatasets = "image", true
	case "video":
		return s.lake.SelectionSQL(ctx, sel)
	default:
		return "", nil, errs.Invalid("item_type", "item_type %q is not one of image, image_collection, dataset, video", src.ItemType)
	}
	where, args, err := s.lake.ImageSelectionSQL(ctx, sel)
	if err != nil {
		return "", nil, err
	}
	if inDatasets {
		where = "(" + where + `) AND f.seq IN (SELECT vi.file_seq FROM version_item vi
			JOIN dataset_version v ON v.seq = vi.version_seq AND vi.build = v.current_build
			WHERE vi.derived_from IS NULL)`
	}
	return where, args, nil
}

// countSource validates a source and counts its images.
func (s *Service) countSource(ctx context.Context, src Source) (int, error) {
	where, args, err := s.sourceSQL(ctx, src)
	if err != nil {
		return 0, err
	}
	return s.lake.CountFilesWhere(ctx, where, args)
}

// fieldNotFound gives a not-found error the request field it is about.
func fieldNotFound(err error, field string) error {
	var e *errs.Error
	if errors.As(err, &e) && e.Code == errs.NotFound && e.Field == "" {
		c := *e
		c.Field = field
		return &c
	}
	return err
}

// versionRow is a version's row with its group's.
type versionRow struct {
	seq, groupSeq     int64
	id, groupID, name string
	no                int
	status, jobID     string
	recipe            string
	built             sql.NullString
	current, pending  int
	seed              int64
	stats             string
	createdBy         string
	createdAt         int64
	builtAt           sql.NullInt64
}

const versionColumns = `v.seq, v.group_seq, v.id, g.id, g.name, v.version_no, v.status, v.job_id, v.recipe,
	v.built_recipe, v.current_build, v.pending_build, g.seed, v.stats, v.created_by, v.created_at, v.built_at`

type scanner interface{ Scan(dest ...any) error }

func scanVersion(row scanner) (versionRow, error) {
	var v versionRow
	err := row.Scan(&v.seq, &v.groupSeq, &v.id, &v.groupID, &v.name, &v.no, &v.status, &v.jobID, &v.recipe,
		&v.built, &v.current, &v.pending, &v.seed, &v.stats, &v.createdBy, &v.createdAt, &v.builtAt)
	return v, err
}

// querier is the reader pool or a write transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Service) versionRow(ctx context.Context, q querier, versionID string) (versionRow, error) {
	v, err := scanVersion(q.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM dataset_version v
		JOIN dataset_group g ON g.seq = v.group_seq WHERE v.id = ?`, versionID))
	if errors.Is(err, sql.ErrNoRows) {
		return v, errs.NotFoundf("dataset version %q not found", versionID)
	}
	return v, err
}
