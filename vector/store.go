package vector

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unicode"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// chunkSize is vec0's rows per chunk. sqlite-vec reads and writes a vector
// through an incremental blob handle on its chunk, and SQLite walks the
// overflow-page chain to reach an offset, so the default 1024 (a 2 MB chunk
// at 512-d) makes each insert pay for half a chunk; 64 measured 1.4-2x faster
// inserts and a 3x faster full scan with no loss in KNN speed.
const chunkSize = 64

// keepChanges is how many embedding_change rows are kept; an in-memory copy
// further behind than that reloads from sqlite-vec instead of catching up.
const keepChanges = 1 << 20

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Open returns a Store over db, whose vector migrations must have been applied
// (see Migrations). It re-creates delete triggers a lake migration may have
// dropped and removes the vectors orphaned meanwhile.
func Open(ctx context.Context, db *sqlitedb.DB, opt Options) (*Store, error) {
	if opt.CacheBytes == 0 {
		opt.CacheBytes = DefaultCacheBytes
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.InsertBatch <= 0 {
		opt.InsertBatch = DefaultInsertBatch
	}
	s := &Store{db: db, opt: opt, caches: map[int64]*modelCache{}, closed: make(chan struct{})}
	ms, err := listModels(ctx, db.W)
	if err != nil {
		return nil, errs.Wrap(errs.FailedPrecondition, err, "vector: open (are the vector migrations applied?)")
	}
	for _, m := range ms {
		if err := s.repairTrigger(ctx, m); err != nil {
			return nil, fmt.Errorf("vector: open: %w", err)
		}
	}
	return s, nil
}

// Close stops background loads and drops the in-memory copies; the database
// stays open (it belongs to the caller).
func (s *Store) Close() error {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.loads.Wait()
	s.mu.Lock()
	s.caches = map[int64]*modelCache{}
	s.used = 0
	s.mu.Unlock()
	return nil
}

// Models lists the registered models by name.
func (s *Store) Models(ctx context.Context) ([]Model, error) {
	ms, err := listModels(ctx, s.db.R)
	if err != nil {
		return nil, fmt.Errorf("vector: models: %w", err)
	}
	out := make([]Model, len(ms))
	for i, m := range ms {
		out[i] = Model{Name: m.name, Dim: m.dim, Metric: m.metric, CreatedAt: time.UnixMilli(m.createdAt).UTC()}
		if c := s.cache(m.seq); c != nil {
			c.mu.RLock()
			if c.m != nil {
				out[i].Cached, out[i].CacheRows = true, len(c.m.seqs)
			}
			c.mu.RUnlock()
		}
	}
	return out, nil
}

// CreateModel registers a model with its dimension and metric (Cosine or L2)
// ahead of its first insert, which would otherwise register it with Cosine.
// Registering an existing model with the same dimension and metric is a no-op.
func (s *Store) CreateModel(ctx context.Context, name string, dim int, metric string) error {
	if err := checkModel(name, dim); err != nil {
		return err
	}
	if metric != Cosine && metric != L2 {
		return errs.Invalid("metric", "metric must be %q or %q, got %q", Cosine, L2, metric)
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := s.modelForWrite(ctx, tx, name, dim, metric)
		return err
	})
}

const modelCols = `seq, name, dim, metric, table_name, created_at`

func scanModel(sc interface{ Scan(...any) error }) (*model, error) {
	var m model
	if err := sc.Scan(&m.seq, &m.name, &m.dim, &m.metric, &m.table, &m.createdAt); err != nil {
		return nil, err
	}
	return &m, nil
}

func listModels(ctx context.Context, q querier) ([]*model, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+modelCols+` FROM embedding_model ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []*model
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// lookup returns the named model, or nil when there is none.
func lookup(ctx context.Context, q querier, name string) (*model, error) {
	m, err := scanModel(q.QueryRowContext(ctx, `SELECT `+modelCols+` FROM embedding_model WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return m, err
}

// mustModel returns the named model or a not_found error that names the
// models that have vectors, so a misspelt or outdated name can be corrected.
func mustModel(ctx context.Context, q querier, name string) (*model, error) {
	m, err := lookup(ctx, q, name)
	if err != nil || m != nil {
		return m, err
	}
	ms, err := listModels(ctx, q)
	if err != nil {
		return nil, err
	}
	have := "none yet"
	if len(ms) > 0 {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = m.name
		}
		have = strings.Join(names, ", ")
	}
	return nil, errs.New(errs.NotFound, "model_name", "no embeddings are stored for model %q (models with embeddings: %s)", name, have)
}

// modelForWrite returns the named model, registering it when it is new (with
// Cosine when metric is ""); a registered model with another dimension, or
// another metric when one is given, is an invalid_argument.
func (s *Store) modelForWrite(ctx context.Context, tx *sql.Tx, name string, dim int, metric string) (*model, error) {
	m, err := lookup(ctx, tx, name)
	if err != nil {
		return nil, err
	}
	if m != nil {
		if err := m.check(dim, metric); err != nil {
			return nil, err
		}
		return m, nil
	}
	if metric == "" {
		metric = Cosine
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `INSERT INTO embedding_model (name, dim, metric, table_name, created_at)
		VALUES (?, ?, ?, ?, ?) RETURNING seq`, name, dim, metric, "vec_new_"+name, time.Now().UnixMilli()).Scan(&seq)
	if err != nil {
		return nil, err
	}
	table := fmt.Sprintf("vec_%d", seq)
	if _, err := tx.ExecContext(ctx, `UPDATE embedding_model SET table_name = ? WHERE seq = ?`, table, seq); err != nil {
		return nil, err
	}
	// dim and metric are validated integers and constants, table comes from seq.
	ddl := fmt.Sprintf(`CREATE VIRTUAL TABLE %s USING vec0(embedding float[%d] distance_metric=%s, chunk_size=%d)`,
		table, dim, metric, chunkSize)
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return nil, err
	}
	m, err = mustModel(ctx, tx, name)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, triggerSQL(m)); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *model) check(dim int, metric string) error {
	if dim != m.dim {
		return errs.Invalid("vector_dimension", "model %q has vector_dimension %d, got %d", m.name, m.dim, dim)
	}
	if metric != "" && metric != m.metric {
		return errs.Invalid("metric", "model %q uses metric %q, got %q", m.name, m.metric, metric)
	}
	return nil
}

func triggerName(m *model) string { return m.table + "_file_delete" }

// triggerSQL deletes a lake file's vector with the file and logs the change
// for in-memory copies. It logs whether or not the file had a vector: a
// lookup first would cost as much as the (no-op) delete.
func triggerSQL(m *model) string {
	return lake.FileDeleteTriggerSQL(triggerName(m), fmt.Sprintf(`	DELETE FROM %s WHERE rowid = old.seq;
	INSERT INTO embedding_change (model_seq, file_seq) VALUES (%d, old.seq);`, m.table, m.seq))
}

// repairTrigger re-creates a missing delete trigger and deletes the vectors
// of files deleted while it was missing.
func (s *Store) repairTrigger(ctx context.Context, m *model) error {
	var n int
	if err := s.db.W.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name = ?`,
		triggerName(m)).Scan(&n); err != nil {
		return err
	}
	if n == 1 {
		return nil
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, triggerSQL(m)); err != nil {
			return err
		}
		orphans, err := sqlitedb.Int64s(ctx, tx, `SELECT v.rowid FROM `+m.table+` AS v WHERE `+lake.FileGoneSQL("v.rowid"))
		if err != nil {
			return err
		}
		_, err = deleteSeqs(ctx, tx, m, orphans)
		return err
	})
}

// DeleteFiles deletes the vectors of the given lake files in every model, in
// the caller's transaction (the lake's delete transaction). The delete
// triggers already do this when rows of file are deleted, so calling it is
// optional and idempotent; the appliance calls it from the lake's delete
// hook so a delete can say how many embeddings went.
// It returns how many vectors it deleted, over all models.
func (s *Store) DeleteFiles(ctx context.Context, tx *sql.Tx, seqs []int64) (int, error) {
	if len(seqs) == 0 {
		return 0, nil
	}
	ms, err := listModels(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("vector: delete files: %w", err)
	}
	total := 0
	for _, m := range ms {
		n, err := deleteSeqs(ctx, tx, m, seqs)
		if err != nil {
			return 0, fmt.Errorf("vector: delete files: %w", err)
		}
		total += n
	}
	return total, pruneLog(ctx, tx)
}

// deleteSeqs deletes the vectors of seqs in one model and returns how many
// there were.
func deleteSeqs(ctx context.Context, tx *sql.Tx, m *model, seqs []int64) (int, error) {
	if len(seqs) == 0 {
		return 0, nil
	}
	del, err := tx.PrepareContext(ctx, `DELETE FROM `+m.table+` WHERE rowid = ?`)
	if err != nil {
		return 0, err
	}
	defer del.Close()
	n := 0
	for _, seq := range seqs {
		res, err := del.ExecContext(ctx, seq)
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO embedding_change (model_seq, file_seq)
		SELECT ?, value FROM json_each(?)`, m.seq, jsonInts(seqs))
	return n, err
}

// pruneLog keeps the change log near keepChanges rows; it deletes in large
// steps so most calls cost two index lookups.
func pruneLog(ctx context.Context, tx *sql.Tx) error {
	var oldest, newest int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM embedding_change`).
		Scan(&oldest, &newest); err != nil {
		return err
	}
	if newest-oldest < 2*keepChanges {
		return nil
	}
	cut := newest - keepChanges
	if _, err := tx.ExecContext(ctx, `DELETE FROM embedding_change WHERE seq <= ?`, cut); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE embedding_state SET pruned_through = ? WHERE id = 1`, cut)
	return err
}

func checkModel(name string, dim int) error {
	if strings.TrimSpace(name) == "" {
		return errs.Invalid("model_name", "model_name is required")
	}
	if len(name) > MaxModelName {
		return errs.Invalid("model_name", "model_name is longer than %d bytes", MaxModelName)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return errs.Invalid("model_name", "model_name contains a control character")
	}
	if dim < 1 || dim > MaxDim {
		return errs.Invalid("vector_dimension", "vector_dimension must be 1..%d, got %d", MaxDim, dim)
	}
	return nil
}
