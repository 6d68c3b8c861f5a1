package lake

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake/query"
)

// What datasets need from the lake: image selections (item types image and
// image_collection) as SQL over "file AS f", files by key, and signed URLs
// for blobs that no lake file owns (augmented dataset frames).

// ImageSelectionSQL returns the boolean SQL over "file AS f" for the image
// files sel selects: with ItemType "" or image, the images it selects (of
// CollectionID when set); with image_collection, the images that are members
// of the collections it selects (query and filter then apply to collections).
// Values are bound arguments, never user text.
func (l *Lake) ImageSelectionSQL(ctx context.Context, sel Selection) (string, []any, error) {
	switch sel.ItemType {
	case "", "image":
		sel.ItemType = "image"
		return l.SelectionSQL(ctx, sel)
	case "image_collection":
		if sel.CollectionID != "" {
			return "", nil, errs.Invalid("item_type", "item_type image_collection selects collections, not the files of one")
		}
		c, err := l.compile(ctx, sel, query.Count)
		if err != nil {
			return "", nil, err
		}
		return `f.type = 'image' AND f.seq IN (SELECT cf.file_seq FROM collection_file cf
			JOIN collection c ON c.seq = cf.collection_seq WHERE ` + c.where + `)`, c.args, nil
	}
	return "", nil, errs.Invalid("item_type", "item_type %q does not select images; use image or image_collection", sel.ItemType)
}

// CountFilesWhere counts the files that where (boolean SQL over "file AS f",
// as ImageSelectionSQL returns, with args) selects.
func (l *Lake) CountFilesWhere(ctx context.Context, where string, args []any) (int, error) {
	var n int
	err := l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM file f WHERE `+where, args...).Scan(&n)
	return n, err
}

// FileSeqsAfter returns, in key order, up to limit keys above after of the
// files that where (as for CountFilesWhere) selects: a keyset page.
func (l *Lake) FileSeqsAfter(ctx context.Context, where string, args []any, after int64, limit int) ([]int64, error) {
	return sqlitedb.Int64s(ctx, l.db.R, `SELECT f.seq FROM file f WHERE f.seq > ? AND (`+where+`)
		ORDER BY f.seq LIMIT ?`, append(append([]any{after}, args...), limit)...)
}

// FilesBySeq returns the files with these keys, in the order given; keys of
// files that no longer exist are left out.
func (l *Lake) FilesBySeq(ctx context.Context, seqs []int64) ([]File, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT `+fileColumns+` FROM file f
		WHERE f.seq IN (SELECT value FROM json_each(?))`, jsonArray(seqs))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bySeq := make(map[int64]File, len(seqs))
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		bySeq[f.seq] = f
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]File, 0, len(bySeq))
	for _, s := range seqs {
		if f, ok := bySeq[s]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// HasOperation reports whether any annotation came from operation (a project
// or model run id). Datasets ask it after the projects and runs themselves,
// so ids whose project or run is gone still name the boxes they left.
func (l *Lake) HasOperation(ctx context.Context, operation string) (bool, error) {
	var n int
	err := l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM annotation WHERE operation = ? LIMIT 1)`,
		operation).Scan(&n)
	return n > 0, err
}

// URLOf is URL for a file known only by its uniqueName.
func (l *Lake) URLOf(uniqueName string) string { return l.URL(File{UniqueName: uniqueName}) }

// BlobPath is the URL path under which store blobs that belong to no lake
// file (augmented dataset frames) are served: BlobPath + "<sha256>.<ext>".
const BlobPath = "/media-blob/"

var blobName = regexp.MustCompile(`^([0-9a-f]{64})\.([a-z0-9]{1,8})$`)

// BlobURL returns a signed, expiring URL for a stored blob. The signature
// covers BlobPath, so a file URL's signature never opens a blob or back.
func (l *Lake) BlobURL(hash, ext string) string {
	exp := l.now().Add(l.opt.URLTTL).Unix()
	name := hash + "." + ext
	return l.opt.BaseURL + BlobPath + url.PathEscape(name) + "?exp=" + strconv.FormatInt(exp, 10) +
		"&sig=" + l.signBlob(name, exp)
}

func (l *Lake) signBlob(name string, exp int64) string {
	m := hmac.New(sha256.New, l.opt.SigningKey)
	m.Write([]byte(BlobPath + name + "\n" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// VerifyBlobURL checks a blob URL's name ("<sha256>.<ext>"), exp and sig and
// returns the blob's hash and extension.
func (l *Lake) VerifyBlobURL(name, exp, sig string) (hash, ext string, err error) {
	m := blobName.FindStringSubmatch(strings.ToLower(name))
	if m == nil || m[0] != name {
		return "", "", errs.NotFoundf("no blob %q", name)
	}
	if err := l.verifySigned(exp, sig, func(e int64) string { return l.signBlob(name, e) }); err != nil {
		return "", "", err
	}
	return m[1], m[2], nil
}
