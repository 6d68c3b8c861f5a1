package client

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// RegisteredModel is register_model's answer.
type RegisteredModel struct {
	Success     bool   `json:"success"`
	ModelName   string `json:"modelName"`
	Application string `json:"application"`
}

// RegisterModel packs the model folder at path as .tar.gz and registers it
// under name for application (auto_tagging, auto_annotation or embedding).
// The archive is streamed, not buffered. It needs an admin key.
func (c *Client) RegisterModel(ctx context.Context, path, name, application string) (RegisteredModel, error) {
	var out RegisteredModel
	fi, err := os.Stat(path)
	if err != nil {
		return out, err
	}
	if !fi.IsDir() {
		return out, fmt.Errorf("framelake: register_model: %s is not a folder", path)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := mw.WriteField("model_name", name)
		if err == nil {
			err = mw.WriteField("application", application)
		}
		var part io.Writer
		if err == nil {
			part, err = mw.CreateFormFile("package", filepath.Base(filepath.Clean(path))+".tar.gz")
		}
		if err == nil {
			err = PackFolder(part, path)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	err = c.do(ctx, http.MethodPost, "/api/v1/client/register_model", mw.FormDataContentType(), pr, &out)
	pr.CloseWithError(err)
	return out, err
}

// PackFolder writes the contents of dir (not dir itself) to w as .tar.gz:
// files, folders and relative links, with paths relative to dir.
func PackFolder(w io.Writer, dir string) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil // sockets and devices do not belong in a package
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		h.Uname, h.Gname = "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// AnalysisOptions are the optional parameters of the auto tagging and auto
// annotation functions; embeddings use ModelName (or ModelID), Query, Filter,
// InferencePlatform and VideoFPS only.
type AnalysisOptions struct {
	ModelName string // "" = the system default model
	// ModelID is the interface's other name for ModelName (its parameter
	// table's model_id): set one; the server refuses two different names.
	ModelID             string
	InputResolution     []int    // (width, height); default (300, 300)
	ConfidenceThreshold *float64 // 0..1; default 0.5
	Query               string
	Filter              *Filter
	InferencePlatform   string  // local, aws or use_env (default)
	VideoFPS            float64 // frames sampled per second of video; default the server's (1)
}

// Prompt is one text prompt of auto annotation.
type Prompt struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// RunStarted identifies a started analysis run: wait for JobID with WaitJob;
// RunID is the operation of the tags, boxes or vectors it writes.
type RunStarted struct {
	JobID string `json:"jobId"`
	RunID string `json:"runId"`
}

func (o AnalysisOptions) params(embedding bool) map[string]any {
	p := map[string]any{}
	set := func(k string, v any, present bool) {
		if present {
			p[k] = v
		}
	}
	set("model_name", o.ModelName, o.ModelName != "")
	set("model_id", o.ModelID, o.ModelID != "")
	set("query", o.Query, o.Query != "")
	set("filter", o.Filter, o.Filter != nil)
	set("inference_platform", o.InferencePlatform, o.InferencePlatform != "")
	set("video_fps", o.VideoFPS, o.VideoFPS != 0)
	if !embedding {
		set("input_resolution", o.InputResolution, o.InputResolution != nil)
		set("confidence_threshold", o.ConfidenceThreshold, o.ConfidenceThreshold != nil)
	}
	return p
}

func (c *Client) startRun(ctx context.Context, fn string, p map[string]any) (RunStarted, error) {
	var out RunStarted
	err := c.postJSON(ctx, "/api/v1/client/"+fn, p, &out)
	return out, err
}

// AutoTagCollection tags the images and videos of a collection (auto_tag_collection).
func (c *Client) AutoTagCollection(ctx context.Context, collectionID string, o AnalysisOptions) (RunStarted, error) {
	p := o.params(false)
	p["collection_id"] = collectionID
	return c.startRun(ctx, "auto_tag_collection", p)
}

// GenerateAutoTagsToLake tags every lake file of contentType, image or video.
func (c *Client) GenerateAutoTagsToLake(ctx context.Context, contentType string, o AnalysisOptions) (RunStarted, error) {
	p := o.params(false)
	p["content_type"] = contentType
	return c.startRun(ctx, "generate_auto_tags_to_lake", p)
}

// AutoAnnotateCollection draws boxes for the prompts on a collection's files.
func (c *Client) AutoAnnotateCollection(ctx context.Context, collectionID string, prompts []Prompt, o AnalysisOptions) (RunStarted, error) {
	p := o.params(false)
	p["collection_id"], p["prompts"] = collectionID, prompts
	return c.startRun(ctx, "auto_annotate_collection", p)
}

// GenerateAutoAnnotationsToLake draws boxes for the prompts on every lake file of contentType.
func (c *Client) GenerateAutoAnnotationsToLake(ctx context.Context, contentType string, prompts []Prompt, o AnalysisOptions) (RunStarted, error) {
	p := o.params(false)
	p["content_type"], p["prompts"] = contentType, prompts
	return c.startRun(ctx, "generate_auto_annotations_to_lake", p)
}

// GenerateEmbeddingsForCollection embeds a collection's files.
func (c *Client) GenerateEmbeddingsForCollection(ctx context.Context, collectionID string, o AnalysisOptions) (RunStarted, error) {
	p := o.params(true)
	p["collection_id"] = collectionID
	return c.startRun(ctx, "generate_embeddings_for_collection", p)
}

// GenerateEmbeddingsToLake embeds every lake file of contentType.
func (c *Client) GenerateEmbeddingsToLake(ctx context.Context, contentType string, o AnalysisOptions) (RunStarted, error) {
	p := o.params(true)
	p["content_type"] = contentType
	return c.startRun(ctx, "generate_embeddings_to_lake", p)
}

// Model is a registered model package.
type Model struct {
	ID            string    `json:"id"`
	Name          string    `json:"modelName"`
	Application   string    `json:"application"`
	Labels        []string  `json:"labels"`
	Endpoint      string    `json:"endpoint"`
	SystemDefault bool      `json:"systemDefault"`
	PackageBytes  int64     `json:"packageBytes"`
	CreatedBy     string    `json:"createdBy"` // the key that registered it
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// Models lists the registered models.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	var out struct {
		ModelList []Model `json:"modelList"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/models", "", nil, &out)
	return out.ModelList, err
}

// SetModelEndpoint sets the SageMaker-compatible endpoint a model uses with
// inference_platform aws ("" clears it). It needs an admin key.
func (c *Client) SetModelEndpoint(ctx context.Context, name, endpoint string) (Model, error) {
	var m Model
	b, _ := json.Marshal(map[string]string{"endpoint": endpoint})
	err := c.do(ctx, http.MethodPatch, "/api/v1/models/"+url.PathEscape(name), "application/json", bytes.NewReader(b), &m)
	return m, err
}

// DeleteModel unregisters a model. It needs an admin key.
func (c *Client) DeleteModel(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/models/"+url.PathEscape(name), "", nil, nil)
}

// Run is an analysis run with its model, parameters and counts.
type Run struct {
	ID                string          `json:"runId"`
	JobID             string          `json:"jobId"`
	ModelName         string          `json:"modelName"`
	VectorModel       string          `json:"vectorModel"`
	Application       string          `json:"application"`
	InferencePlatform string          `json:"inferencePlatform"`
	Params            json.RawMessage `json:"params"`
	Status            string          `json:"status"`
	Error             string          `json:"error"`
	Counts            struct {
		Items, Frames, Tags, Boxes, Embeddings, Skipped int64
	} `json:"counts"`
	Unsupported []string   `json:"unsupported"` // auto_annotation: prompts the model cannot look for
	CreatedAt   time.Time  `json:"createdAt"`
	FinishedAt  *time.Time `json:"finishedAt"`
}

// Run returns an analysis run.
func (c *Client) Run(ctx context.Context, runID string) (Run, error) {
	var r Run
	err := c.do(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(runID), "", nil, &r)
	return r, err
}

// Runs lists analysis runs, newest first, optionally of one model.
func (c *Client) Runs(ctx context.Context, modelName string, pageIndex, pageSize int) ([]Run, int, error) {
	q := url.Values{}
	if modelName != "" {
		q.Set("modelName", modelName)
	}
	if pageSize > 0 {
		q.Set("pageIndex", fmt.Sprint(pageIndex))
		q.Set("pageSize", fmt.Sprint(pageSize))
	}
	var out struct {
		RunCount int   `json:"runCount"`
		RunList  []Run `json:"runList"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/runs?"+q.Encode(), "", nil, &out)
	return out.RunList, out.RunCount, err
}
