package lake

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake/query"
)

// Quality is the figures of one image that package curate computes (see
// there for methods and scales), kept in table file_quality.
type Quality struct {
	Sharpness  float64 `json:"sharpness"`
	Brightness float64 `json:"brightness"`
	Contrast   float64 `json:"contrast"`
	Entropy    float64 `json:"entropy"`
	Aspect     float64 `json:"aspect"`
	PHash      uint64  `json:"-"`
	// CentreHashes are the perceptual hashes of the image's centres (table
	// file_centre_hash).
	CentreHashes [2]uint64 `json:"-"`
}

// Scorer computes the quality of images at ingest. Bytes scores an encoded
// image whose stored size is width x height. Grey, when set, scores a JPEG
// from its luminance at GreySize, which vips.CheckGrey decodes while the
// lake checks the JPEG: one decode where Bytes after the check made two,
// the larger part of a 640x480 image's ingest. Grey must give what Bytes
// gives for the same image.
type Scorer struct {
	Bytes    func(data []byte, width, height int) (Quality, error)
	GreySize int
	Grey     func(g vips.Grey, width, height int) Quality
}

// ScoreAtIngest makes every image Add stores get its quality row in the
// transaction that inserts it; call it before serving requests. An image
// the scorer cannot read is stored without scores (a later compute_quality
// job retries it).
func (l *Lake) ScoreAtIngest(s Scorer) { l.scorer = &s }

// scoreStaged scores a probed image while its bytes are still at hand, on
// the staging worker, so the cost is spread like the probe's.
func (l *Lake) scoreStaged(pend *Pending, p probed) *Quality {
	if l.scorer == nil || p.Type != Image {
		return nil
	}
	if p.grey != nil {
		q := l.scorer.Grey(*p.grey, p.Width, p.Height)
		return &q
	}
	b := pend.Data
	if b == nil {
		var err error
		if b, err = os.ReadFile(pend.TempPath()); err != nil {
			return nil
		}
	}
	q, err := l.scorer.Bytes(b, p.Width, p.Height)
	if err != nil {
		l.log.Warn("quality at ingest", "error", err)
		return nil
	}
	return &q
}

// qualityInsert sets a file's quality row; centreInsert its centre hashes.
const (
	qualityInsert = `INSERT INTO file_quality (file_seq, sharpness, brightness, contrast, entropy, aspect, phash)
	VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (file_seq) DO UPDATE SET sharpness = excluded.sharpness,
	brightness = excluded.brightness, contrast = excluded.contrast, entropy = excluded.entropy,
	aspect = excluded.aspect, phash = excluded.phash`
	centreInsert = `INSERT INTO file_centre_hash (file_seq, centre90, centre80) VALUES (?, ?, ?)
	ON CONFLICT (file_seq) DO UPDATE SET centre90 = excluded.centre90, centre80 = excluded.centre80`
)

// insertQuality runs qualityInsert prepared as ins and centreInsert
// prepared as centre: a file is scored when it has both rows.
func insertQuality(ctx context.Context, ins, centre *sql.Stmt, seq int64, q Quality) error {
	_, err := ins.ExecContext(ctx, seq, q.Sharpness, q.Brightness, q.Contrast, q.Entropy, q.Aspect, int64(q.PHash))
	if err != nil {
		return err
	}
	_, err = centre.ExecContext(ctx, seq, int64(q.CentreHashes[0]), int64(q.CentreHashes[1]))
	return err
}

// PutQuality stores the scores of files by their key (File.Seq); files
// deleted meanwhile are left out.
func (l *Lake) PutQuality(ctx context.Context, scores map[int64]Quality) error {
	if len(scores) == 0 {
		return nil
	}
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, qualityInsert)
		if err != nil {
			return err
		}
		defer ins.Close()
		centre, err := tx.PrepareContext(ctx, centreInsert)
		if err != nil {
			return err
		}
		defer centre.Close()
		for seq, q := range scores {
			var one int
			switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM file WHERE seq = ?`, seq).Scan(&one); err {
			case nil:
			case sql.ErrNoRows:
				continue
			default:
				return err
			}
			if err := insertQuality(ctx, ins, centre, seq, q); err != nil {
				return fmt.Errorf("store quality: %w", err)
			}
		}
		return nil
	})
}

// imageSelection is the SQL over "file AS f" of the images sel selects.
func (l *Lake) imageSelection(ctx context.Context, sel Selection) (string, []any, error) {
	c, err := l.compile(ctx, sel, query.Count)
	if err != nil {
		return "", nil, err
	}
	if c.target != query.Files {
		return "", nil, errs.Invalid("item_type", "item_type %s selects collections, not files", sel.ItemType)
	}
	return `f.type = 'image' AND ` + c.where, c.args, nil
}

// unscored is the condition on "file AS f" of an image not yet scored: no
// quality row, or no centre hashes (scored before they existed, migration
// 007), so that compute_quality brings old lakes up to date.
const unscored = ` AND (NOT EXISTS (SELECT 1 FROM file_quality q WHERE q.file_seq = f.seq)
	OR NOT EXISTS (SELECT 1 FROM file_centre_hash ch WHERE ch.file_seq = f.seq))`

// CountUnscored counts the images sel selects that are not yet scored.
func (l *Lake) CountUnscored(ctx context.Context, sel Selection) (int, error) {
	where, args, err := l.imageSelection(ctx, sel)
	if err != nil {
		return 0, err
	}
	var n int
	err = l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM file f WHERE `+where+unscored, args...).Scan(&n)
	return n, err
}

// Unscored returns up to limit images sel selects that are not yet scored
// and whose key is above after, by key: a job that pages through them
// resumes where it stopped, and files scored meanwhile drop out.
func (l *Lake) Unscored(ctx context.Context, sel Selection, after int64, limit int) ([]File, error) {
	where, args, err := l.imageSelection(ctx, sel)
	if err != nil {
		return nil, err
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT `+fileColumns+` FROM file f WHERE f.seq > ? AND `+where+
		unscored+` ORDER BY f.seq LIMIT ?`,
		append(append([]any{after}, args...), limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Scored is what near-duplicate search needs of a scored image.
type Scored struct {
	Seq        int64
	UniqueName string
	Pixels     int64 // width times height
	Size       int64
	Sharpness  float64
	PHash      uint64
	// CentreHashes are Quality.CentreHashes, when HasCentre.
	CentreHashes [2]uint64
	HasCentre    bool
}

// EachScored calls fn with pages of the scored images sel selects, by key.
func (l *Lake) EachScored(ctx context.Context, sel Selection, fn func([]Scored) error) error {
	where, args, err := l.imageSelection(ctx, sel)
	if err != nil {
		return err
	}
	return l.eachScored(ctx, `JOIN file f ON f.seq = q.file_seq WHERE `+where, args, fn)
}

// ScoredBySeq calls fn with pages of the scored images among seqs.
func (l *Lake) ScoredBySeq(ctx context.Context, seqs []int64, fn func([]Scored) error) error {
	return l.eachScored(ctx, `JOIN file f ON f.seq = q.file_seq WHERE f.seq IN (SELECT value FROM json_each(?))`,
		[]any{jsonArray(seqs)}, fn)
}

const scoredPage = 20000

func (l *Lake) eachScored(ctx context.Context, join string, args []any, fn func([]Scored) error) error {
	after := int64(0)
	page := make([]Scored, 0, scoredPage)
	for {
		rows, err := l.db.R.QueryContext(ctx, `SELECT q.file_seq, f.unique_name, coalesce(f.width, 0) * coalesce(f.height, 0),
			f.size, q.sharpness, q.phash, ch.centre90, ch.centre80
			FROM file_quality q LEFT JOIN file_centre_hash ch ON ch.file_seq = q.file_seq `+join+` AND q.file_seq > ? ORDER BY q.file_seq LIMIT ?`,
			append(append([]any(nil), args...), after, scoredPage)...)
		if err != nil {
			return err
		}
		page = page[:0]
		for rows.Next() {
			var s Scored
			var h int64
			var c90, c80 sql.NullInt64
			if err := rows.Scan(&s.Seq, &s.UniqueName, &s.Pixels, &s.Size, &s.Sharpness, &h, &c90, &c80); err != nil {
				rows.Close()
				return err
			}
			s.PHash = uint64(h)
			s.CentreHashes, s.HasCentre = [2]uint64{uint64(c90.Int64), uint64(c80.Int64)}, c90.Valid
			page = append(page, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < scoredPage {
			return nil
		}
		after = page[len(page)-1].Seq
	}
}

// FileQuality is a file's quality, or nil when it has none.
func (l *Lake) FileQuality(ctx context.Context, seq int64) (*Quality, error) {
	var q Quality
	var h int64
	err := l.db.Point.QueryRowContext(ctx, `SELECT sharpness, brightness, contrast, entropy, aspect, phash
		FROM file_quality WHERE file_seq = ?`, seq).Scan(&q.Sharpness, &q.Brightness, &q.Contrast, &q.Entropy, &q.Aspect, &h)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	q.PHash = uint64(h)
	return &q, err
}

// qualitySortCols are the extra sort_by_field values of file listings; a
// file without scores sorts as NULL (first ascending, last descending).
var qualitySortCols = map[string]string{
	"quality.sharpness":  "(SELECT q.sharpness FROM file_quality q WHERE q.file_seq = f.seq)",
	"quality.brightness": "(SELECT q.brightness FROM file_quality q WHERE q.file_seq = f.seq)",
	"quality.contrast":   "(SELECT q.contrast FROM file_quality q WHERE q.file_seq = f.seq)",
	"quality.entropy":    "(SELECT q.entropy FROM file_quality q WHERE q.file_seq = f.seq)",
	"quality.aspect":     "(SELECT q.aspect FROM file_quality q WHERE q.file_seq = f.seq)",
}
