package lake

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
)

// Default and optional fields of get_file_details and get_collection_details
// (docs/spec/interface.md 2.5). Any other requested name is a custom metadata key,
// except the dotted names of the query language (details_fields.go).
var (
	FileDefaultFields        = []string{"id", "name", "uniqueName", "url"}
	FileOptionalFields       = []string{"fileSize", "frameCount", "frameRate", "resolution", "storagePath", "Tags", "createdAt", "bucketName", "updatedAt", "quality", "duplicates", "evaluations"}
	CollectionDefaultFields  = []string{"id", "name", "contentType"}
	CollectionOptionalFields = []string{"fileSize", "frameCount", "Tags", "createdAt", "updatedAt"}
)

// BucketName is what bucketName reports for the local media store.
const BucketName = "local"

// selectFields applies a fields filter: defaults unless turned off, plus
// every field turned on, in a stable order (defaults, optional, metadata keys).
func selectFields(defaults, optional []string, filter map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range defaults {
		seen[f] = true
		if on, set := filter[f]; !set || on {
			out = append(out, f)
		}
	}
	for _, f := range optional {
		seen[f] = true
		if filter[f] {
			out = append(out, f)
		}
	}
	var extra []string
	for f, on := range filter {
		if on && !seen[f] {
			extra = append(extra, f)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// FileDetails returns the fields of a file that fields selects.
func (l *Lake) FileDetails(ctx context.Context, uniqueName string, fields map[string]bool) (map[string]any, error) {
	if err := checkDetailNames(fields, false); err != nil {
		return nil, err
	}
	f, err := l.File(ctx, uniqueName)
	if err != nil {
		return nil, err
	}
	var meta map[string]any // decoded on the first custom field asked for
	metadata := func() map[string]any {
		if meta == nil {
			meta = map[string]any{}
			_ = json.Unmarshal(f.Metadata, &meta)
		}
		return meta
	}
	out := map[string]any{}
	for _, name := range selectFields(FileDefaultFields, FileOptionalFields, fields) {
		switch name {
		case "id":
			out[name] = f.ID
		case "name":
			out[name] = f.Name
		case "uniqueName":
			out[name] = f.UniqueName
		case "url":
			out[name] = l.URL(f)
		case "fileSize":
			out[name] = f.Size
		case "frameCount": // null for a file that is no image or video: it has no frames
			if f.Type != Other {
				out[name] = max(f.FrameCount, 1)
			} else {
				out[name] = nil
			}
		case "frameRate":
			out[name] = f.FrameRate
		case "resolution":
			out[name] = map[string]int{"width": f.Width, "height": f.Height}
		case "storagePath":
			out[name] = filepath.ToSlash(filepath.Join("media", f.Blob[:2], f.Blob[2:4], f.Blob+"."+f.Ext))
		case "bucketName":
			out[name] = BucketName
		case "createdAt":
			out[name] = f.CreatedAt
		case "updatedAt":
			out[name] = f.UpdatedAt
		case "quality": // null until the file is scored
			if out[name], err = l.FileQuality(ctx, f.seq); err != nil {
				return nil, err
			}
		case "duplicates": // null while the file is in no near-duplicate group
			if out[name], err = l.fileDuplicate(ctx, f.seq); err != nil {
				return nil, err
			}
		case "Tags":
			if out[name], err = l.tagNames(ctx, `SELECT DISTINCT name FROM file_tag WHERE file_seq = ? ORDER BY name`, f.seq); err != nil {
				return nil, err
			}
		case "evaluations": // {key: {tp, fp, fn}} of the evaluations that covered the file
			if out[name], err = l.fileEvaluations(ctx, f.seq); err != nil {
				return nil, err
			}
		default:
			if isQueryDetail(name) {
				if out[name], err = l.queryDetail(ctx, f, name, metadata); err != nil {
					return nil, err
				}
				continue
			}
			out[name] = metadata()[name] // nil (JSON null) when the file has no such key
		}
	}
	return out, nil
}

// CollectionDetails returns the fields of a collection that fields selects;
// fileSize and frameCount are totals over its files (an image is one frame,
// a file that is no image or video none).
func (l *Lake) CollectionDetails(ctx context.Context, id string, fields map[string]bool) (map[string]any, error) {
	if err := checkDetailNames(fields, true); err != nil {
		return nil, err
	}
	c, err := l.Collection(ctx, id)
	if err != nil {
		return nil, err
	}
	var meta map[string]any
	_ = json.Unmarshal(c.Metadata, &meta)
	out := map[string]any{}
	for _, name := range selectFields(CollectionDefaultFields, CollectionOptionalFields, fields) {
		switch name {
		case "id":
			out[name] = c.ID
		case "name":
			out[name] = c.Name
		case "contentType":
			out[name] = c.Type
		case "fileSize", "frameCount":
			var size, frames int64
			if err := l.db.R.QueryRowContext(ctx, `SELECT coalesce(sum(f.size), 0), coalesce(sum(iif(f.type = 'other', 0, max(coalesce(f.frame_count, 1), 1))), 0)
				FROM collection_file cf JOIN file f ON f.seq = cf.file_seq WHERE cf.collection_seq = ?`, c.seq).Scan(&size, &frames); err != nil {
				return nil, err
			}
			out[name] = map[string]int64{"fileSize": size, "frameCount": frames}[name]
		case "createdAt":
			out[name] = c.CreatedAt
		case "updatedAt":
			out[name] = c.UpdatedAt
		case "Tags":
			if out[name], err = l.tagNames(ctx, `SELECT DISTINCT name FROM collection_tag WHERE collection_seq = ? ORDER BY name`, c.seq); err != nil {
				return nil, err
			}
		default:
			key, _ := strings.CutPrefix(name, "metadata.") // checked: the only dotted name of collections
			out[name] = meta[key]
		}
	}
	return out, nil
}

func (l *Lake) tagNames(ctx context.Context, q string, seq int64) ([]string, error) {
	rows, err := l.db.Point.QueryContext(ctx, q, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}
