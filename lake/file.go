package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/framelake/framelake/errs"
)

// fileColumns are selected by every file read, in scanFile's order.
const fileColumns = `f.seq, f.id, f.unique_name, f.name, f.type, f.blob, f.ext, f.mime, f.size, f.format,
	coalesce(f.width, 0), coalesce(f.height, 0), coalesce(f.frame_count, 0), coalesce(f.frame_rate, 0),
	coalesce(f.duration, 0), f.video_index, f.metadata, f.created_at, f.updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanFile(s scanner) (File, error) {
	var f File
	var vi sql.NullInt64
	var meta string
	var created, updated int64
	err := s.Scan(&f.seq, &f.ID, &f.UniqueName, &f.Name, &f.Type, &f.Blob, &f.Ext, &f.MIME, &f.Size, &f.Format,
		&f.Width, &f.Height, &f.FrameCount, &f.FrameRate, &f.Duration, &vi, &meta, &created, &updated)
	if err != nil {
		return File{}, err
	}
	if vi.Valid {
		v := int(vi.Int64)
		f.VideoIndex = &v
	}
	f.Metadata = json.RawMessage(meta)
	f.CreatedAt, f.UpdatedAt = fromMillis(created), fromMillis(updated)
	return f, nil
}

// File returns the file with uniqueName.
func (l *Lake) File(ctx context.Context, uniqueName string) (File, error) {
	f, err := scanFile(l.fileByName.QueryRowContext(ctx, uniqueName))
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, errs.NotFoundf("file %q not found", uniqueName)
	}
	return f, err
}

// membersByName returns the collection's files named one of names, by
// name. It is driven from the name index (every type, each name): a join
// from collection_file would walk every member, making an import into one
// collection quadratic.
func (l *Lake) membersByName(ctx context.Context, collSeq int64, names []string) (map[string][]File, error) {
	rows, err := l.db.R.QueryContext(ctx, `SELECT `+fileColumns+` FROM file f INDEXED BY file_type_name
		WHERE f.type IN ('image', 'video', 'other') AND f.name IN (SELECT value FROM json_each(?))
		  AND EXISTS (SELECT 1 FROM collection_file cf WHERE cf.collection_seq = ? AND cf.file_seq = f.seq)`,
		jsonArray(names), collSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out[f.Name] = append(out[f.Name], f)
	}
	return out, rows.Err()
}
