package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// ImportArchiveOptions are the fields of an archive import.
type ImportArchiveOptions struct {
	Format     string // auto (default), yolo, coco, voc, cvat, labelstudio or raw
	Collection string // default: the archive's name without its extension
	Project    string // annotation project name or id: each split becomes an upload session of it
	Metadata   string // a JSON object stored on every file
	Name       string // the archive's file name
}

// ImportArchive uploads a zip, tar or tar.gz archive of labelled data as the
// body of POST /api/v1/lake/imports and returns the id of the job that
// imports it; wait for it with WaitJob: its result is the import's summary
// (the CLI's import --json).
func (c *Client) ImportArchive(ctx context.Context, archive io.Reader, opt ImportArchiveOptions) (string, error) {
	q := url.Values{}
	for k, v := range map[string]string{"format": opt.Format, "collection": opt.Collection, "project": opt.Project,
		"metadata": opt.Metadata, "name": opt.Name} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out struct {
		JobID string `json:"jobId"`
	}
	err := c.do(ctx, http.MethodPost, "/api/v1/lake/imports?"+q.Encode(), "application/octet-stream", archive, &out)
	return out.JobID, err
}
