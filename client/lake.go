package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// UploadFile is one file to upload.
type UploadFile struct {
	Name string                        // file name the lake keeps
	Open func() (io.ReadCloser, error) // its bytes
}

// FileFromPath uploads the file at path under its base name.
func FileFromPath(path string) UploadFile {
	return UploadFile{Name: filepath.Base(path), Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// UploadOptions say where uploaded files go.
type UploadOptions struct {
	Collection string          // collection name; created when missing
	Metadata   json.RawMessage // JSON object stored on every file
	// CollectionMetadata is a JSON object merged (RFC 7396) into the
	// collection's metadata with the files; it needs Collection.
	CollectionMetadata json.RawMessage
	// SkipExisting skips files whose name and bytes are already in the
	// collection, so re-running an import only adds what is new.
	SkipExisting bool
}

// StoredFile is a file the lake stored.
type StoredFile struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	UniqueName string    `json:"uniqueName"`
	URL        string    `json:"url"`
	Type       string    `json:"type"`
	FileSize   int64     `json:"fileSize"`
	Width      int       `json:"width"`
	Height     int       `json:"height"`
	FrameCount int       `json:"frameCount"`
	FrameRate  float64   `json:"frameRate"`
	CreatedAt  time.Time `json:"createdAt"`
}

// Rejection says why the lake refused a file.
type Rejection struct {
	Name   string `json:"name"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// UploadResult lists what the lake stored, skipped and rejected.
type UploadResult struct {
	Stored   []StoredFile `json:"stored"`
	Skipped  []StoredFile `json:"skipped"`
	Rejected []Rejection  `json:"rejected"`
}

// UploadFiles sends files to the lake in one multipart request, streamed
// rather than buffered. Rejected files are listed in the result; only a
// single-file upload that is rejected returns an *Error.
func (c *Client) UploadFiles(ctx context.Context, opt UploadOptions, files ...UploadFile) (*UploadResult, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeUpload(mw, opt, files)) }()
	var res UploadResult
	err := c.do(ctx, http.MethodPost, "/api/v1/lake/files", mw.FormDataContentType(), pr, &res)
	pr.CloseWithError(err) // unblocks the writer if the server answered early
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func writeUpload(mw *multipart.Writer, opt UploadOptions, files []UploadFile) error {
	if opt.Collection != "" {
		if err := mw.WriteField("collectionName", opt.Collection); err != nil {
			return err
		}
	}
	if len(opt.Metadata) > 0 {
		if err := mw.WriteField("metadata", string(opt.Metadata)); err != nil {
			return err
		}
	}
	if len(opt.CollectionMetadata) > 0 {
		if err := mw.WriteField("collectionMetadata", string(opt.CollectionMetadata)); err != nil {
			return err
		}
	}
	if opt.SkipExisting {
		if err := mw.WriteField("skipExisting", "true"); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := copyPart(mw, f); err != nil {
			return err
		}
	}
	return mw.Close()
}

func copyPart(mw *multipart.Writer, f UploadFile) error {
	w, err := mw.CreateFormFile("files", f.Name)
	if err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return err
}

// FileMetadata is a file and its custom metadata after a change.
type FileMetadata struct {
	ID         string         `json:"id"`
	UniqueName string         `json:"uniqueName"`
	Name       string         `json:"name"`
	Metadata   map[string]any `json:"metadata"`
	UpdatedAt  time.Time      `json:"updatedAt"`
}

// CollectionMetadata is a collection and its custom metadata after a change.
type CollectionMetadata struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	ContentType string         `json:"contentType"`
	Metadata    map[string]any `json:"metadata"`
	UpdatedAt   time.Time      `json:"updatedAt"`
}

// PatchFileMetadata merges patch into a file's custom metadata as a JSON
// merge patch (RFC 7396): keys replace stored ones, nested objects merge, a
// nil value removes its key. patch is a map or a json.RawMessage object.
//
//	c.PatchFileMetadata(ctx, name, map[string]any{"camera": "n2", "shift": nil})
func (c *Client) PatchFileMetadata(ctx context.Context, uniqueName string, patch any) (FileMetadata, error) {
	var out FileMetadata
	err := c.patchJSON(ctx, "/api/v1/lake/files/"+url.PathEscape(uniqueName)+"/metadata", patch, &out)
	return out, err
}

// PatchCollectionMetadata merges patch into a collection's custom metadata
// (RFC 7396, as PatchFileMetadata); collectionID is the collection's id.
func (c *Client) PatchCollectionMetadata(ctx context.Context, collectionID string, patch any) (CollectionMetadata, error) {
	var out CollectionMetadata
	err := c.patchJSON(ctx, "/api/v1/lake/collections/"+url.PathEscape(collectionID)+"/metadata", patch, &out)
	return out, err
}

func (c *Client) patchJSON(ctx context.Context, path string, patch, out any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPatch, path, "application/merge-patch+json", bytes.NewReader(b), out)
}
