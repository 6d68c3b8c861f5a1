package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

const collectionColumns = `c.seq, c.id, c.name, c.type, c.metadata, c.created_at, c.updated_at`

func scanCollection(s scanner) (Collection, error) {
	var c Collection
	var meta string
	var created, updated int64
	if err := s.Scan(&c.seq, &c.ID, &c.Name, &c.Type, &meta, &created, &updated); err != nil {
		return Collection{}, err
	}
	c.Metadata = json.RawMessage(meta)
	c.CreatedAt, c.UpdatedAt = fromMillis(created), fromMillis(updated)
	return c, nil
}

func (l *Lake) collectionWhere(ctx context.Context, where string, arg any) (Collection, error) {
	c, err := scanCollection(l.db.Point.QueryRowContext(ctx,
		`SELECT `+collectionColumns+` FROM collection c WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return Collection{}, errs.NotFoundf("collection %q not found", arg)
	}
	return c, err
}

// Collection returns the collection with id.
func (l *Lake) Collection(ctx context.Context, id string) (Collection, error) {
	return l.collectionWhere(ctx, "c.id = ?", id)
}

// CollectionByName returns the collection named name.
func (l *Lake) CollectionByName(ctx context.Context, name string) (Collection, error) {
	return l.collectionWhere(ctx, "c.name = ?", name)
}

// EnsureCollection returns the collection named name, creating it with type t
// if it does not exist.
func (l *Lake) EnsureCollection(ctx context.Context, name string, t CollectionType) (Collection, error) {
	if err := ValidateCollectionName(name); err != nil {
		return Collection{}, err
	}
	err := l.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := ensureCollection(ctx, tx, name, t, time.Now())
		return err
	})
	if err != nil {
		return Collection{}, err
	}
	return l.CollectionByName(ctx, name)
}

func ensureCollection(ctx context.Context, tx *sql.Tx, name string, t CollectionType, now time.Time) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `INSERT INTO collection (id, name, type, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET updated_at = excluded.updated_at
		RETURNING seq`, id.New("col"), name, t, millis(now), millis(now)).Scan(&seq)
	return seq, err
}
