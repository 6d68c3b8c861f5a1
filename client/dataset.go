package client

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SplitInfo is a train/test/validation split in percent; the three sum to 100.
type SplitInfo struct {
	Train      float64 `json:"train"`
	Test       float64 `json:"test"`
	Validation float64 `json:"validation"`
}

// DatasetSpec is what the create and update functions take besides the
// dataset and source (docs/spec/interface.md 2.8).
type DatasetSpec struct {
	SplitInfo   SplitInfo
	Labels      []string // at least one; fixes the class order
	ExportTypes []string // 'RAW', 'YOLO Darknet', 'Semantic Segmentation', ...
	Query       string
	Filter      *Filter
	// OperationList selects annotation sources: nil for every project and
	// model run, an empty non-nil slice for none, ids for only those.
	OperationList []string
	// AugmentationList is an augmentation configuration (docs/spec/interface.md 2.9); nil for none.
	AugmentationList json.RawMessage
	// DatasetID is the update functions' dataset_id (the interface's
	// parameter table names dataset_id with version_id): the source
	// version's dataset, which the server checks. The create functions
	// refuse it.
	DatasetID string
	// KeepDuplicatesTogether puts each near-duplicate group (FindDuplicates)
	// in one split, its keeper's.
	KeepDuplicatesTogether bool
	// SplitIdentical lets byte-identical files land in different splits;
	// by default each set of them lands in one (keep_identical_together).
	SplitIdentical bool
}

func (s DatasetSpec) params(p map[string]any) map[string]any {
	p["split_info"], p["labels"], p["operation_list"] = s.SplitInfo, s.Labels, s.OperationList
	if s.ExportTypes != nil {
		p["export_types"] = s.ExportTypes
	}
	if s.Query != "" {
		p["query"] = s.Query
	}
	if s.Filter != nil {
		p["filter"] = s.Filter
	}
	if s.AugmentationList != nil {
		p["augmentation_list"] = s.AugmentationList
	}
	if s.DatasetID != "" {
		p["dataset_id"] = s.DatasetID
	}
	if s.KeepDuplicatesTogether {
		p["keep_duplicates_together"] = true
	}
	if s.SplitIdentical {
		p["keep_identical_together"] = false
	}
	return p
}

// DatasetBuild identifies a dataset version whose build was queued; follow
// JobID with WaitJob.
type DatasetBuild struct {
	DatasetID string `json:"datasetId"`
	VersionID string `json:"versionId"`
	VersionNo string `json:"versionNo"`
	JobID     string `json:"jobId"`
}

// CreateDatasetFromCollection makes a dataset (version 1.0) from the images of a collection.
func (c *Client) CreateDatasetFromCollection(ctx context.Context, name, collectionID string, spec DatasetSpec) (DatasetBuild, error) {
	var out DatasetBuild
	err := c.postJSON(ctx, "/api/v1/client/create_dataset_from_collection",
		spec.params(map[string]any{"dataset_name": name, "collection_id": collectionID}), &out)
	return out, err
}

// CreateDatasetFromDatalake makes a dataset from lake images; itemType is
// image (""), image_collection or dataset.
func (c *Client) CreateDatasetFromDatalake(ctx context.Context, name, itemType string, spec DatasetSpec) (DatasetBuild, error) {
	p := map[string]any{"dataset_name": name}
	if itemType != "" {
		p["item_type"] = itemType
	}
	var out DatasetBuild
	err := c.postJSON(ctx, "/api/v1/client/create_dataset_from_datalake", spec.params(p), &out)
	return out, err
}

// UpdateDatasetVersionFromCollection adds a collection's images to a
// version: into the group's next version when newVersion is set, in place
// otherwise. versionID is the source version (dataset_version_id, or the
// parameter table's version_id); spec.DatasetID may name its dataset.
func (c *Client) UpdateDatasetVersionFromCollection(ctx context.Context, versionID, collectionID string, newVersion bool,
	spec DatasetSpec) (DatasetBuild, error) {
	var out DatasetBuild
	err := c.postJSON(ctx, "/api/v1/client/update_dataset_version_from_collection",
		spec.params(map[string]any{"dataset_version_id": versionID, "collection_id": collectionID,
			"is_new_version_required": newVersion}), &out)
	return out, err
}

// UpdateDatasetVersionFromDatalake adds lake images to a version, as
// UpdateDatasetVersionFromCollection does.
func (c *Client) UpdateDatasetVersionFromDatalake(ctx context.Context, versionID, itemType string, newVersion bool,
	spec DatasetSpec) (DatasetBuild, error) {
	p := map[string]any{"dataset_version_id": versionID, "is_new_version_required": newVersion}
	if itemType != "" {
		p["item_type"] = itemType
	}
	var out DatasetBuild
	err := c.postJSON(ctx, "/api/v1/client/update_dataset_version_from_datalake", spec.params(p), &out)
	return out, err
}

// DatasetCount is frames and boxes of a part of a version.
type DatasetCount struct {
	Frames    int `json:"frames"`
	Boxes     int `json:"boxes"`
	Augmented int `json:"augmented"`
}

// DatasetStats describe a version's frames.
type DatasetStats struct {
	TotalFrames     int                     `json:"totalFrames"`
	TotalBoxes      int                     `json:"totalBoxes"`
	AugmentedFrames int                     `json:"augmentedFrames"`
	Splits          map[string]DatasetCount `json:"splits"`
	Labels          map[string]DatasetCount `json:"labels"`
	// Shapes counts the annotations by type (box, polygon, mask, ...).
	Shapes map[string]int `json:"shapes"`
	// Videos, VideoFrames, TrackShapes and InterpolatedShapes count what a
	// build of video frames (video_frames) took: the videos, the frames
	// sampled from them, the shapes from tracks, and of those the shapes
	// interpolated between keyframes.
	Videos             int `json:"videos,omitempty"`
	VideoFrames        int `json:"videoFrames,omitempty"`
	TrackShapes        int `json:"trackShapes,omitempty"`
	InterpolatedShapes int `json:"interpolatedShapes,omitempty"`
	// Leakage is the near-duplicate pairs across splits at build time; nil
	// for versions built before framelake reported it.
	Leakage *DatasetLeakage `json:"leakage"`
}

// DatasetVersion is a version as Dataset List shows it.
type DatasetVersion struct {
	VersionID    string    `json:"versionId"`
	CreatedAt    time.Time `json:"createdAt"`
	CreatedBy    string    `json:"createdBy"`
	StatsSummary struct {
		TotalFrames int `json:"totalFrames"`
		TotalBoxes  int `json:"totalBoxes"`
	} `json:"statsSummary"`
	VersionNo       string    `json:"versionNo"`
	VersionDetails  string    `json:"versionDetails"`
	DatasetID       string    `json:"datasetId"`
	Status          string    `json:"status"` // building, ready, failed, cancelled (of the latest build)
	JobID           string    `json:"jobId"`  // of the latest build
	Error           string    `json:"error"`
	Labels          []string  `json:"labels"`
	SplitInfo       SplitInfo `json:"splitInfo"`
	ExportTypes     []string  `json:"exportTypes"`     // the advertised formats
	DownloadFormats []string  `json:"downloadFormats"` // every format, the advertised first
	// Source is the selection the build added (nil for Create Dataset Version).
	Source *struct {
		CollectionID string  `json:"collection_id"`
		ItemType     string  `json:"item_type"`
		Query        string  `json:"query"`
		Filter       *Filter `json:"filter"`
	} `json:"source"`
	BaseVersionID    string          `json:"baseVersionId"` // the version whose frames it carries
	OperationList    []string        `json:"operationList"` // nil: every annotation source
	AugmentationList json.RawMessage `json:"augmentationList"`
	Stats            DatasetStats    `json:"stats"`
	// Leakage is Stats.Leakage, also at the top of the answer.
	Leakage *DatasetLeakage `json:"leakage"`
	BuiltAt *time.Time      `json:"builtAt"`
}

// DatasetGroup is an element of Dataset List.
type DatasetGroup struct {
	ID          string           `json:"id"`
	Name        string           `json:"name"`
	CreatedAt   time.Time        `json:"createdAt"`
	VersionList []DatasetVersion `json:"versionList"`
}

// DatasetList returns the dataset groups with all their versions, built or not.
func (c *Client) DatasetList(ctx context.Context) ([]DatasetGroup, error) {
	var out []DatasetGroup
	err := c.do(ctx, http.MethodGet, "/api/v1/datasets", "", nil, &out)
	return out, err
}

// Dataset returns one dataset group with all its versions, as DatasetList shows it.
func (c *Client) Dataset(ctx context.Context, datasetGroupID string) (DatasetGroup, error) {
	var out DatasetGroup
	err := c.do(ctx, http.MethodGet, "/api/v1/datasets/"+url.PathEscape(datasetGroupID), "", nil, &out)
	return out, err
}

// DatasetVersion returns one version, built or not, with its latest build's status.
func (c *Client) DatasetVersion(ctx context.Context, versionID string) (DatasetVersion, error) {
	var out DatasetVersion
	err := c.do(ctx, http.MethodGet, "/api/v1/dataset-versions/"+url.PathEscape(versionID), "", nil, &out)
	return out, err
}

// CreateDatasetVersion makes the group's next version from its latest built
// version's frames with a new split (REST Create Dataset Version).
func (c *Client) CreateDatasetVersion(ctx context.Context, datasetGroupID string, train, test, validation float64) (DatasetBuild, error) {
	var out DatasetBuild
	err := c.postJSON(ctx, "/api/v1/datasets/"+url.PathEscape(datasetGroupID)+"/versions",
		map[string]float64{"trainingSetPercentage": train, "testingSetPercentage": test, "validationSetPercentage": validation}, &out)
	out.DatasetID = datasetGroupID
	return out, err
}

// RetryDatasetVersion runs a version's failed build again.
func (c *Client) RetryDatasetVersion(ctx context.Context, versionID string) (DatasetBuild, error) {
	var out DatasetBuild
	err := c.do(ctx, http.MethodPost, "/api/v1/dataset-versions/"+url.PathEscape(versionID)+"/retry", "", nil, &out)
	return out, err
}

// DatasetFrame is a frame of REST Download Dataset; Annotations are in the
// requested format's convention (decode them into the matching type).
type DatasetFrame struct {
	UniqueName  string          `json:"uniqueName"`
	URL         string          `json:"url"`
	Split       string          `json:"split"`
	Augmented   bool            `json:"augmented"`
	DerivedFrom string          `json:"derivedFrom"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	Annotations json.RawMessage `json:"annotations"`
	Params      json.RawMessage `json:"params"`
}

// DatasetPage is a page of REST Download Dataset.
type DatasetPage struct {
	PageIndex   int            `json:"pageIndex"`
	PageSize    int            `json:"pageSize"`
	TotalFrames int            `json:"totalFrames"`
	Labels      []string       `json:"labels"`
	Frames      []DatasetFrame `json:"frames"`
}

// DownloadDatasetPage returns a page of a version's frames with URLs;
// exportFormat is yolo, rcnn or tensorflow; pageSize 0 takes the default (100).
func (c *Client) DownloadDatasetPage(ctx context.Context, versionID, exportFormat string, pageIndex, pageSize int) (DatasetPage, error) {
	q := url.Values{"exportFormat": {exportFormat}, "pageIndex": {strconv.Itoa(pageIndex)}}
	if pageSize != 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	var out DatasetPage
	err := c.do(ctx, http.MethodGet, "/api/v1/dataset-versions/"+url.PathEscape(versionID)+"/data?"+q.Encode(), "", nil, &out)
	return out, err
}

// DownloadDataset downloads a version as an archive in exportType ('RAW',
// 'YOLO Darknet', 'Semantic Segmentation', ...) and unpacks it under
// customDownloadPath ("" for the current directory), returning the folder it
// made: "<dataset>-<version>-<format>". Without media it holds annotations only.
func (c *Client) DownloadDataset(ctx context.Context, versionID, exportType, customDownloadPath string, isMediaInclude bool) (string, error) {
	return c.DownloadDatasetWith(ctx, DownloadDatasetOptions{VersionID: versionID, ExportType: exportType,
		Path: customDownloadPath, ExcludeMedia: !isMediaInclude})
}

// DownloadDatasetOptions are download_dataset's fields, the optional ones included.
type DownloadDatasetOptions struct {
	VersionID, ExportType string
	Path                  string // customDownloadPath; "" the current directory
	ExcludeMedia          bool   // labels without media (is_media_include false)
	OnlyWithBoxes         bool   // only the frames with at least one box
}

// DownloadDatasetWith is DownloadDataset with every option.
func (c *Client) DownloadDatasetWith(ctx context.Context, opt DownloadDatasetOptions) (string, error) {
	base, versionID := opt.Path, opt.VersionID
	if base == "" {
		base = "."
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	req := map[string]any{"version_id": versionID, "export_type": opt.ExportType, "is_media_include": !opt.ExcludeMedia}
	if opt.OnlyWithBoxes {
		req["only_with_boxes"] = true
	}
	body, _ := json.Marshal(req)
	resp, err := c.send(ctx, http.MethodPost, "/api/v1/client/download_dataset", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	tmp, err := os.CreateTemp(base, ".framelake-download-*.zip")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, resp.Body)
	if err != nil {
		return "", fmt.Errorf("framelake: download dataset %s: %w", versionID, err)
	}
	zr, err := zip.NewReader(tmp, n)
	if err != nil {
		return "", fmt.Errorf("framelake: download dataset %s: archive: %w", versionID, err)
	}
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	return unzip(zr, base, strings.TrimSuffix(filepath.Base(params["filename"]), ".zip"))
}

// unzip writes an archive's files under base and returns the folder holding
// them: the archive's single root folder, or base/fallback when it has none.
// Entries that would land outside base are refused.
func unzip(zr *zip.Reader, base, fallback string) (string, error) {
	root, shared := "", len(zr.File) > 0
	for i, f := range zr.File {
		first, _, inFolder := strings.Cut(strings.TrimPrefix(f.Name, "/"), "/")
		if (!inFolder && !f.FileInfo().IsDir()) || (i > 0 && first != root) {
			shared = false
			break
		}
		root = first
	}
	dest := base
	if !shared {
		if fallback == "" || fallback == "." {
			fallback = "dataset"
		}
		dest, root = filepath.Join(base, fallback), fallback
	}
	for _, f := range zr.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return "", fmt.Errorf("framelake: archive entry %q leaves the download folder", f.Name)
		}
		if err := extract(f, filepath.Join(dest, name)); err != nil {
			return "", err
		}
	}
	return filepath.Join(base, root), nil
}

func extract(f *zip.File, path string) error {
	if f.FileInfo().IsDir() {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return fmt.Errorf("framelake: extract %s: %w", f.Name, err)
	}
	return w.Close()
}
