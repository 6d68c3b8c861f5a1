package vector

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// CheckBatch enforces insert_image_embeddings_batch's limit (below 100
// records); the HTTP layer calls it before Insert.
func CheckBatch(n int) error {
	if n > MaxBatch {
		return errs.Invalid("embedding_list", "embedding_list has %d records; a batch holds at most %d", n, MaxBatch)
	}
	return nil
}

// Insert writes recs for model in one transaction: every record is checked
// before anything is written, and any failure writes nothing. The first
// insert for a model registers it with dimension dim (metric Cosine); later
// ones must use the same dim. A file that already has a vector for the model
// gets the new one. It returns the number of vectors written.
func (s *Store) Insert(ctx context.Context, modelName string, dim int, recs []Record) (int, error) {
	if err := s.insertOne(ctx, modelName, dim, recs, nil); err != nil {
		return 0, err
	}
	return len(recs), nil
}

// InsertSession is Insert that also records the batch in the lake's job
// history as a completed SessionJob carrying sessionID, in the same
// transaction: the vectors and their record commit or roll back together,
// so a client never gets an error for a batch that was stored.
func (s *Store) InsertSession(ctx context.Context, modelName string, dim int, recs []Record, sessionID string) (n int, jobID string, err error) {
	if sessionID == "" {
		return 0, "", errs.Invalid("session_id", "session_id is empty")
	}
	err = s.insertOne(ctx, modelName, dim, recs, func(tx *sql.Tx) error {
		jobID, err = job.Record(ctx, tx, SessionJob, map[string]any{"session_id": sessionID, "model_name": modelName},
			SessionResult{SessionID: sessionID, ModelName: modelName, UpsertCount: len(recs)}, int64(len(recs)))
		return err
	})
	if err != nil {
		return 0, "", err
	}
	return len(recs), jobID, nil
}

// insertOne checks recs and writes them in one transaction, running also
// inside it after the vectors are written.
func (s *Store) insertOne(ctx context.Context, modelName string, dim int, recs []Record, also func(*sql.Tx) error) error {
	if err := validate(modelName, dim, recs); err != nil {
		return err
	}
	if err := s.precheck(ctx, modelName, dim); err != nil {
		return err
	}
	return s.insertBatch(ctx, modelName, dim, recs, 0, also)
}

// InsertMany writes any number of records, committing Options.InsertBatch
// records per transaction. All records are checked first (vectors, duplicate
// names, and that every uniqueName is a lake file), so bad input writes
// nothing; only a failure mid-way (a file deleted meanwhile, a full disk)
// leaves earlier batches committed, and the count returned says how many.
func (s *Store) InsertMany(ctx context.Context, modelName string, dim int, recs []Record) (int, error) {
	if err := validate(modelName, dim, recs); err != nil {
		return 0, err
	}
	if err := s.precheck(ctx, modelName, dim); err != nil {
		return 0, err
	}
	if err := s.checkNames(ctx, recs); err != nil {
		return 0, err
	}
	done := 0
	for done < len(recs) {
		end := min(done+s.opt.InsertBatch, len(recs))
		if err := s.insertBatch(ctx, modelName, dim, recs[done:end], done, nil); err != nil {
			return done, err
		}
		done = end
	}
	return done, nil
}

// precheck reports a dimension mismatch without taking the write lock.
func (s *Store) precheck(ctx context.Context, modelName string, dim int) error {
	m, err := lookup(ctx, s.db.R, modelName)
	if err != nil {
		return fmt.Errorf("vector: insert: %w", err)
	}
	if m != nil {
		return m.check(dim, "")
	}
	return nil
}

// checkNames finds the first uniqueName that is not a lake file.
func (s *Store) checkNames(ctx context.Context, recs []Record) error {
	const step = 10000
	for off := 0; off < len(recs); off += step {
		part := recs[off:min(off+step, len(recs))]
		seqs, err := lake.SeqsOfNames(ctx, s.db.R, names(part))
		if err != nil {
			return fmt.Errorf("vector: insert: %w", err)
		}
		if i := slices.Index(seqs, 0); i >= 0 { // INTEGER PRIMARY KEY rowids start at 1
			return unknownName(off+i, part[i].UniqueName)
		}
	}
	return nil
}

func unknownName(i int, name string) error {
	return errs.New(errs.NotFound, fmt.Sprintf("embedding_list[%d].uniqueName", i), "no lake file has uniqueName %q", name)
}

// insertBatch writes recs (numbered from base in errors) and runs also (when
// not nil) in one transaction, and then updates the in-memory copy.
func (s *Store) insertBatch(ctx context.Context, modelName string, dim int, recs []Record, base int, also func(*sql.Tx) error) error {
	var m *model
	var seqs []int64
	var last int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if m, err = s.modelForWrite(ctx, tx, modelName, dim, ""); err != nil {
			return err
		}
		if seqs, err = resolveForWrite(ctx, tx, recs, base); err != nil {
			return err
		}
		if err = writeVectors(ctx, tx, m, seqs, recs); err != nil {
			return err
		}
		if err = tx.QueryRowContext(ctx, `SELECT last_insert_rowid()`).Scan(&last); err != nil {
			return err
		}
		if err = pruneLog(ctx, tx); err != nil || also == nil {
			return err
		}
		return also(tx)
	})
	if err != nil {
		if errs.CodeOf(err) != errs.Internal {
			return err
		}
		return fmt.Errorf("vector: insert: %w", err)
	}
	s.applyWrite(m, last-int64(len(recs))+1, last, seqs, recs)
	return nil
}

// resolveForWrite maps each record to its file seq inside the write
// transaction, so a file cannot be deleted between the check and the write.
func resolveForWrite(ctx context.Context, tx *sql.Tx, recs []Record, base int) ([]int64, error) {
	seqs, err := lake.SeqsOfNames(ctx, tx, names(recs))
	if err != nil {
		return nil, err
	}
	for i, seq := range seqs {
		if seq == 0 { // INTEGER PRIMARY KEY rowids start at 1
			return nil, unknownName(base+i, recs[i].UniqueName)
		}
	}
	return seqs, nil
}

// writeVectors replaces or inserts each vector and logs the changes; the log
// rows are the last ones inserted, which insertBatch relies on.
func writeVectors(ctx context.Context, tx *sql.Tx, m *model, seqs []int64, recs []Record) error {
	// vec0 has no upsert; delete only the rows that exist, as a delete of a
	// missing rowid costs nearly as much as one of an existing one. vec0 turns
	// "rowid IN (...)" into a full scan, so the join (CROSS fixes the order)
	// probes it by rowid instead.
	existing, err := sqlitedb.Int64s(ctx, tx, `SELECT v.rowid FROM json_each(?) AS j CROSS JOIN `+m.table+
		` AS v ON v.rowid = j.value`, jsonInts(seqs))
	if err != nil {
		return err
	}
	if err := deleteRows(ctx, tx, m, existing); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO `+m.table+` (rowid, embedding) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for i, r := range recs {
		if _, err := ins.ExecContext(ctx, seqs[i], encode(r.Vector)); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO embedding_change (model_seq, file_seq)
		SELECT ?, value FROM json_each(?)`, m.seq, jsonInts(seqs))
	return err
}

func deleteRows(ctx context.Context, tx *sql.Tx, m *model, seqs []int64) error {
	if len(seqs) == 0 {
		return nil
	}
	del, err := tx.PrepareContext(ctx, `DELETE FROM `+m.table+` WHERE rowid = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	for _, seq := range seqs {
		if _, err := del.ExecContext(ctx, seq); err != nil {
			return err
		}
	}
	return nil
}

// validate checks everything that needs no database.
func validate(modelName string, dim int, recs []Record) error {
	if err := checkModel(modelName, dim); err != nil {
		return err
	}
	if len(recs) == 0 {
		return errs.Invalid("embedding_list", "embedding_list is empty")
	}
	seen := make(map[string]int, len(recs))
	for i, r := range recs {
		field := fmt.Sprintf("embedding_list[%d]", i)
		if r.UniqueName == "" {
			return errs.Invalid(field+".uniqueName", "uniqueName is required")
		}
		if j, dup := seen[r.UniqueName]; dup {
			return errs.Invalid(field+".uniqueName", "uniqueName %q appears twice (records %d and %d)", r.UniqueName, j, i)
		}
		seen[r.UniqueName] = i
		if err := checkVector(field+".embeddings", r.Vector, dim); err != nil {
			return err
		}
	}
	return nil
}

// checkVector rejects empty, wrong-length, non-finite and all-zero vectors
// (cosine distance to a zero vector is undefined).
func checkVector(field string, v []float32, dim int) error {
	if len(v) == 0 {
		return errs.Invalid(field, "vector is empty")
	}
	if len(v) != dim {
		return errs.Invalid(field, "vector has %d components, vector_dimension is %d", len(v), dim)
	}
	zero := true
	for j, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errs.Invalid(fmt.Sprintf("%s[%d]", field, j), "component %d is %v", j, x)
		}
		zero = zero && x == 0
	}
	if zero {
		return errs.Invalid(field, "vector is all zeros")
	}
	return nil
}

// Float32s converts decoded JSON numbers to a vector, rejecting values that
// are not finite float32s rather than letting them become ±Inf.
func Float32s(field string, v []float64) ([]float32, error) {
	out := make([]float32, len(v))
	for i, x := range v {
		if math.IsNaN(x) || math.Abs(x) > math.MaxFloat32 {
			return nil, errs.Invalid(fmt.Sprintf("%s[%d]", field, i), "component %d (%v) is not a finite float32", i, x)
		}
		out[i] = float32(x)
	}
	return out, nil
}

// encode is sqlite-vec's float32 blob: little-endian components.
func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func names(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.UniqueName
	}
	return out
}

func jsonInts(v []int64) string {
	b := make([]byte, 0, 2+8*len(v))
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return string(append(b, ']'))
}
