package web

import (
	"encoding/json"
	"mime"
	"net/http"
	"path"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

// datasetRoutes are the dataset operations of docs/spec/rest.md (Dataset List,
// Download Dataset, Create Dataset Version), a version's status, retry and
// delete, and the dataset client functions.
func (s *server) datasetRoutes(rest, api *echo.Group) {
	rest.GET("/datasets", s.datasetList)
	rest.GET("/datasets/:datasetGroupId", s.getDataset)
	rest.DELETE("/datasets/:datasetGroupId", s.deleteDataset)
	rest.POST("/datasets/:datasetGroupId/versions", s.createDatasetVersion)
	rest.GET("/dataset-versions/:datasetVersionId", s.getDatasetVersion)
	rest.DELETE("/dataset-versions/:datasetVersionId", s.deleteDatasetVersion)
	rest.GET("/dataset-versions/:datasetVersionId/data", s.downloadDatasetPage)
	rest.POST("/dataset-versions/:datasetVersionId/retry", s.retryDatasetVersion)
	s.function("create_dataset_from_collection", auth.Write, s.createDatasetFromCollection)
	s.function("create_dataset_from_datalake", auth.Write, s.createDatasetFromLake)
	s.function("update_dataset_version_from_collection", auth.Write, s.updateDatasetFromCollection)
	s.function("update_dataset_version_from_datalake", auth.Write, s.updateDatasetFromLake)
	s.function("download_dataset", auth.Read, s.downloadDataset)
}

// versionView is a version in Dataset List: the fields of docs/spec/interface.md 2.4,
// then the status and job of its latest build (building, ready, failed,
// cancelled), what its build used and its full statistics.
type versionView struct {
	VersionID       string          `json:"versionId"`
	CreatedAt       time.Time       `json:"createdAt"`
	CreatedBy       string          `json:"createdBy"` // the API key's name
	StatsSummary    statsSummary    `json:"statsSummary"`
	VersionNo       string          `json:"versionNo"`
	VersionDetails  string          `json:"versionDetails"`
	DatasetID       string          `json:"datasetId"`
	Status          string          `json:"status"`
	JobID           string          `json:"jobId"`
	Error           string          `json:"error,omitempty"`
	Labels          []string        `json:"labels"`
	SplitInfo       dataset.Split   `json:"splitInfo"`
	ExportTypes     []string        `json:"exportTypes"`
	DownloadFormats []string        `json:"downloadFormats"`
	Source          *sourceView     `json:"source"`
	BaseVersionID   string          `json:"baseVersionId,omitempty"`
	OperationList   []string        `json:"operationList"`
	Augmentation    json.RawMessage `json:"augmentationList"`
	// VideoFrames is how the build sampled its videos (video_frames); null without videos.
	VideoFrames *dataset.VideoFrames `json:"videoFrames"`
	Stats       dataset.Stats        `json:"stats"`
	// Leakage is stats.leakage at the top, for pages that show it: the
	// near-duplicate pairs of the build's frames across splits ("crossing");
	// null for builds made before leakage was measured and unbuilt versions.
	Leakage *dataset.Leakage `json:"leakage"`
	BuiltAt *time.Time       `json:"builtAt"`
}

// sourceView is the selection a build added, named as the create and update
// functions name it.
type sourceView struct {
	CollectionID string       `json:"collection_id,omitempty"`
	ItemType     string       `json:"item_type,omitempty"`
	Query        string       `json:"query"`
	Filter       *lake.Filter `json:"filter,omitempty"`
}

type statsSummary struct {
	TotalFrames int `json:"totalFrames"`
	TotalBoxes  int `json:"totalBoxes"`
}

func viewVersion(v dataset.Version) versionView {
	out := versionView{VersionID: v.ID, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy,
		StatsSummary: statsSummary{v.Stats.TotalFrames, v.Stats.TotalBoxes}, VersionNo: v.VersionNo,
		VersionDetails: v.Details(), DatasetID: v.DatasetID, Status: v.Status, JobID: v.JobID, Error: v.Error,
		Labels: v.Labels, SplitInfo: v.Split, ExportTypes: v.Export, DownloadFormats: v.Formats,
		BaseVersionID: v.Base, OperationList: v.Operations, Augmentation: v.Augmentation, Stats: v.Stats,
		Leakage: v.Stats.Leakage, BuiltAt: optTime(v.BuiltAt), VideoFrames: v.VideoFrames}
	if src := v.Source; src != nil {
		out.Source = &sourceView{CollectionID: src.CollectionID, ItemType: src.ItemType, Query: src.Query, Filter: src.Filter}
	}
	return out
}

type groupView struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	CreatedAt   time.Time     `json:"createdAt"`
	VersionList []versionView `json:"versionList"`
}

func (s *server) datasetList(c *echo.Context) error {
	groups, err := s.Datasets.List(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]groupView, len(groups))
	for i, g := range groups {
		out[i] = viewGroup(g)
	}
	return c.JSON(http.StatusOK, out)
}

func viewGroup(g dataset.Group) groupView {
	out := groupView{ID: g.ID, Name: g.Name, CreatedAt: g.CreatedAt, VersionList: make([]versionView, len(g.Versions))}
	for j, v := range g.Versions {
		out.VersionList[j] = viewVersion(v)
	}
	return out
}

// getDataset is one dataset as Dataset List shows it, with its versions.
func (s *server) getDataset(c *echo.Context) error {
	g, err := s.Datasets.Group(c.Request().Context(), c.Param("datasetGroupId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewGroup(g))
}

func (s *server) getDatasetVersion(c *echo.Context) error {
	v, err := s.Datasets.Version(c.Request().Context(), c.Param("datasetVersionId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewVersion(v))
}

func (s *server) createDatasetVersion(c *echo.Context) error {
	var req struct {
		Train      *float64 `json:"trainingSetPercentage"`
		Test       *float64 `json:"testingSetPercentage"`
		Validation *float64 `json:"validationSetPercentage"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"trainingSetPercentage", req.Train}, {"testingSetPercentage", req.Test}, {"validationSetPercentage", req.Validation}} {
		if f.v == nil {
			return errs.Invalid(f.name, "%s is required (a percentage; the three sum to 100)", f.name)
		}
	}
	out, err := s.Datasets.CreateVersion(c.Request().Context(), c.Param("datasetGroupId"),
		dataset.Split{Train: *req.Train, Test: *req.Test, Validation: *req.Validation}, createdBy(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"versionId": out.VersionID, "versionNo": out.VersionNo, "jobId": out.JobID})
}

func (s *server) retryDatasetVersion(c *echo.Context) error {
	out, err := s.Datasets.Retry(c.Request().Context(), c.Param("datasetVersionId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// exportFormats of REST Download Dataset and the box convention of each.
var exportFormats = map[string]func(format.Frame) any{
	"yolo":       func(f format.Frame) any { return format.YOLOBoxes(f) },
	"rcnn":       func(f format.Frame) any { return format.RCNNBoxes(f) },
	"tensorflow": func(f format.Frame) any { return format.TFBoxes(f) },
}

type framePage struct {
	PageIndex   int         `json:"pageIndex"`
	PageSize    int         `json:"pageSize"`
	TotalFrames int         `json:"totalFrames"`
	Labels      []string    `json:"labels"`
	Frames      []frameView `json:"frames"`
}

type frameView struct {
	UniqueName  string          `json:"uniqueName"`
	URL         string          `json:"url"`
	Split       string          `json:"split"`
	Augmented   bool            `json:"augmented"`
	DerivedFrom string          `json:"derivedFrom,omitempty"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	Annotations any             `json:"annotations"`
	Params      json.RawMessage `json:"params,omitempty"`
	// Video and VideoFrame name the video and frame a sampled frame is from.
	Video      string `json:"video,omitempty"`
	VideoFrame *int   `json:"videoFrame,omitempty"`
}

// downloadDatasetPage is REST Download Dataset: a page of frames with URLs
// and boxes in the convention of exportFormat.
func (s *server) downloadDatasetPage(c *echo.Context) error {
	q := c.Request().URL.Query()
	format := q.Get("exportFormat")
	conv, ok := exportFormats[format]
	if !ok {
		if format == "" {
			return errs.Invalid("exportFormat", "exportFormat is required: one of yolo, rcnn, tensorflow")
		}
		return errs.Invalid("exportFormat", "exportFormat %q is not one of the allowed values yolo, rcnn, tensorflow", format)
	}
	idx, err := intParam(q.Get("pageIndex"), "pageIndex", 0, 0, 1<<31)
	if err != nil {
		return err
	}
	size, err := intParam(q.Get("pageSize"), "pageSize", dataset.DefaultPageSize, 1, dataset.MaxPageSize)
	if err != nil {
		return err
	}
	p, err := s.Datasets.Frames(c.Request().Context(), c.Param("datasetVersionId"), idx, size)
	if err != nil {
		return err
	}
	out := framePage{PageIndex: idx, PageSize: size, TotalFrames: p.TotalFrames, Labels: p.Version.Labels,
		Frames: make([]frameView, len(p.Frames))}
	for i, ef := range s.Datasets.ExportFrames(c.Request().Context(), p) {
		f := p.Frames[i]
		out.Frames[i] = frameView{UniqueName: f.UniqueName, URL: f.URL, Split: f.Split, Augmented: f.Augmented,
			DerivedFrom: f.DerivedFrom, Width: f.Width, Height: f.Height, Annotations: conv(ef), Params: f.Params,
			Video: f.Video, VideoFrame: f.VideoFrame}
	}
	return c.JSON(http.StatusOK, out)
}

// splitInfo is split_info; a missing key counts as 0.
type splitInfo struct {
	Train      float64 `json:"train"`
	Test       float64 `json:"test"`
	Validation float64 `json:"validation"`
}

// specParams are the parameters every create and update function takes.
type specParams struct {
	SplitInfo              *splitInfo      `json:"split_info"`
	Labels                 []string        `json:"labels"`
	ExportTypes            []string        `json:"export_types"`
	Query                  string          `json:"query"`
	Filter                 *lake.Filter    `json:"filter"`
	OperationList          *[]string       `json:"operation_list"`
	AugmentationList       json.RawMessage `json:"augmentation_list"`
	KeepDuplicatesTogether bool            `json:"keep_duplicates_together"`
	// KeepIdenticalTogether (default true) puts byte-identical files in one split.
	KeepIdenticalTogether *bool `json:"keep_identical_together"`
	// VideoFrames samples the videos item_type video selects (docs/tracks.md).
	VideoFrames *dataset.VideoFrames `json:"video_frames"`
}

func (p specParams) spec() (dataset.Spec, error) {
	if p.SplitInfo == nil {
		return dataset.Spec{}, errs.Invalid("split_info", `split_info is required: {"train": 70, "test": 20, "validation": 10}`)
	}
	sp := dataset.Spec{Labels: p.Labels, ExportTypes: p.ExportTypes, Augmentation: p.AugmentationList,
		KeepDuplicatesTogether: p.KeepDuplicatesTogether,
		VideoFrames:            p.VideoFrames,
		SplitIdentical:         p.KeepIdenticalTogether != nil && !*p.KeepIdenticalTogether,
		Split:                  dataset.Split{Train: p.SplitInfo.Train, Test: p.SplitInfo.Test, Validation: p.SplitInfo.Validation}}
	if p.OperationList != nil { // null or absent: every operation
		sp.Operations = *p.OperationList
		if sp.Operations == nil {
			sp.Operations = []string{}
		}
	}
	return sp, nil
}

// createdBy is what a dataset version records as its author: the name of the
// API key that asked for it (every key has one; the id is a fallback).
func createdBy(c *echo.Context) string {
	k := caller(c)
	if k.Name != "" {
		return k.Name
	}
	return k.Key
}

func (s *server) createDatasetFromCollection(c *echo.Context) error {
	var p struct {
		DatasetName  string `json:"dataset_name"`
		CollectionID string `json:"collection_id"`
		specParams
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	if p.CollectionID == "" {
		return errs.Invalid("collection_id", "collection_id is required")
	}
	return s.createDataset(c, p.DatasetName, dataset.Source{CollectionID: p.CollectionID, Query: p.Query,
		Filter: p.Filter}, p.specParams)
}

func (s *server) createDatasetFromLake(c *echo.Context) error {
	var p struct {
		DatasetName string `json:"dataset_name"`
		ItemType    string `json:"item_type"`
		specParams
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	return s.createDataset(c, p.DatasetName, dataset.Source{ItemType: p.ItemType, Query: p.Query, Filter: p.Filter},
		p.specParams)
}

func (s *server) createDataset(c *echo.Context, name string, src dataset.Source, p specParams) error {
	sp, err := p.spec()
	if err != nil {
		return err
	}
	out, err := s.Datasets.Create(c.Request().Context(), dataset.NewDataset{Name: name, Source: src, Spec: sp,
		CreatedBy: createdBy(c)})
	if err != nil {
		return err
	}
	return ok(c, out)
}

// updateParams name the source version as dataset_version_id, or as the
// parameter table's version_id (with dataset_id, its group, optionally).
type updateParams struct {
	DatasetVersionID     string `json:"dataset_version_id"`
	DatasetID            string `json:"dataset_id"`
	VersionID            string `json:"version_id"`
	IsNewVersionRequired bool   `json:"is_new_version_required"`
	specParams
}

func (s *server) updateDatasetFromCollection(c *echo.Context) error {
	var p struct {
		CollectionID string `json:"collection_id"`
		updateParams
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	if p.CollectionID == "" {
		return errs.Invalid("collection_id", "collection_id is required")
	}
	return s.updateDataset(c, p.updateParams, dataset.Source{CollectionID: p.CollectionID, Query: p.Query, Filter: p.Filter})
}

func (s *server) updateDatasetFromLake(c *echo.Context) error {
	var p struct {
		ItemType string `json:"item_type"`
		updateParams
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	return s.updateDataset(c, p.updateParams, dataset.Source{ItemType: p.ItemType, Query: p.Query, Filter: p.Filter})
}

func (s *server) updateDataset(c *echo.Context, p updateParams, src dataset.Source) error {
	vid := p.DatasetVersionID
	switch {
	case vid != "" && p.VersionID != "" && vid != p.VersionID:
		return errs.Invalid("version_id", "dataset_version_id %s and version_id %s name different versions", vid, p.VersionID)
	case vid == "":
		vid = p.VersionID
	}
	if vid == "" {
		return errs.Invalid("dataset_version_id", "dataset_version_id (or version_id) is required: the source version")
	}
	sp, err := p.spec()
	if err != nil {
		return err
	}
	out, err := s.Datasets.Update(c.Request().Context(), dataset.Update{VersionID: vid, DatasetID: p.DatasetID,
		Source: src, Spec: sp, NewVersion: p.IsNewVersionRequired, CreatedBy: createdBy(c)})
	if err != nil {
		return err
	}
	return ok(c, out)
}

// downloadDataset streams a version's archive (download_dataset). The
// request is checked in full before the first byte is sent; a failure while
// streaming aborts the connection, so the client never takes a cut archive
// for a whole one.
func (s *server) downloadDataset(c *echo.Context) error {
	var p struct {
		VersionID        string `json:"version_id"`
		DatasetVersionID string `json:"dataset_version_id"`
		ExportType       string `json:"export_type"`
		IsMediaInclude   *bool  `json:"is_media_include"`
		// OnlyWithBoxes (optional, default false) leaves out frames without a box.
		OnlyWithBoxes bool `json:"only_with_boxes"`
		// CustomDownloadPath is where the client writes the archive; the server ignores it.
		CustomDownloadPath string `json:"custom_download_path"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	if p.VersionID == "" {
		p.VersionID = p.DatasetVersionID
	}
	ctx := c.Request().Context()
	d, err := s.Datasets.PrepareDownload(ctx, p.VersionID, p.ExportType)
	if err != nil {
		return err
	}
	media := p.IsMediaInclude == nil || *p.IsMediaInclude
	d.OnlyWithBoxes = p.OnlyWithBoxes
	h := c.Response().Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.FileName}))
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	if err := d.Write(ctx, c.Response(), media); err != nil {
		s.Logger.Error("download dataset", "version", p.VersionID, "format", p.ExportType, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// blobMedia serves an augmented frame's bytes for a signed blob URL.
func (s *server) blobMedia(c *echo.Context) error {
	q := c.Request().URL.Query()
	hash, ext, err := s.Lake.VerifyBlobURL(c.Param("name"), q.Get("exp"), q.Get("sig"))
	if err != nil {
		return err
	}
	f, err := s.Lake.Store().Open(c.Request().Context(), hash, ext)
	if err != nil {
		return err
	}
	defer f.Close()
	h := c.Response().Header()
	if t := mime.TypeByExtension("." + ext); t != "" {
		h.Set("Content-Type", t)
	}
	h.Set("ETag", `"`+hash+`"`)
	h.Set("Cache-Control", "private, max-age=3600")
	name := hash + "." + ext
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": path.Base(name)}))
	http.ServeContent(c.Response(), c.Request(), name, time.Time{}, f)
	return nil
}

func (s *server) deleteDataset(c *echo.Context) error {
	return answerDelete(c)(s.Datasets.DeleteDataset(c.Request().Context(), c.Param("datasetGroupId")))
}

func (s *server) deleteDatasetVersion(c *echo.Context) error {
	return answerDelete(c)(s.Datasets.DeleteVersion(c.Request().Context(), c.Param("datasetVersionId")))
}
