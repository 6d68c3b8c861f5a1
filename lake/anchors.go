package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

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
// only in a read transaction whose snapshot has the same generation, so an
// answer is never stale: after a write, the first deep page of a shape finds
// them again, walking as far as it needs (what OFFSET costs), and the pages
// after it are seeks. Other queries and sorts keep OFFSET.

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

// anchorKey is the sort key of one row.
type anchorKey struct{ key, seq int64 }

// anchorSet is the anchors of one shape found under generation gen: keys[i]
// is row i·anchorStep's; end is set when the walk reached the last row.
type anchorSet struct {
	gen  int64
	keys []anchorKey
	end  bool
}

type anchorCache struct {
	mu sync.Mutex
	m  map[string]anchorSet
}

func (c *anchorCache) get(id string, gen int64) anchorSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[id]; ok && s.gen == gen {
		return s
	}
	return anchorSet{gen: gen}
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
		// The set's index range, or a label's kept count in a lake of one type.
		a.count, a.countArgs = `SELECT count(*) FROM `+a.from+` WHERE `+a.where, a.args
		if q, args, ok := memberCountSQL(sel, a.count, a.args); ok {
			a.count, a.countArgs = q, args
		}
	case c.drive == nil && c.bare:
		a.from, a.where, a.args, a.key, a.seq = "file f", c.where, c.args, "f.updated_at", "f.seq"
		a.count, a.countArgs = typeCountSQL, c.args
	case c.drive == nil && sourceOnly(sel):
		a.from, a.where, a.args, a.key, a.seq = "file f", c.where, c.args, "f.updated_at", "f.seq"
		a.count, a.countArgs, _ = memberCountSQL(sel, "", nil)
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
	// One read transaction: the generation, the anchors' walk and the page
	// see one snapshot.
	tx, err := l.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return true, err
	}
	defer tx.Rollback()
	var gen int64
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT n FROM list_generation), (`+a.count+`)`,
		a.countArgs...).Scan(&gen, &total); err != nil {
		return true, err
	}
	// A page in the second half is the rows before the end, counted from
	// the far end: the listing the other way round, whose anchors the
	// walk reaches in at most half the rows ("go to item 900,000" of a
	// million walks 100,000 once, not 900,000).
	pos, lim := idx*size, size
	if pos >= total {
		return true, nil // past the last row: an empty page
	}
	if 2*pos > total {
		a, pos = a.reversed(), total-pos-size
		if pos < 0 {
			lim, pos = lim+pos, 0
		}
	}
	id := a.id()
	set := l.anchors.get(id, gen)
	at := pos / anchorStep
	if len(set.keys) <= at && !set.end {
		grown, err := extendAnchors(ctx, tx, a, set, at)
		if err != nil {
			return true, err
		}
		l.anchors.put(id, grown)
		set = grown
	}
	if len(set.keys) <= at {
		return true, nil
	}
	k := set.keys[at]
	q := `SELECT ` + cols + ` FROM file f WHERE f.seq IN (SELECT ` + a.seq + ` FROM ` + a.from + ` WHERE ` + a.where +
		` AND ` + a.after() + ` ORDER BY ` + a.order() + ` LIMIT ` + strconv.Itoa(lim) + ` OFFSET ` +
		strconv.Itoa(pos-at*anchorStep) + `) ORDER BY ` + order
	rows, err := tx.QueryContext(ctx, q, append(append([]any(nil), a.args...), k.key, k.seq)...)
	if err != nil {
		return true, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return true, err
		}
	}
	return true, rows.Err()
}

// extendAnchors finds set's anchors up to anchor at (or the end), each a
// seek to the one before it and a skip of anchorStep index entries.
func extendAnchors(ctx context.Context, tx *sql.Tx, a anchorShape, set anchorSet, at int) (anchorSet, error) {
	out := anchorSet{gen: set.gen, keys: append([]anchorKey(nil), set.keys...)}
	if len(out.keys) == 0 {
		var k anchorKey
		err := tx.QueryRowContext(ctx, `SELECT `+a.key+`, `+a.seq+` FROM `+a.from+` WHERE `+a.where+
			` ORDER BY `+a.order()+` LIMIT 1`, a.args...).Scan(&k.key, &k.seq)
		if errors.Is(err, sql.ErrNoRows) {
			out.end = true
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out.keys = append(out.keys, k)
	}
	st, err := tx.PrepareContext(ctx, `SELECT `+a.key+`, `+a.seq+` FROM `+a.from+` WHERE `+a.where+` AND `+a.after()+
		` ORDER BY `+a.order()+` LIMIT 1 OFFSET `+strconv.Itoa(anchorStep))
	if err != nil {
		return out, err
	}
	defer st.Close()
	for len(out.keys) <= at {
		last := out.keys[len(out.keys)-1]
		var k anchorKey
		err := st.QueryRowContext(ctx, append(append([]any(nil), a.args...), last.key, last.seq)...).Scan(&k.key, &k.seq)
		if errors.Is(err, sql.ErrNoRows) {
			out.end = true
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out.keys = append(out.keys, k)
	}
	return out, nil
}
