package dataset

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// List returns every dataset group with all its versions, built or not,
// versions oldest first, groups newest first; each version carries the
// status and job id of its latest build (see the package comment).
func (s *Service) List(ctx context.Context) ([]Group, error) {
	return s.groups(ctx, "")
}

// Group returns one dataset group with all its versions, as List shows it;
// a group whose last version was deleted has none.
func (s *Service) Group(ctx context.Context, groupID string) (Group, error) {
	gs, err := s.groups(ctx, `WHERE g.id = ?`, groupID)
	if err != nil || len(gs) == 1 {
		return firstGroup(gs), err
	}
	g := Group{ID: groupID, Versions: []Version{}}
	var created int64
	err = s.db.R.QueryRowContext(ctx, `SELECT name, created_at FROM dataset_group WHERE id = ?`, groupID).Scan(&g.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, errs.New(errs.NotFound, "datasetGroupId", "dataset %q not found", groupID)
	}
	g.CreatedAt = fromMillis(created)
	return g, err
}

func firstGroup(gs []Group) Group {
	if len(gs) == 0 {
		return Group{}
	}
	return gs[0]
}

// groups lists the groups with versions that where (a WHERE clause over
// dataset_group g, or "") keeps.
func (s *Service) groups(ctx context.Context, where string, args ...any) ([]Group, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+versionColumns+`, g.created_at FROM dataset_version v
		JOIN dataset_group g ON g.seq = v.group_seq `+where+` ORDER BY g.seq DESC, v.version_no`, args...)
	if err != nil {
		return nil, err
	}
	var vrows []versionRow
	var created []int64
	for rows.Next() {
		var v versionRow
		var c int64
		err := rows.Scan(&v.seq, &v.groupSeq, &v.id, &v.groupID, &v.name, &v.no, &v.status, &v.jobID, &v.recipe,
			&v.built, &v.current, &v.pending, &v.seed, &v.stats, &v.createdBy, &v.createdAt, &v.builtAt, &c)
		if err != nil {
			rows.Close()
			return nil, err
		}
		vrows, created = append(vrows, v), append(created, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	groups := []Group{}
	for i, vr := range vrows {
		v, err := s.view(ctx, vr)
		if err != nil {
			return nil, err
		}
		if n := len(groups); n == 0 || groups[n-1].ID != vr.groupID {
			groups = append(groups, Group{ID: vr.groupID, Name: vr.name, CreatedAt: fromMillis(created[i])})
		}
		g := &groups[len(groups)-1]
		g.Versions = append(g.Versions, v)
	}
	return groups, nil
}

// Version returns a version, built or not.
func (s *Service) Version(ctx context.Context, versionID string) (Version, error) {
	vr, err := s.versionRow(ctx, s.db.R, versionID)
	if err != nil {
		return Version{}, err
	}
	return s.view(ctx, vr)
}

// view turns a row into a Version: the current build's recipe and stats, and
// the status of the latest build.
func (s *Service) view(ctx context.Context, vr versionRow) (Version, error) {
	v := Version{ID: vr.id, DatasetID: vr.groupID, Dataset: vr.name, VersionNo: versionNo(vr.no), JobID: vr.jobID,
		Built: vr.current > 0, CreatedBy: vr.createdBy, CreatedAt: fromMillis(vr.createdAt),
		Labels: []string{}, Export: []string{}, Formats: []string{}}
	var err error
	if v.Status, v.Error, err = s.status(ctx, vr.status, vr.jobID); err != nil {
		return v, err
	}
	if vr.builtAt.Valid {
		v.BuiltAt = fromMillis(vr.builtAt.Int64)
	}
	recipeText := vr.recipe
	if vr.built.Valid {
		recipeText = vr.built.String
	}
	var r recipe
	if err := json.Unmarshal([]byte(recipeText), &r); err != nil {
		return v, fmt.Errorf("version %s recipe: %w", vr.id, err)
	}
	v.Labels, v.Split, v.Operations, v.Augmentation, v.Source, v.Base = r.Labels, r.Split, r.Operations,
		r.Augmentation, r.Source, r.Base
	v.VideoFrames = r.VideoFrames
	if r.ExportTypes != nil {
		v.Export = r.ExportTypes
	}
	v.Formats = append(v.Formats, v.Export...)
	for _, f := range format.ExportTypes() {
		if !slices.Contains(v.Formats, string(f)) {
			v.Formats = append(v.Formats, string(f))
		}
	}
	if err := json.Unmarshal([]byte(vr.stats), &v.Stats); err != nil {
		return v, fmt.Errorf("version %s stats: %w", vr.id, err)
	}
	if v.Stats.Splits == nil {
		v.Stats.Splits, v.Stats.Labels = map[string]Count{}, map[string]Count{}
	}
	return v, nil
}

// Details is a short human summary of a version (Dataset List's
// versionDetails): its frames, then what its build used.
func (v Version) Details() string {
	var b strings.Builder
	if v.Built {
		st := v.Stats
		fmt.Fprintf(&b, "%s; %s", v.Split, plural(st.TotalFrames, "frame", "frames"))
		if st.AugmentedFrames > 0 {
			fmt.Fprintf(&b, " (%d augmented)", st.AugmentedFrames)
		}
		fmt.Fprintf(&b, ", %s; train %d, test %d, validation %d", shapesText(st),
			st.Splits[Train].Frames, st.Splits[Test].Frames, st.Splits[Validation].Frames)
	} else {
		fmt.Fprintf(&b, "%s; not built yet", v.Split)
	}
	fmt.Fprintf(&b, "; labels %s", strings.Join(v.Labels, ", "))
	if src := v.Source; src != nil && src.Query != "" {
		fmt.Fprintf(&b, "; query %q", src.Query)
	}
	b.WriteString("; augmentation ")
	b.WriteString(augmentationSummary(v.Augmentation))
	if v.Status != StatusReady {
		fmt.Fprintf(&b, "; latest build %s (job %s)", v.Status, v.JobID)
	}
	return b.String()
}

// augmentationSummary names the selected augmentations of a stored
// configuration, "none" without one.
func augmentationSummary(raw json.RawMessage) string {
	cfg, err := augment.Parse(raw)
	if len(raw) == 0 || err != nil {
		return "none"
	}
	var ids []string
	for _, e := range selected(cfg) {
		ids = append(ids, e.ID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// plural is "1 frame", "2 frames".
// shapesText is a build's annotations in words: boxes while they are all
// boxes, else shapes with each type's count.
func shapesText(st Stats) string {
	if len(st.Shapes) == 0 || len(st.Shapes) == 1 && st.Shapes[string(shape.Box)] > 0 {
		return plural(st.TotalBoxes, "box", "boxes")
	}
	return plural(st.TotalBoxes, "shape", "shapes") + " (" + shape.CountsText(st.Shapes) + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// built returns a version that has a completed build, or an error saying why not.
func (s *Service) built(ctx context.Context, versionID, field string) (versionRow, Version, error) {
	vr, err := s.versionRow(ctx, s.db.R, versionID)
	if err != nil {
		return vr, Version{}, fieldNotFound(err, field)
	}
	v, err := s.view(ctx, vr)
	if err != nil {
		return vr, v, err
	}
	if vr.current == 0 {
		return vr, v, errs.New(errs.FailedPrecondition, field, "version %s has no completed build (%s, job %s)",
			vr.id, v.Status, vr.jobID)
	}
	return vr, v, nil
}

// Frames returns one page of a built version's frames (REST Download
// Dataset): real and augmented, in order, each with a signed URL.
func (s *Service) Frames(ctx context.Context, versionID string, pageIndex, pageSize int) (Page, error) {
	if pageSize == 0 {
		pageSize = DefaultPageSize
	}
	if pageIndex < 0 || pageSize < 1 || pageSize > MaxPageSize {
		return Page{}, errs.Invalid("pageSize", "pageIndex must be at least 0 and pageSize in 1..%d", MaxPageSize)
	}
	vr, v, err := s.built(ctx, versionID, "datasetVersionId")
	if err != nil {
		return Page{}, err
	}
	p := Page{Version: v, PageIndex: pageIndex, PageSize: pageSize, TotalFrames: v.Stats.TotalFrames, Frames: []Frame{}}
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+itemColumns+` FROM version_item
		WHERE version_seq = ? AND build = ? ORDER BY ord LIMIT ? OFFSET ?`,
		vr.seq, vr.current, pageSize, pageIndex*pageSize)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	for rows.Next() {
		f, _, err := scanItem(rows)
		if err != nil {
			return p, err
		}
		if f.Augmented || !f.inLake || f.Video != "" { // made by the build: a blob no lake file owns
			f.URL = s.lake.BlobURL(f.blob, f.Ext)
		} else {
			f.URL = s.lake.URLOf(f.UniqueName)
		}
		p.Frames = append(p.Frames, f)
	}
	return p, rows.Err()
}

// itemColumns are read FROM version_item. The last is an augmented frame's
// source's extension, which names the source's media in exports; the source
// is found a few rows back, since a frame's augmented ones follow it in ord.
const itemColumns = `ord, unique_name, name, split, derived_from, blob, ext, width, height, params, boxes, file_seq,
	video, video_frame, CASE WHEN derived_from IS NOT NULL THEN (SELECT src.ext FROM version_item src
		WHERE src.version_seq = version_item.version_seq AND src.build = version_item.build
		AND src.ord < version_item.ord AND src.unique_name = version_item.derived_from
		ORDER BY src.ord DESC LIMIT 1) END`

func scanItem(row scanner) (Frame, int, error) {
	var f Frame
	var ord int
	var derived, params, sourceExt sql.NullString
	var fileSeq, videoFrame sql.NullInt64
	var video sql.NullString
	var boxes string
	if err := row.Scan(&ord, &f.UniqueName, &f.Name, &f.Split, &derived, &f.blob, &f.Ext, &f.Width, &f.Height,
		&params, &boxes, &fileSeq, &video, &videoFrame, &sourceExt); err != nil {
		return f, 0, err
	}
	if video.Valid {
		n := int(videoFrame.Int64)
		f.Video, f.VideoFrame = video.String, &n
	}
	f.Augmented, f.DerivedFrom, f.sourceExt = derived.Valid, derived.String, sourceExt.String
	f.inLake = fileSeq.Valid
	if params.Valid {
		f.Params = json.RawMessage(params.String)
	}
	if err := json.Unmarshal([]byte(boxes), &f.Boxes); err != nil {
		return f, 0, fmt.Errorf("frame %s boxes: %w", f.UniqueName, err)
	}
	return f, ord, nil
}
