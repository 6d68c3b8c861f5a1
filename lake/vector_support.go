package lake

import (
	"context"

	"github.com/framelake/framelake/internal/sqlitedb"
)

// What the vector store (package vector) needs of the file table: uniqueNames
// turned into keys and back, a boolean SQL test for a key whose file is gone,
// the pool of a filter as a subquery, and the trigger that deletes a file's
// vectors with the file. They take a Querier rather than a *Lake because the
// vector store runs them in its own write transactions, and it has no Lake.

// SeqsOfNames returns, for each of names, the key (File.Seq) of the lake
// file with that uniqueName, or 0 where no file has it. In a transaction the
// answer holds until it ends.
func SeqsOfNames(ctx context.Context, q sqlitedb.Querier, names []string) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT j.key, f.seq FROM json_each(?) AS j
		JOIN file AS f ON f.unique_name = j.value`, jsonArray(names))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seqs := make([]int64, len(names))
	for rows.Next() {
		var i int
		var seq int64
		if err := rows.Scan(&i, &seq); err != nil {
			return nil, err
		}
		seqs[i] = seq
	}
	return seqs, rows.Err()
}

// NamesOfSeqs returns the uniqueNames of the files with these keys; keys of
// files that no longer exist are absent.
func NamesOfSeqs(ctx context.Context, q sqlitedb.Querier, seqs []int64) (map[int64]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, unique_name FROM file WHERE seq IN (SELECT value FROM json_each(?))`,
		jsonArray(seqs))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := make(map[int64]string, len(seqs))
	for rows.Next() {
		var seq int64
		var n string
		if err := rows.Scan(&seq, &n); err != nil {
			return nil, err
		}
		names[seq] = n
	}
	return names, rows.Err()
}

// FileSeqsSQL is a subquery of the keys of the files that where (boolean SQL
// over "file AS f", as SelectionSQL returns) selects, to use as
// "... IN (" + FileSeqsSQL(where) + ")" with where's arguments.
func FileSeqsSQL(where string) string { return "SELECT f.seq FROM file AS f WHERE " + where }

// FileGoneSQL is boolean SQL that is true when no lake file has the key in
// the column expression col.
func FileGoneSQL(col string) string {
	return "NOT EXISTS (SELECT 1 FROM file AS f WHERE f.seq = " + col + ")"
}

// FileDeleteTriggerSQL creates (if missing) the trigger name that runs body,
// statements ending in ";" that name the deleted file's key as old.seq,
// after each delete of a lake file, in the deleting transaction whatever code
// deletes it. name and body are the caller's SQL, never user text.
func FileDeleteTriggerSQL(name, body string) string {
	return "CREATE TRIGGER IF NOT EXISTS " + name + " AFTER DELETE ON file BEGIN\n" + body + "\nEND"
}
