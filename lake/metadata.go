package lake

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/framelake/framelake/errs"
)

// Custom metadata is a JSON object on a file or a collection. It is changed
// by JSON merge patch (RFC 7396): a key of the patch replaces the stored one,
// nested objects merge recursively and a null value removes its key, so a
// client changes one key without reading and resending the rest. SQLite's
// json_patch implements exactly that merge, inside the UPDATE, so concurrent
// patches of different keys never lose each other's writes.

// PatchFileMetadata merges patch (a JSON object, RFC 7396) into the custom
// metadata of the file with uniqueName and returns the updated file.
func (l *Lake) PatchFileMetadata(ctx context.Context, uniqueName string, patch json.RawMessage) (File, error) {
	p, err := checkObject("metadata", patch)
	if err != nil {
		return File{}, err
	}
	var f File
	err = l.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE file SET metadata = json_patch(metadata, ?), updated_at = ?
			WHERE unique_name = ?`, p, millis(l.now()), uniqueName)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return errs.NotFoundf("file %q not found", uniqueName)
		}
		f, err = scanFile(tx.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM file f WHERE f.unique_name = ?`, uniqueName))
		return err
	})
	return f, err
}

// PatchCollectionMetadata merges patch (a JSON object, RFC 7396) into the
// custom metadata of the collection with id and returns the updated collection.
func (l *Lake) PatchCollectionMetadata(ctx context.Context, id string, patch json.RawMessage) (Collection, error) {
	p, err := checkObject("metadata", patch)
	if err != nil {
		return Collection{}, err
	}
	var c Collection
	err = l.db.Tx(ctx, func(tx *sql.Tx) error {
		c, err = patchCollection(ctx, tx, "c.id = ?", id, p, l.now())
		return err
	})
	return c, err
}

// CheckCollectionMetadata checks a patch for the metadata of a collection
// that an upload creates or adds to, before anything is stored; field names
// the request field it came from.
func CheckCollectionMetadata(field string, patch json.RawMessage) error {
	_, err := checkObject(field, patch)
	return err
}

// PatchCollectionMetadataTx merges patch (checked by CheckCollectionMetadata)
// into the metadata of the collection named name inside tx: an upload's
// AddOptions.InTx calls it so the files and the collection's metadata land
// in one transaction.
func PatchCollectionMetadataTx(ctx context.Context, tx *sql.Tx, name string, patch json.RawMessage) error {
	p, err := checkObject("metadata", patch)
	if err != nil {
		return err
	}
	_, err = patchCollection(ctx, tx, "c.name = ?", name, p, time.Now())
	return err
}

// patchCollection merges p into the metadata of the collection where holds
// for arg and reads the result back in the same transaction.
func patchCollection(ctx context.Context, tx *sql.Tx, where string, arg any, p string, now time.Time) (Collection, error) {
	r, err := tx.ExecContext(ctx, `UPDATE collection AS c SET metadata = json_patch(metadata, ?), updated_at = ?
		WHERE `+where, p, millis(now), arg)
	if err != nil {
		return Collection{}, err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return Collection{}, errs.NotFoundf("collection %q not found", arg)
	}
	c, err := scanCollection(tx.QueryRowContext(ctx, `SELECT `+collectionColumns+` FROM collection c WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return Collection{}, errs.NotFoundf("collection %q not found", arg)
	}
	return c, err
}

// MaxMetadataDepth bounds the nesting of a metadata patch: SQLite's JSON
// functions stop at 1000 levels, and no labelling scheme needs more than a few.
const MaxMetadataDepth = 32

// checkObject is normalizeObject for a patch, with errors that say what is
// wrong: an empty patch, invalid JSON, a value that is not an object, or
// (in normalizeObject) nesting too deep.
func checkObject(field string, raw json.RawMessage) (string, error) {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0:
		return "", errs.Invalid(field, `%s is empty: send a JSON object such as {"camera": "n1"}`, field)
	case !json.Valid(t):
		return "", errs.Invalid(field, "%s is not valid JSON", field)
	case t[0] != '{':
		return "", errs.Invalid(field, "%s must be a JSON object, got %s", field, jsonKindOf(t[0]))
	}
	return normalizeObject(field, t)
}

func jsonKindOf(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// jsonDepth is the deepest nesting of objects and arrays in valid JSON b.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped, inString = c == '\\', c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
