package lake

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/query"
)

// MaxSelectionTags caps the tags one TagSelection call adds and removes.
const MaxSelectionTags = 100

// TagSelection gives every file sel selects the user tags add and takes from
// them every tag (of any operation) named in remove, in one transaction, and
// returns how many files were selected. Removing takes model tags too: after
// untagging, Tags = name no longer selects the file.
func (l *Lake) TagSelection(ctx context.Context, sel Selection, add, remove []string) (int, error) {
	if len(add)+len(remove) == 0 {
		return 0, errs.Invalid("add", "give tags to add or to remove")
	}
	if len(add)+len(remove) > MaxSelectionTags {
		return 0, errs.Invalid("add", "at most %d tags at once, got %d", MaxSelectionTags, len(add)+len(remove))
	}
	for _, t := range append(append([]string{}, add...), remove...) {
		if strings.TrimSpace(t) == "" {
			return 0, errs.Invalid("add", "tag name is empty")
		}
	}
	c, err := l.writeSelection(ctx, sel)
	if err != nil {
		return 0, err
	}
	var n int
	err = l.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM file f WHERE `+c.where, c.args...).Scan(&n); err != nil {
			return err
		}
		now := millis(time.Now())
		for _, t := range add {
			_, err := tx.ExecContext(ctx, `INSERT INTO file_tag (file_seq, name, operation, confidence, created_at)
				SELECT f.seq, ?, 'user', NULL, ? FROM file f WHERE `+c.where+` ON CONFLICT DO NOTHING`,
				append([]any{t, now}, c.args...)...)
			if err != nil {
				return err
			}
		}
		for _, t := range remove {
			_, err := tx.ExecContext(ctx, `DELETE FROM file_tag WHERE name = ? AND file_seq IN
				(SELECT f.seq FROM file f WHERE `+c.where+`)`, append([]any{t}, c.args...)...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// CollectSelection adds every file sel selects to the collection named name,
// creating it (typed after sel's files) when there is none, and returns the
// collection and how many files were added (files already in it are not).
func (l *Lake) CollectSelection(ctx context.Context, sel Selection, name string) (Collection, int, error) {
	if err := ValidateCollectionName(name); err != nil {
		return Collection{}, 0, err
	}
	c, err := l.writeSelection(ctx, sel)
	if err != nil {
		return Collection{}, 0, err
	}
	t := ImageCollection
	switch sel.ItemType {
	case "video":
		t = VideoCollection
	case "other":
		t = OtherCollection
	}
	var added int64
	err = l.db.Tx(ctx, func(tx *sql.Tx) error {
		now := time.Now()
		seq, err := ensureCollection(ctx, tx, name, t, now)
		if err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO collection_file (collection_seq, file_seq, added_at)
			SELECT ?, f.seq, ? FROM file f WHERE `+c.where+` ON CONFLICT DO NOTHING`,
			append([]any{seq, millis(now)}, c.args...)...)
		if err != nil {
			return err
		}
		added, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return Collection{}, 0, err
	}
	coll, err := l.CollectionByName(ctx, name)
	return coll, int(added), err
}

// writeSelection compiles a selection of files for a write; collections are
// refused (tag or collect their files by a query instead).
func (l *Lake) writeSelection(ctx context.Context, sel Selection) (compiled, error) {
	if IsCollectionType(sel.ItemType) {
		return compiled{}, errs.Invalid("itemType", "itemType %s selects collections; this changes files", sel.ItemType)
	}
	return l.compile(ctx, sel, query.Count)
}
