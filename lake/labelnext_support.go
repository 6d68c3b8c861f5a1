package lake

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

// What "label next" (package labelnext) needs from the lake: the
// confidences of an operation's machine boxes summed up per file, the
// uniqueness scores of file_uniqueness, and tags on the files it chose.

// FileConfidence sums up the scored machine boxes of one operation on one
// file: their count, the lowest confidence and the confidence nearest 0.5
// (as its distance |p - 0.5|). Every uncertainty measure of a box is a
// monotonic function of one of the two, so the file's most uncertain box
// follows from them without reading every box into Go.
type FileConfidence struct {
	Seq     int64
	Boxes   int
	MinConf float64
	MinGap  float64 // min |confidence - 0.5|
}

// OperationConfidences returns, in file order, the files that where (boolean
// SQL over "file AS f" from SelectionSQL, with args) selects and that have
// machine boxes with a confidence from operation (a model run's id). An
// operation that no annotation carries is not_found under field.
func (l *Lake) OperationConfidences(ctx context.Context, operation, field, where string, args []any) ([]FileConfidence, error) {
	// The operation's boxes are one range of annotation_operation_scores,
	// grouped as they stream; the pool is applied here rather than as an IN
	// list tested on every box.
	pool, err := sqlitedb.Int64s(ctx, l.db.R, `SELECT f.seq FROM file AS f WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("confidences of %s: %w", operation, err)
	}
	in := make(map[int64]bool, len(pool))
	for _, seq := range pool {
		in[seq] = true
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT file_seq, count(*), min(confidence), min(abs(confidence - 0.5))
		FROM annotation WHERE operation = ? AND source = 'machine' AND confidence IS NOT NULL
		GROUP BY file_seq ORDER BY file_seq`, operation)
	if err != nil {
		return nil, fmt.Errorf("confidences of %s: %w", operation, err)
	}
	defer rows.Close()
	var out []FileConfidence
	for rows.Next() {
		var c FileConfidence
		if err := rows.Scan(&c.Seq, &c.Boxes, &c.MinConf, &c.MinGap); err != nil {
			return nil, err
		}
		if in[c.Seq] {
			out = append(out, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		known, err := l.HasOperation(ctx, operation)
		if err != nil {
			return nil, err
		}
		if !known {
			return nil, errs.New(errs.NotFound, field, "no annotation comes from operation %q", operation)
		}
	}
	return out, nil
}

// FileScore is a figure for one file, by its seq.
type FileScore struct {
	Seq   int64
	Score float64
}

// SetUniqueness stores the uniqueness scores of files (file_uniqueness, the
// query field uniqueness) computed over model's embeddings, replacing each
// file's earlier score, in transactions of a few thousand rows. Files
// deleted meanwhile are skipped.
func (l *Lake) SetUniqueness(ctx context.Context, model string, scores []FileScore) error {
	const step = 5000
	for off := 0; off < len(scores); off += step {
		part := scores[off:min(off+step, len(scores))]
		err := l.db.Tx(ctx, func(tx *sql.Tx) error {
			st, err := tx.PrepareContext(ctx, `INSERT INTO file_uniqueness (file_seq, model_name, score)
				SELECT seq, ?, ? FROM file WHERE seq = ?
				ON CONFLICT (file_seq) DO UPDATE SET model_name = excluded.model_name, score = excluded.score`)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, s := range part {
				if _, err := st.ExecContext(ctx, model, s.Score, s.Seq); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("store uniqueness: %w", err)
		}
	}
	return nil
}

// TagFiles gives each file of seqs the tag name, made by operation, in one
// transaction; files deleted meanwhile are skipped.
func (l *Lake) TagFiles(ctx context.Context, seqs []int64, name, operation string) error {
	if name == "" {
		return errs.Invalid("tag", "tag name is empty")
	}
	now := millis(time.Now())
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO file_tag (file_seq, name, operation, confidence, created_at)
			SELECT f.seq, ?, ?, NULL, ? FROM file f WHERE f.seq IN (SELECT value FROM json_each(?))
			ON CONFLICT DO NOTHING`, name, operation, now, jsonArray(seqs))
		if err != nil {
			return fmt.Errorf("tag files: %w", err)
		}
		return nil
	})
}

// CopyKeys are the keys by which a file is a copy of another: its blob's
// (byte-identical files share it) and, when find_duplicates recorded one, its
// near-duplicate group's. Two files with a key in common are duplicates.
type CopyKeys struct {
	Blob  string
	Group string // "" when the file is in no recorded group
}

// DuplicateKeys returns the CopyKeys of each of seqs that is a lake file.
func (l *Lake) DuplicateKeys(ctx context.Context, seqs []int64) (map[int64]CopyKeys, error) {
	out := make(map[int64]CopyKeys, len(seqs))
	const chunk = 50000
	for i := 0; i < len(seqs); i += chunk {
		rows, err := l.db.R.QueryContext(ctx, `SELECT f.seq, f.blob, coalesce(d.group_id, '') FROM file AS f
			LEFT JOIN file_duplicate AS d ON d.file_seq = f.seq
			WHERE f.seq IN (SELECT value FROM json_each(?))`, jsonArray(seqs[i:min(len(seqs), i+chunk)]))
		if err != nil {
			return nil, fmt.Errorf("duplicate keys: %w", err)
		}
		for rows.Next() {
			var seq int64
			var k CopyKeys
			if err := rows.Scan(&seq, &k.Blob, &k.Group); err != nil {
				rows.Close()
				return nil, err
			}
			out[seq] = k
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SharedBlobs returns, for every lake file whose bytes another lake file
// has too, its blob: the byte-identical groups, whether or not
// find_duplicates ran.
func (l *Lake) SharedBlobs(ctx context.Context) (map[int64]string, error) {
	return groupsOf(l.db.R.QueryContext(ctx, `SELECT seq, blob FROM file
		WHERE blob IN (SELECT blob FROM file GROUP BY blob HAVING count(*) > 1)`))
}
