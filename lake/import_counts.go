package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// bulkCounts keeps, for a writer of many annotations, the counts that
// triggers keep for every other write (label_files, shape_counts,
// label_file, source_files, list_generation; migrations 004, 012, 014), per
// call instead of per row: the triggers' probe and upsert per annotation
// were half of an import's cost per box. Between beginBulk and end the
// triggers skip annotation inserts and deletes (migration 015's bulk_write
// row); beginBulk takes the files' contributions out of the counts, end puts
// back what the files hold then, so the counts are those the triggers would
// have left, whatever the writer inserted or deleted, provided it wrote
// annotations of these files only. Both run in the writer's transaction: a
// failed one rolls back with it, the marker row included.
type bulkCounts struct {
	tx    *sql.Tx
	files string // the file seqs, a JSON array for json_each
}

// The statements take ?1, the files' seqs as a JSON array. A file counts
// once per label, type or source however many annotations give it one.
const (
	bulkFiles = `(SELECT value FROM json_each(?1))`

	labelsOfFiles = `SELECT label, count(*) AS n FROM (SELECT DISTINCT label, file_seq FROM annotation
		WHERE file_seq IN ` + bulkFiles + `) GROUP BY label`
	typesOfFiles = `SELECT type, count(*) AS n, count(DISTINCT file_seq) AS f FROM annotation
		WHERE file_seq IN ` + bulkFiles + ` GROUP BY type`
	sourcesOfFiles = `SELECT a.source, f.type, count(*) AS n FROM (SELECT DISTINCT source, file_seq FROM annotation
		WHERE file_seq IN ` + bulkFiles + `) a JOIN file f ON f.seq = a.file_seq GROUP BY a.source, f.type`
)

// bulkTakeOut are beginBulk's statements: the files' share of each count
// comes out, and their label_file rows go.
var bulkTakeOut = []string{
	`INSERT INTO bulk_write (one) VALUES (1)`, // a nested bulk write fails here, not silently
	`UPDATE label_files SET files = files - d.n FROM (` + labelsOfFiles + `) AS d WHERE label_files.label = d.label`,
	`DELETE FROM label_files WHERE files <= 0`,
	`UPDATE shape_counts SET annotations = annotations - d.n, files = files - d.f
		FROM (` + typesOfFiles + `) AS d WHERE shape_counts.type = d.type`,
	`DELETE FROM shape_counts WHERE annotations <= 0`,
	`UPDATE source_files SET files = files - d.n FROM (` + sourcesOfFiles + `) AS d
		WHERE source_files.source = d.source AND source_files.type = d.type`,
	`DELETE FROM source_files WHERE files <= 0`,
	`DELETE FROM label_file WHERE (label, file_seq) IN (SELECT label, file_seq FROM annotation
		WHERE file_seq IN ` + bulkFiles + `)`,
}

// bulkPutBack are end's statements: the files' share of each count as they
// are now goes in, and the generation moves once (a label or a source
// gained or lost reorders anchored listings, as the triggers' bumps say).
var bulkPutBack = []string{
	`INSERT INTO label_files (label, files) SELECT label, n FROM (` + labelsOfFiles + `) WHERE true
		ON CONFLICT (label) DO UPDATE SET files = files + excluded.files`,
	`INSERT INTO shape_counts (type, annotations, files) SELECT type, n, f FROM (` + typesOfFiles + `) WHERE true
		ON CONFLICT (type) DO UPDATE SET annotations = annotations + excluded.annotations, files = files + excluded.files`,
	`INSERT INTO source_files (source, type, files) SELECT source, type, n FROM (` + sourcesOfFiles + `) WHERE true
		ON CONFLICT (source, type) DO UPDATE SET files = files + excluded.files`,
	`INSERT OR IGNORE INTO label_file (label, file_seq, type, updated_at)
		SELECT DISTINCT a.label, a.file_seq, f.type, f.updated_at FROM annotation a JOIN file f ON f.seq = a.file_seq
		WHERE a.file_seq IN ` + bulkFiles,
	`UPDATE list_generation SET n = n + 1`,
	`DELETE FROM bulk_write`,
}

// beginBulk starts a bulk write of the annotations of files (their seqs) in
// tx. The caller writes only those files' annotations, then calls end; on
// an error it must roll tx back.
func beginBulk(ctx context.Context, tx *sql.Tx, files []int64) (*bulkCounts, error) {
	bc := &bulkCounts{tx: tx, files: seqsJSON(files)}
	return bc, bc.run(ctx, bulkTakeOut)
}

// seqsJSON is files as a JSON array.
func seqsJSON(files []int64) string {
	b := make([]byte, 0, 8*len(files)+2)
	b = append(b, '[')
	for i, s := range files {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	return string(append(b, ']'))
}

// end puts the files' counts back and lets the triggers fire again.
func (bc *bulkCounts) end(ctx context.Context) error { return bc.run(ctx, bulkPutBack) }

// newFileCounts keeps the counts of an insert of annotations into files
// that have none yet (InsertImportBoxesTx): the writer tells it each file's
// rows, and end puts in what they add, without reading the rows back. The
// set-based statements of bulkCounts read every annotation of the batch
// three times and sorted them, a fifth of an import's insert. beginNew
// checks that the files have no annotation (one index probe each) and falls
// back to bulkCounts when one has.
type newFileCounts struct {
	tx       *sql.Tx
	bulk     *bulkCounts        // the files had annotations: counted by bulkCounts
	labels   map[string]int     // files per label
	types    map[string]*[2]int // annotations and files per type
	withRows []int64            // the files given a row (source 'human')
	deferred bool               // the change log's sources are logged at the end
	pairs    map[string][]int64 // each label's files
	seen     map[string]bool    // the file's labels and types, reset per file
}

func beginNewFileCounts(ctx context.Context, tx *sql.Tx, files []int64) (*newFileCounts, error) {
	nc := &newFileCounts{tx: tx, labels: map[string]int{}, types: map[string]*[2]int{}, pairs: map[string][]int64{},
		seen: map[string]bool{}}
	bc := &bulkCounts{tx: tx, files: seqsJSON(files)}
	var any bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM annotation WHERE file_seq IN `+bulkFiles+`)`, bc.files).
		Scan(&any); err != nil {
		return nil, fmt.Errorf("bulk counts: %w", err)
	}
	if any {
		nc.bulk = bc
		return nc, bc.run(ctx, bulkTakeOut)
	}
	if err := bc.run(ctx, bulkTakeOut[:1]); err != nil { // the marker row alone: there is nothing to take out
		return nil, err
	}
	var err error
	nc.deferred, err = deferSources(ctx, tx)
	return nc, err
}

// file counts the rows (label, type) written to file seq.
func (nc *newFileCounts) file(seq int64, rows []boxRow) {
	if nc.bulk != nil || len(rows) == 0 {
		return
	}
	clear(nc.seen)
	nc.withRows = append(nc.withRows, seq)
	for _, r := range rows {
		typ := string(r.typ)
		t := nc.types[typ]
		if t == nil {
			t = &[2]int{}
			nc.types[typ] = t
		}
		t[0]++
		if !nc.seen["t"+typ] {
			nc.seen["t"+typ] = true
			t[1]++
		}
		if !nc.seen["l"+r.label] {
			nc.seen["l"+r.label] = true
			nc.labels[r.label]++
			nc.pairs[r.label] = append(nc.pairs[r.label], seq)
		}
	}
}

// end puts the rows' counts in (or has bulkCounts count them) and lets the
// triggers fire again.
func (nc *newFileCounts) end(ctx context.Context) error {
	if nc.bulk != nil {
		return nc.bulk.end(ctx)
	}
	labels, _ := json.Marshal(nc.labels)
	types, _ := json.Marshal(nc.types)
	// label_file's rows in its key's order: label, then file seq.
	var pairs []any
	for _, l := range slices.Sorted(maps.Keys(nc.pairs)) {
		for _, s := range nc.pairs[l] {
			pairs = append(pairs, []any{l, s})
		}
	}
	pairsJSON, _ := json.Marshal(pairs)
	for _, st := range []struct {
		q   string
		arg string
	}{
		{`INSERT INTO label_files (label, files) SELECT key, value FROM json_each(?1) WHERE true
			ON CONFLICT (label) DO UPDATE SET files = files + excluded.files`, string(labels)},
		{`INSERT INTO shape_counts (type, annotations, files) SELECT key, value->>0, value->>1 FROM json_each(?1) WHERE true
			ON CONFLICT (type) DO UPDATE SET annotations = annotations + excluded.annotations, files = files + excluded.files`, string(types)},
		{`INSERT INTO source_files (source, type, files) SELECT 'human', f.type, count(*) FROM file f
			WHERE f.seq IN ` + bulkFiles + ` GROUP BY f.type
			ON CONFLICT (source, type) DO UPDATE SET files = files + excluded.files`, seqsJSON(nc.withRows)},
		{`INSERT OR IGNORE INTO label_file (label, file_seq, type, updated_at)
			SELECT j.value->>0, f.seq, f.type, f.updated_at FROM json_each(?1) j JOIN file f ON f.seq = j.value->>1`, string(pairsJSON)},
	} {
		if _, err := nc.tx.ExecContext(ctx, st.q, st.arg); err != nil {
			return fmt.Errorf("bulk counts: %w", err)
		}
	}
	if nc.deferred {
		if err := logNewSources(ctx, nc.tx, string(Human), seqsJSON(nc.withRows)); err != nil {
			return fmt.Errorf("change log: %w", err)
		}
	}
	return (&bulkCounts{tx: nc.tx}).run(ctx, bulkPutBack[len(bulkPutBack)-2:]) // the generation, the marker row
}

func (bc *bulkCounts) run(ctx context.Context, stmts []string) error {
	for _, q := range stmts {
		var args []any
		if strings.Contains(q, "?1") {
			args = []any{bc.files}
		}
		if _, err := bc.tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("bulk counts: %w", err)
		}
	}
	return nil
}
