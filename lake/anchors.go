package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/framelake/framelake/lake/query"
)

// Page anchors (issue 31 item 22, docs/scale.md): SQLite's OFFSET n steps
// through n index entries before the first row it returns, so page 5,000 of
// a million files cost 40 times page 0 and page 300 of a label 60 times. For
// the anchored shapes (every file of a type, one label, one source, one
// collection) in date order, the lake keeps the sort key (updated_at, seq)
// of every anchorStep-th row of the listing; page p of size s seeks to
// anchor ⌊p·s/anchorStep⌋ and skips fewer than anchorStep rows from there.
//
// Anchors are found under a write generation (list_generation, migration
// 014, which every write that can change an anchored listing moves) and used
// only in a snapshot of the same generation, so an answer is never stale.
// After a write, the first deep page moves them to the new generation by
// the changes the writer logged since (anchors_log.go), and walks only the
// gap it lands in; when the log cannot vouch for every change (another
// process wrote, or more changed than it keeps), it finds
// them again, walking as far as it needs (what OFFSET costs). Other queries
// and sorts keep OFFSET.

// anchorStep is how many rows apart anchors are: a page skips at most
// anchorStep-1 index entries after its seek (about 0.1 ms), and a shape of
// a million files keeps 1,000 keys (16 KB). A variable for tests, which
// page small lakes across many anchors.
var anchorStep = 1000

// maxAnchored is how many shapes' anchors the lake keeps; past it the
// cache starts again (a shape is a query, so a user's clicks make few).
const maxAnchored = 64

// anchorShape is a listing whose order and members only the writes that
// move list_generation change: rows of from (aliased f or d) meeting where,
// in the order of their key columns.
type anchorShape struct {
	from, where string
	args        []any
	key, seq    string // sort key and tie-break columns
	desc        bool
	// count is a statement counting the shape's rows exactly, which a page
	// in the listing's second half uses to be read from the far end.
	count     string
	countArgs []any
	// change names the shape's rows in the writer's change log
	// (anchors_log.go): table, group and, when not nil, type; table ""
	// when the log does not follow the shape.
	change      string
	group, kind any
}

// id names the shape in the cache.
func (a anchorShape) id() string {
	return fmt.Sprintf("%s|%s|%v|%s", a.from, a.where, a.args, a.dir())
}

func (a anchorShape) dir() string {
	if a.desc {
		return "DESC"
	}
	return "ASC"
}

// order is the shape's ORDER BY; after (keys at or after an anchor, in the
// listing's direction) is its seek condition with two ? (key, seq).
func (a anchorShape) order() string { return a.key + " " + a.dir() + ", " + a.seq + " " + a.dir() }

func (a anchorShape) after() string {
	op := ">="
	if a.desc {
		op = "<="
	}
	return "(" + a.key + ", " + a.seq + ") " + op + " (?, ?)"
}

// anchor is the sort key of one row of a listing and its position there.
// The key is a boundary in the key space more than a row: seeking to it
// finds the first row at or after it, at position pos, whether or not the
// row it was found on is still there, so a change of the listing moves
// pos by the rows that came or went before the key and nothing else.
type anchor struct {
	key, seq int64
	pos      int
}

// anchorSet is the anchors of one shape in the snapshot of generation gen,
// in the listing's order, with the listing's row count then. They are
// anchorStep rows apart as first walked; moved to a later generation
// (anchors_log.go), the rows that came and went between two of them make
// the gap grow or shrink until a page walks it again. epoch and logAt
// place gen in the writer's change log (logAt < 0: not placed, so the set
// cannot be moved and is walked anew after a write).
type anchorSet struct {
	gen   int64
	total int
	keys  []anchor
	epoch int64
	logAt int64
}

// before returns the index of the last anchor at or before position p, or
// -1 when the first anchor lies after it.
func (s anchorSet) before(p int) int {
	i, j := 0, len(s.keys)
	for i < j {
		h := (i + j) / 2
		if s.keys[h].pos <= p {
			i = h + 1
		} else {
			j = h
		}
	}
	return i - 1
}

type anchorCache struct {
	mu sync.Mutex
	m  map[string]anchorSet
	// moves counts sets moved to a later generation by the change log,
	// steps the anchors walks found (tests).
	moves, steps atomic.Int64
}

// peek returns the anchors kept of shape id, of whichever generation.
func (c *anchorCache) peek(id string) (anchorSet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[id]
	return s, ok
}

// put keeps s unless the cache holds as much or more of a newer walk.
func (c *anchorCache) put(id string, s anchorSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxAnchored {
		c.m = map[string]anchorSet{}
	}
	if old, ok := c.m[id]; ok && (old.gen > s.gen || old.gen == s.gen && len(old.keys) >= len(s.keys)) {
		return
	}
	c.m[id] = s
}

// anchorOf returns the anchored shape of a listing of files of sel sorted
// by s, if it is one: c is sel planned for a page (with its driver).
func anchorOf(sel Selection, c compiled, s Sort) (anchorShape, bool) {
	if defaultStr(s.Field, "date_modified") != "date_modified" || c.target != query.Files {
		return anchorShape{}, false
	}
	a := anchorShape{desc: !strings.EqualFold(s.Order, "ASC")}
	switch {
	case c.drive != nil && c.where == "1" && (c.drive.from == "collection_file d" || c.drive.from == "label_file d"):
		a.from, a.where, a.args, a.key, a.seq = c.drive.from, c.drive.where, c.drive.args, "d.updated_at", "d.file_seq"
		// The set's value, then the type when listing one (anchoredSels, driverOf).
		a.change, a.group = strings.TrimSuffix(c.drive.from, " d"), a.args[0]
		if len(a.args) > 1 {
			a.kind = a.args[1]
		}
		// The set's index range, or a label's kept count in a lake of one type.
		a.count, a.countArgs = `SELECT count(*) FROM `+a.from+` WHERE `+a.where, a.args
		if q, args, ok := memberCountSQL(sel, a.count, a.args); ok {
			a.count, a.countArgs = q, args
		}
	case c.drive == nil && c.bare:
		a.from, a.where, a.args, a.key, a.seq = "file f", c.where, c.args, "f.updated_at", "f.seq"
		a.count, a.countArgs = typeCountSQL, c.args
		a.change, a.group = "file", c.args[0]
	case c.drive == nil && sourceOnly(sel):
		a.from, a.where, a.args, a.key, a.seq = "file f", c.where, c.args, "f.updated_at", "f.seq"
		a.count, a.countArgs, _ = memberCountSQL(sel, "", nil)
		_, t, v, _ := memberTerm(sel)
		a.change, a.group, a.kind = "source", v, t
	default:
		return anchorShape{}, false
	}
	return a, true
}

// reversed is a listed the other way round.
func (a anchorShape) reversed() anchorShape {
	a.desc = !a.desc
	return a
}

// sourceOnly reports whether sel is files of one type whose whole query is
// annotation.source = <value>: a shape whose members list_generation follows.
func sourceOnly(sel Selection) bool {
	mc, _, _, ok := memberTerm(sel)
	return ok && mc.field == "annotation.source"
}

// anchoredWalk answers page idx of size of a listing of files from its
// anchors when the listing is an anchored shape and the page starts at
// least anchorStep rows in; ok false leaves the page to walk.
func (l *Lake) anchoredWalk(ctx context.Context, sel Selection, idx, size int, s Sort, cols string,
	scan func(*sql.Rows) error) (ok bool, err error) {
	if idx*size < anchorStep {
		return false, nil
	}
	c, err := l.plan(ctx, sel, query.Page, defaultStr(s.Field, "date_modified"), true)
	if err != nil || c.target != query.Files {
		return false, nil // walk reports it
	}
	a, ok := anchorOf(sel, c, s)
	if !ok {
		return false, nil
	}
	order, err := orderBy(s, query.Files)
	if err != nil {
		return false, nil
	}
	if cols == "" {
		cols = fileColumns
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return true, err
	}
	defer release()
	if done, err := l.anchoredQuick(ctx, a, idx*size, size, cols, order, scan); done || err != nil {
		return true, err
	}
	for try := 0; ; try++ {
		again, err := l.anchoredPage(ctx, a, idx*size, size, cols, order, try == 0, scan)
		if !again || err != nil {
			return true, err
		}
	}
}

// pageOf is where page rows [pos, pos+lim) of a listing of total rows are
// read from: a page in the second half is the rows before the end, counted
// from the far end, in the listing the other way round, whose anchors a
// walk reaches in at most half the rows ("go to item 900,000" of a million
// walks 100,000 once, not 900,000).
func pageOf(a anchorShape, pos, lim, total int) (anchorShape, int, int) {
	if 2*pos > total {
		a, pos = a.reversed(), total-pos-lim
		if pos < 0 {
			lim, pos = lim+pos, 0
		}
	}
	return a, pos, lim
}

// anchoredQuick answers the page in one statement from anchors kept of the
// last generation seen, when the listing is still at that generation: the
// statement tests the generation itself, in the snapshot it reads the page
// in, and a page the anchors know is not empty then returns rows. A deep
// page cost what page 0 does plus a read transaction and a statement
// (the generation and the count) beside it, 1.3-4x at 1M files; now it is
// the page's statement alone. done false: the page was not read (no rows
// scanned); the caller reads it in a transaction.
func (l *Lake) anchoredQuick(ctx context.Context, a anchorShape, pos, size int, cols, order string,
	scan func(*sql.Rows) error) (done bool, err error) {
	// Either direction's anchors know the listing's count at their generation.
	last, ok := l.anchors.peek(a.id())
	if back, bok := l.anchors.peek(a.reversed().id()); bok && (!ok || back.gen > last.gen) {
		last, ok = back, true
	}
	if !ok || pos >= last.total {
		return false, nil
	}
	b, p, lim := pageOf(a, pos, size, last.total)
	set, ok := l.anchors.peek(b.id())
	if !ok || set.gen != last.gen {
		return false, nil
	}
	i := set.before(p)
	if i < 0 || p-set.keys[i].pos >= anchorStep {
		return false, nil // a gap to walk first
	}
	q, args := b.pageSQL(cols, order, set.keys[i], p-set.keys[i].pos, lim, set.gen)
	rows, err := l.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return false, nil // the transaction's read reports it
	}
	defer rows.Close()
	for rows.Next() {
		done = true
		if err := scan(rows); err != nil {
			return true, err
		}
	}
	if err := rows.Err(); err != nil {
		return done, err
	}
	return done, nil
}

// pageSQL is the statement of lim rows of the listing from skip rows after
// anchor k: only the listing's index is read to skip them, the page's files
// are looked up once found. gen >= 0 makes it return no row unless the
// snapshot it reads is of that generation.
func (a anchorShape) pageSQL(cols, order string, k anchor, skip, lim int, gen int64) (string, []any) {
	cond, args := "", []any(nil)
	if gen >= 0 {
		cond, args = "(SELECT n FROM list_generation) = ? AND ", []any{gen}
	}
	return `SELECT ` + cols + ` FROM file f WHERE ` + cond + `f.seq IN (SELECT ` + a.seq + ` FROM ` + a.from +
			` WHERE ` + a.where + ` AND ` + a.after() + ` ORDER BY ` + a.order() + ` LIMIT ` + strconv.Itoa(lim) +
			` OFFSET ` + strconv.Itoa(skip) + `) ORDER BY ` + order,
		append(append(args, a.args...), k.key, k.seq)
}

// anchoredPage reads the page in one read transaction, whose snapshot the
// generation, the count, the anchors' repair or walk and the page all see.
// again: the writer's log was ahead of this snapshot (a write committed
// after it began), so the anchors could not be moved to it; a new
// transaction is likely to see the log's generation.
func (l *Lake) anchoredPage(ctx context.Context, a anchorShape, pos, size int, cols, order string, retry bool,
	scan func(*sql.Rows) error) (again bool, err error) {
	tx, err := l.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var gen int64
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT n FROM list_generation), (`+a.count+`)`,
		a.countArgs...).Scan(&gen, &total); err != nil {
		return false, err
	}
	if pos >= total {
		return false, nil // past the last row: an empty page
	}
	a, p, lim := pageOf(a, pos, size, total)
	id := a.id()
	set, ok := l.anchors.peek(id)
	switch {
	case ok && set.gen == gen:
	case ok && set.logAt >= 0 && set.gen < gen:
		moved, ahead := l.moveAnchors(ctx, a, set, gen, total)
		if ahead && retry {
			return true, nil
		}
		if set = moved; set.gen != gen {
			set = l.newAnchors(ctx, gen, total)
		}
	default:
		set = l.newAnchors(ctx, gen, total)
	}
	set, at, err := walkAnchors(ctx, tx, a, set, p, &l.anchors.steps)
	if err != nil {
		return false, err
	}
	l.anchors.put(id, set)
	if at < 0 {
		return false, nil // fewer rows than the count: not in this snapshot
	}
	q, args := a.pageSQL(cols, order, set.keys[at], p-set.keys[at].pos, lim, -1)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return false, err
		}
	}
	return false, rows.Err()
}

// walkAnchors makes sure set has an anchor at most anchorStep-1 rows
// before position p, walking from the last one before it (or the first
// row) and adding one every anchorStep rows, each a seek to the one before
// and a skip of anchorStep index entries; at is its index, -1 when the
// listing has no row at p. The walk covers the gap the page is in: the
// rows from the anchor before it, which are anchorStep, or the rows that
// came into the gap since the anchors were found (anchors_log.go).
func walkAnchors(ctx context.Context, tx *sql.Tx, a anchorShape, set anchorSet, p int, steps *atomic.Int64) (anchorSet, int, error) {
	i := set.before(p)
	if i >= 0 && p-set.keys[i].pos < anchorStep {
		return set, i, nil
	}
	out := set
	out.keys = append([]anchor(nil), set.keys...)
	if i < 0 {
		var k anchor
		err := tx.QueryRowContext(ctx, `SELECT `+a.key+`, `+a.seq+` FROM `+a.from+` WHERE `+a.where+
			` ORDER BY `+a.order()+` LIMIT 1`, a.args...).Scan(&k.key, &k.seq)
		if errors.Is(err, sql.ErrNoRows) {
			return out, -1, nil
		}
		if err != nil {
			return out, -1, err
		}
		i, out.keys = 0, slices.Insert(out.keys, 0, k)
	}
	st, err := tx.PrepareContext(ctx, `SELECT `+a.key+`, `+a.seq+` FROM `+a.from+` WHERE `+a.where+` AND `+a.after()+
		` ORDER BY `+a.order()+` LIMIT 1 OFFSET `+strconv.Itoa(anchorStep))
	if err != nil {
		return out, -1, err
	}
	defer st.Close()
	for p-out.keys[i].pos >= anchorStep {
		last := out.keys[i]
		k := anchor{pos: last.pos + anchorStep}
		err := st.QueryRowContext(ctx, append(append([]any(nil), a.args...), last.key, last.seq)...).Scan(&k.key, &k.seq)
		if errors.Is(err, sql.ErrNoRows) {
			return out, -1, nil
		}
		if err != nil {
			return out, -1, err
		}
		i++
		out.keys = slices.Insert(out.keys, i, k)
		steps.Add(1)
	}
	return out, i, nil
}
