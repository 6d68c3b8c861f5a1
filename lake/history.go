package lake

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// Actor is who changes shapes and through what ("web app", "api key
// fl...", "import", "model accept"). The web layer puts it in the request's
// context; the lake records it with every change of a frame's shapes.
type Actor struct {
	Who string `json:"who"`
	Via string `json:"via"`
}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is the actor ctx carries, or the system's.
func ActorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok && a.Who != "" {
		return a
	}
	return Actor{Who: "system", Via: "internal"}
}

// Change is one change of a frame's shapes: what was removed and added.
type Change struct {
	ID        string            `json:"id"`
	File      string            `json:"uniqueName"`
	Frame     int               `json:"frame"`
	Operation string            `json:"operation"`
	At        time.Time         `json:"at"`
	Who       string            `json:"who"`
	Via       string            `json:"via"`
	Removed   []json.RawMessage `json:"removed"`
	Added     []json.RawMessage `json:"added"`
}

// shapeJSONs is each box's JSON without its id, frame, source or operation
// (the change's row says those), keys sorted: what a shape is, so equal
// shapes compare equal and a patch (patch.go) rebuilds the same text.
func shapeJSONs(boxes []Box) []string {
	out := make([]string, len(boxes))
	for i, b := range boxes {
		out[i] = shapeJSON(b)
	}
	slices.Sort(out)
	return out
}

// shapeJSON is one box's JSON as shapeJSONs lists it.
func shapeJSON(b Box) string {
	j, _ := json.Marshal(b)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(j, &m) // just marshalled
	for _, k := range []string{"id", "frame", "source", "operation"} {
		delete(m, k)
	}
	j, _ = json.Marshal(m) // map keys come out sorted
	return string(j)
}

// diff is the multiset difference of two sorted lists: what a lacks of b
// (added) and what b lacks of a (removed).
func diff(before, after []string) (removed, added []string) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || (i < len(before) && before[i] < after[j]):
			removed = append(removed, before[i])
			i++
		case i == len(before) || after[j] < before[i]:
			added = append(added, after[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return removed, added
}

// recordChange keeps, in tx, the change of a frame's shapes from one
// operation, made by ctx's actor: nothing when they did not change.
func recordChange(ctx context.Context, tx *sql.Tx, fileSeq int64, frame int, operation string, before, after []string) error {
	removed, added := diff(before, after)
	if len(removed) == 0 && len(added) == 0 {
		return nil
	}
	// Whether the frame has a change yet, not how many: a count walked the
	// whole chain of a long-edited frame on every save.
	var seen bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM frame_change WHERE file_seq = ? AND frame = ?
		AND operation = ?)`, fileSeq, frame, operation).Scan(&seen); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	var base any
	if !seen { // the first change keeps what was there before it
		base = jsonList(before)
	}
	a := ActorOf(ctx)
	hashes := make([]string, len(removed))
	for i, r := range removed {
		hashes[i] = strconv.Quote(shapeHash(r))
	}
	added = asPatches(removed, added)
	_, err := tx.ExecContext(ctx, `INSERT INTO frame_change (id, file_seq, frame, operation, at, who, via, base, removed, added)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id.New("chg"), fileSeq, frame, operation, millis(time.Now()), a.Who, a.Via,
		base, jsonList(hashes), jsonList(added))
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// shapeHash names a shape by its JSON: a removed shape was in the version
// before, so the change keeps its name (16 hex digits), not the shape again.
func shapeHash(shapeJSON string) string {
	h := sha256.Sum256([]byte(shapeJSON))
	return hex.EncodeToString(h[:8])
}

func jsonList(items []string) string {
	if len(items) == 0 {
		return "[]"
	}
	b := []byte{'['}
	for i, s := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	return string(append(b, ']'))
}

// HistoryQuery selects changes: of one file (and frame), of some files (a
// job's or a task's frames), of some operations (a project's and its
// copies), of one person, in a time range; the newest first, Limit at most
// (default 100, at most MaxHistory).
type HistoryQuery struct {
	UniqueName   string
	Frame        *int
	UniqueNames  []string // only changes of these files, when not nil
	Operations   []string // only changes of these operations, when not nil
	Project      string   // only changes of a project's answer and its copies ("<id>/copy<k>")
	Who          string
	Since, Until time.Time
	Limit        int
}

// MaxHistory is the most changes History answers at once.
const MaxHistory = 1000

// History lists changes of frames' shapes.
func (l *Lake) History(ctx context.Context, q HistoryQuery) ([]Change, error) {
	where, args, err := l.historyWhere(ctx, q)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	out := []Change{}
	var keys []chainKey
	var seqs []int64
	err = l.scanRows(ctx, `SELECT c.seq, c.file_seq, c.id, f.unique_name, c.frame, c.operation, c.at, c.who, c.via
		FROM frame_change c JOIN file f ON f.seq = c.file_seq WHERE 1 = 1`+where+` ORDER BY c.seq DESC LIMIT ?`,
		append(args, min(limit, MaxHistory)), func(rows *sql.Rows) error {
			var c Change
			var at, seq int64
			var k chainKey
			if err := rows.Scan(&seq, &k.fileSeq, &c.ID, &c.File, &c.Frame, &c.Operation, &at, &c.Who, &c.Via); err != nil {
				return err
			}
			k.frame, k.operation = c.Frame, c.Operation
			c.At = fromMillis(at)
			c.Removed, c.Added = []json.RawMessage{}, []json.RawMessage{}
			out, keys, seqs = append(out, c), append(keys, k), append(seqs, seq)
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := l.historyShapes(ctx, out, keys, seqs); err != nil {
		return nil, err
	}
	return out, nil
}

// historyWhere is q's conditions on frame_change c joined with file f.
func (l *Lake) historyWhere(ctx context.Context, q HistoryQuery) (string, []any, error) {
	var where string
	var args []any
	if q.UniqueName != "" {
		f, err := l.File(ctx, q.UniqueName)
		if err != nil {
			return "", nil, err
		}
		where += ` AND c.file_seq = ?`
		args = append(args, f.seq)
		if q.Frame != nil {
			where += ` AND c.frame = ?`
			args = append(args, *q.Frame)
		}
	}
	if q.UniqueNames != nil {
		where += ` AND f.unique_name IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.UniqueNames))
	}
	if q.Operations != nil {
		where += ` AND c.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Operations))
	}
	if q.Project != "" {
		where += ` AND (c.operation = ? OR substr(c.operation, 1, ?) = ?)`
		args = append(args, q.Project, len(q.Project)+5, q.Project+"/copy")
	}
	if q.Who != "" {
		where += ` AND c.who = ?`
		args = append(args, q.Who)
	}
	if !q.Since.IsZero() {
		where += ` AND c.at >= ?`
		args = append(args, millis(q.Since))
	}
	if !q.Until.IsZero() {
		where += ` AND c.at < ?`
		args = append(args, millis(q.Until))
	}
	return where, args, nil
}

// historyShapes fills the shapes each change removed and added (out[i], of
// frame chain keys[i], at seqs[i]). A change keeps the names of the shapes
// it removed and may keep what it added as patches of them: the shapes
// come from replaying their frame's chain up to it, once a chain.
func (l *Lake) historyShapes(ctx context.Context, out []Change, keys []chainKey, seqs []int64) error {
	latest := map[chainKey]int64{}
	for i, k := range keys {
		latest[k] = max(latest[k], seqs[i])
	}
	at := map[int64]int{}
	for i, seq := range seqs {
		at[seq] = i
	}
	for k, upTo := range latest {
		err := l.replay(ctx, k, upTo, func(seq int64, _, removed, added []string) {
			if i, ok := at[seq]; ok {
				for _, r := range removed {
					out[i].Removed = append(out[i].Removed, json.RawMessage(r))
				}
				for _, a := range added {
					out[i].Added = append(out[i].Added, json.RawMessage(a))
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// FrameVersion is a frame's shapes from one operation as they were right
// after change id: the first change's base with every diff up to id
// replayed.
func (l *Lake) FrameVersion(ctx context.Context, changeID string) ([]json.RawMessage, error) {
	var fileSeq, seq int64
	var frame int
	var op string
	if err := l.db.Point.QueryRowContext(ctx, `SELECT seq, file_seq, frame, operation FROM frame_change WHERE id = ?`,
		changeID).Scan(&seq, &fileSeq, &frame, &op); err != nil {
		if err == sql.ErrNoRows {
			return nil, errs.NotFoundf("no change %q", changeID)
		}
		return nil, err
	}
	var shapes []string
	err := l.replay(ctx, chainKey{fileSeq, frame, op}, seq, func(_ int64, after, _, _ []string) { shapes = after })
	out := make([]json.RawMessage, len(shapes))
	for i, sh := range shapes {
		out[i] = json.RawMessage(sh)
	}
	return out, err
}

// chainKey names one frame's shapes of one operation: a chain of changes.
type chainKey struct {
	fileSeq   int64
	frame     int
	operation string
}

// replay walks a chain of changes up to seq (inclusive), handing each
// change's seq, the shapes after it, and the shapes it removed and added.
func (l *Lake) replay(ctx context.Context, k chainKey, upTo int64, each func(seq int64, after, removed, added []string)) error {
	var shapes []string
	return l.scanRows(ctx, `SELECT seq, base, removed, added FROM frame_change WHERE file_seq = ? AND frame = ?
		AND operation = ? AND seq <= ? ORDER BY seq`, []any{k.fileSeq, k.frame, k.operation, upTo}, func(rows *sql.Rows) error {
		var seq int64
		var base sql.NullString
		var removed, added string
		if err := rows.Scan(&seq, &base, &removed, &added); err != nil {
			return err
		}
		if base.Valid {
			shapes = rawStrings(base.String)
		}
		var hashes []string
		_ = json.Unmarshal([]byte(removed), &hashes) // the column is checked JSON
		var gone []string
		for _, h := range hashes {
			if i := slices.IndexFunc(shapes, func(sh string) bool { return shapeHash(sh) == h }); i >= 0 {
				gone = append(gone, shapes[i])
				shapes = slices.Delete(shapes, i, i+1)
			}
		}
		var put []string
		for _, a := range rawStrings(added) {
			put = append(put, unpatch(a, gone))
		}
		shapes = append(shapes, put...)
		each(seq, slices.Clone(shapes), gone, put)
		return nil
	})
}

func rawStrings(list string) []string {
	var raw []json.RawMessage
	_ = json.Unmarshal([]byte(list), &raw) // the column is checked JSON
	out := make([]string, len(raw))
	for i, r := range raw {
		out[i] = string(r)
	}
	return out
}
