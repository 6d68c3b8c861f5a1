package lake

import (
	"context"
	"database/sql"
	"time"

	"github.com/framelake/framelake/errs"
)

// DuplicateGroup is a near-duplicate group as table file_duplicate keeps
// it: its id and the keys (File.Seq) of its members.
type DuplicateGroup struct {
	ID      string
	Members []int64
}

// ReplaceDuplicates records the groups found among the files of scope: the
// rows of scope's files are replaced, so a file of scope in no group loses
// the group it had; files outside scope keep theirs.
func (l *Lake) ReplaceDuplicates(ctx context.Context, scope []int64, groups []DuplicateGroup) error {
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		const chunk = 50000 // json_each over a few hundred KB per statement
		for i := 0; i < len(scope); i += chunk {
			if _, err := tx.ExecContext(ctx, `DELETE FROM file_duplicate WHERE file_seq IN (SELECT value FROM json_each(?))`,
				jsonArray(scope[i:min(len(scope), i+chunk)])); err != nil {
				return err
			}
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO file_duplicate (file_seq, group_id, member_count)
			SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM file WHERE seq = ?)
			ON CONFLICT (file_seq) DO UPDATE SET group_id = excluded.group_id, member_count = excluded.member_count`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, g := range groups {
			for _, seq := range g.Members {
				if _, err := ins.ExecContext(ctx, seq, g.ID, len(g.Members), seq); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// DuplicateGroups returns the group id of each of seqs that has one.
func (l *Lake) DuplicateGroups(ctx context.Context, seqs []int64) (map[int64]string, error) {
	if len(seqs) == 0 {
		return map[int64]string{}, nil
	}
	return groupsOf(l.db.R.QueryContext(ctx, `SELECT file_seq, group_id FROM file_duplicate
		WHERE file_seq IN (SELECT value FROM json_each(?))`, jsonArray(seqs)))
}

// fileDuplicate is a file's group and its member count, or nil.
func (l *Lake) fileDuplicate(ctx context.Context, seq int64) (map[string]any, error) {
	var g string
	var n int
	err := l.db.Point.QueryRowContext(ctx, `SELECT group_id, member_count FROM file_duplicate WHERE file_seq = ?`, seq).Scan(&g, &n)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	return map[string]any{"group": g, "count": n}, err
}

// RemoveFromCollection takes the files with these keys out of a collection
// (the files stay in the lake) and returns how many were members.
func (l *Lake) RemoveFromCollection(ctx context.Context, collectionID string, seqs []int64) (int, error) {
	c, err := l.Collection(ctx, collectionID)
	if err != nil {
		return 0, err
	}
	var n int64
	err = l.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM collection_file WHERE collection_seq = ?
			AND file_seq IN (SELECT value FROM json_each(?))`, c.seq, jsonArray(seqs))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE collection SET updated_at = ? WHERE seq = ?`, millis(time.Now()), c.seq)
		return err
	})
	if err != nil {
		return 0, errs.Prefix(err, "remove from collection")
	}
	return int(n), nil
}

// AllDuplicateGroups returns the group id of every file that has one.
func (l *Lake) AllDuplicateGroups(ctx context.Context) (map[int64]string, error) {
	return groupsOf(l.db.R.QueryContext(ctx, `SELECT file_seq, group_id FROM file_duplicate`))
}

// groupsOf reads rows of (file_seq, group_id) into a map.
func groupsOf(rows *sql.Rows, err error) (map[int64]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var seq int64
		var g string
		if err := rows.Scan(&seq, &g); err != nil {
			return nil, err
		}
		out[seq] = g
	}
	return out, rows.Err()
}
