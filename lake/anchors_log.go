package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The writer's change log: how page anchors (anchors.go) follow writes.
//
// Every write that can change an anchored listing moves list_generation,
// and anchors are kept with the generation they were found under. Dropped
// at every write, the first deep page after one walked to its anchor again:
// half a million index entries for page 5,000 of a million files, 0.6-1.2 s,
// on a lake written to all day. The listings of every file of a type, of a
// label and of a collection are index ranges of file, label_file and
// collection_file, so what a write changed in them is the rows it added to
// or removed from those tables (an update is both). TEMP triggers on the
// one writer connection (sqlitedb: every write goes through it) log each
// such row's key into a TEMP table, in the writing transaction: no schema
// change, nothing written to the database file, and a rolled-back write
// takes its rows with it. A deep page whose anchors are of an older
// generation reads the rows logged since them and moves each anchor by the
// rows that came or went before its key (moveAnchors): a few milliseconds
// for a few thousand changes, instead of a walk in proportion to the depth.
//
// The log is trusted only when it provably holds every change between the
// two generations: a trigger logs each move of list_generation too, and
// their number must equal the generations between (a write of another
// process, or from before the triggers existed, breaks it); the log is a
// ring of changeLogRows rows, and rows lost off its end break it; its
// epoch, drawn when the triggers are made, changes if the writer's
// connection is ever opened again without them. A broken log leaves the
// page to walk, as before. A source's listing (files with an annotation of
// the source) is followed by triggers on annotation and file: one more
// probe of annotation_source for every box written or deleted, which
// source_files' triggers make too; an import's insert into new files logs
// each file once at its end instead (deferSourceLog).

// changeLogRows is how many changes the log keeps: a bulk import past it
// leaves the next deep page of each shape to walk once.
const changeLogRows = 100_000

// changeLogDDL makes the log on the writer's connection. Changes are
// (table, group, type, key, seq, +1 or -1); a move of the generation is a
// row of table 'gen'.
var changeLogDDL = slices.Concat([]string{
	`CREATE TEMP TABLE anchor_change (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, grp, kind, k INTEGER, s INTEGER,
		d INTEGER NOT NULL)`,
	`CREATE TEMP TABLE anchor_change_epoch (epoch INTEGER NOT NULL)`,
	// A row here: a bulk insert into new files logs their sources once, at
	// its end (deferSourceLog), not by a probe per annotation.
	`CREATE TEMP TABLE anchor_change_defer (one INTEGER PRIMARY KEY CHECK (one = 1))`,
	// A trigger's INSERT and DELETE name their table unqualified; a TEMP
	// trigger's find temp's first.
	`CREATE TEMP TRIGGER anchor_change_ring AFTER INSERT ON temp.anchor_change BEGIN
		DELETE FROM anchor_change WHERE id = NEW.id - ` + strconv.Itoa(changeLogRows) + `; END`,
	`CREATE TEMP TRIGGER anchor_change_gen AFTER UPDATE ON main.list_generation BEGIN
		INSERT INTO anchor_change (tbl, d) VALUES ('gen', 0); END`},
	changeTriggers("file", "type", "NULL", "updated_at", "seq"),
	changeTriggers("label_file", "label", "type", "updated_at", "file_seq"),
	changeTriggers("collection_file", "collection_seq", "type", "updated_at", "file_seq"),
	sourceTriggers,
)

// sourceTriggers log a source's listing (files of a type with an annotation
// of the source): a file's first annotation of a source adds it, its last
// removes it (the probes read annotation_source, as source_files' triggers
// do), and a file that moves, changes type or goes moves in or leaves the
// listing of each source it has. A file's delete is logged before it, with
// its annotations: theirs by cascade come after the file row is gone and
// log nothing.
var sourceTriggers = []string{
	`CREATE TEMP TRIGGER anchor_change_source_insert AFTER INSERT ON main.annotation
	WHEN NOT EXISTS (SELECT 1 FROM temp.anchor_change_defer)
		AND NOT EXISTS (SELECT 1 FROM main.annotation WHERE source = NEW.source AND file_seq = NEW.file_seq AND seq != NEW.seq)
	BEGIN ` + sourceRow("NEW", "1") + `; END`,
	`CREATE TEMP TRIGGER anchor_change_source_delete AFTER DELETE ON main.annotation
	WHEN NOT EXISTS (SELECT 1 FROM main.annotation WHERE source = OLD.source AND file_seq = OLD.file_seq)
	BEGIN ` + sourceRow("OLD", "-1") + `; END`,
	`CREATE TEMP TRIGGER anchor_change_source_update AFTER UPDATE OF source, file_seq ON main.annotation
	WHEN OLD.source != NEW.source OR OLD.file_seq != NEW.file_seq
	BEGIN ` + sourceRow("OLD", "-1") + `
		AND NOT EXISTS (SELECT 1 FROM main.annotation WHERE source = OLD.source AND file_seq = OLD.file_seq);
	` + sourceRow("NEW", "1") + `
		AND NOT EXISTS (SELECT 1 FROM main.annotation WHERE source = NEW.source AND file_seq = NEW.file_seq AND seq != NEW.seq);
	END`,
	`CREATE TEMP TRIGGER anchor_change_source_file_update AFTER UPDATE OF type, updated_at ON main.file BEGIN
	INSERT INTO anchor_change (tbl, grp, kind, k, s, d) SELECT 'source', src, OLD.type, OLD.updated_at, OLD.seq, -1
		FROM (SELECT DISTINCT source AS src FROM main.annotation WHERE file_seq = OLD.seq);
	INSERT INTO anchor_change (tbl, grp, kind, k, s, d) SELECT 'source', src, NEW.type, NEW.updated_at, NEW.seq, 1
		FROM (SELECT DISTINCT source AS src FROM main.annotation WHERE file_seq = NEW.seq);
	END`,
	`CREATE TEMP TRIGGER anchor_change_source_file_delete BEFORE DELETE ON main.file BEGIN
	INSERT INTO anchor_change (tbl, grp, kind, k, s, d) SELECT 'source', src, OLD.type, OLD.updated_at, OLD.seq, -1
		FROM (SELECT DISTINCT source AS src FROM main.annotation WHERE file_seq = OLD.seq);
	END`,
}

// sourceRow logs annotation rec's file in its source's listing, if the
// file is there (a file's delete takes its annotations after it).
func sourceRow(rec, d string) string {
	return `INSERT INTO anchor_change (tbl, grp, kind, k, s, d) SELECT 'source', ` + rec + `.source, f.type, f.updated_at, f.seq, ` +
		d + ` FROM main.file f WHERE f.seq = ` + rec + `.file_seq`
}

// changeTriggers is the three triggers that log the rows of table t, whose
// listings are grouped by grp and kind ("NULL": none) and sorted by key, seq.
func changeTriggers(t, grp, kind, key, seq string) []string {
	row := func(rec, d string) string {
		k := kind
		if k != "NULL" {
			k = rec + "." + k
		}
		return "('" + t + "', " + rec + "." + grp + ", " + k + ", " + rec + "." + key + ", " + rec + "." + seq + ", " + d + ")"
	}
	ins := "INSERT INTO anchor_change (tbl, grp, kind, k, s, d) VALUES "
	cols := grp + ", " + key + ", " + seq
	if kind != "NULL" {
		cols += ", " + kind
	}
	return []string{
		"CREATE TEMP TRIGGER anchor_change_" + t + "_insert AFTER INSERT ON main." + t + " BEGIN " +
			ins + row("NEW", "1") + "; END",
		"CREATE TEMP TRIGGER anchor_change_" + t + "_delete AFTER DELETE ON main." + t + " BEGIN " +
			ins + row("OLD", "-1") + "; END",
		"CREATE TEMP TRIGGER anchor_change_" + t + "_update AFTER UPDATE OF " + cols + " ON main." + t + " BEGIN " +
			ins + row("OLD", "-1") + ", " + row("NEW", "1") + "; END",
	}
}

// deferSourceLog: an insert of annotations into files that have none
// (InsertImportBoxesTx) logs each file's first annotation of its source once
// at its end (logNewSources), as the insert trigger would have logged it,
// instead of the trigger's probe of annotation_source for every row.
var deferSourceLog = true

// deferSources starts a deferred source log in tx, if the writer keeps a
// change log; on says whether it did.
func deferSources(ctx context.Context, tx *sql.Tx) (on bool, err error) {
	if !deferSourceLog {
		return false, nil
	}
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM temp.sqlite_master WHERE name = 'anchor_change_defer')`).
		Scan(&on); err != nil || !on {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO temp.anchor_change_defer (one) VALUES (1)`)
	return err == nil, err
}

// logNewSources logs, in tx, that files (a JSON array of seqs), which had
// no annotation, have one of source now, and ends the deferral.
func logNewSources(ctx context.Context, tx *sql.Tx, source, files string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO temp.anchor_change (tbl, grp, kind, k, s, d)
		SELECT 'source', ?1, f.type, f.updated_at, f.seq, 1 FROM main.file f WHERE f.seq IN (SELECT value FROM json_each(?2))`,
		source, files)
	if err == nil {
		_, err = tx.ExecContext(ctx, `DELETE FROM temp.anchor_change_defer`)
	}
	return err
}

// changeLogWait bounds how long a page waits for the writer's connection
// to read the log: past it (a long write holds it) the page walks.
const changeLogWait = 50 * time.Millisecond

// changeLogAt places generation gen in the log: the log's epoch and its
// last row, or -1 when the log is missing (it is made then, for the next
// anchors) or the writer has moved past gen.
func (l *Lake) changeLogAt(ctx context.Context, gen int64) (epoch, at int64) {
	ctx, cancel := context.WithTimeout(ctx, changeLogWait)
	defer cancel()
	var n int64
	place := func() error {
		return l.db.W.QueryRowContext(ctx, `SELECT (SELECT n FROM main.list_generation),
		(SELECT epoch FROM temp.anchor_change_epoch), (SELECT coalesce(max(id), 0) FROM temp.anchor_change)`).
			Scan(&n, &epoch, &at)
	}
	err := place()
	if err != nil && strings.Contains(err.Error(), "no such table") {
		l.makeChangeLog(ctx) // the writes before it are in gen, or gen is past
		err = place()
	}
	if err != nil {
		return 0, -1
	}
	if n != gen {
		return 0, -1
	}
	return epoch, at
}

// makeChangeLog makes the log's table and triggers on the writer's
// connection, in one write transaction, the epoch last.
func (l *Lake) makeChangeLog(ctx context.Context) {
	err := l.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, q := range changeLogDDL {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO temp.anchor_change_epoch (epoch) VALUES (?)`, rand.Int64())
		return err
	})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		l.log.Warn("deep pages: no change log; anchors are walked again after each write", "err", err)
	}
}

// newAnchors is an empty anchor set of generation gen, placed in the log.
func (l *Lake) newAnchors(ctx context.Context, gen int64, total int) anchorSet {
	s := anchorSet{gen: gen, total: total, logAt: -1}
	if l.changeLogOn() {
		s.epoch, s.logAt = l.changeLogAt(ctx, gen)
	}
	return s
}

// changeLogOn: the lake follows writes in the log (noChangeLog turns it
// off, for tests of the walk after a write).
func (l *Lake) changeLogOn() bool { return !noChangeLog }

var noChangeLog = false

// moveAnchors moves set, of an older generation, to generation gen, whose
// listing has total rows, by the changes of a's rows logged since set's;
// the returned set is of gen when that worked, of set's generation when
// not. ahead: the writer's log was past gen (gen's snapshot is older than
// the last write), so a newer snapshot may move the set.
func (l *Lake) moveAnchors(ctx context.Context, a anchorShape, set anchorSet, gen int64, total int) (anchorSet, bool) {
	if a.change == "" || !l.changeLogOn() {
		return set, false
	}
	ctx, cancel := context.WithTimeout(ctx, changeLogWait)
	defer cancel()
	var n, epoch, lo, hi, gens int64
	var changes string
	// One statement: one snapshot of the writer's connection, which sees
	// every committed write and no uncommitted one (the writer is between
	// transactions when the pool lends it).
	err := l.db.W.QueryRowContext(ctx, `SELECT (SELECT n FROM main.list_generation),
		(SELECT epoch FROM temp.anchor_change_epoch),
		(SELECT coalesce(min(id), 0) FROM temp.anchor_change), (SELECT coalesce(max(id), 0) FROM temp.anchor_change),
		(SELECT count(*) FROM temp.anchor_change WHERE id > ?1 AND tbl = 'gen'),
		(SELECT json_group_array(json_array(k, s, d)) FROM temp.anchor_change
			WHERE id > ?1 AND tbl = ?2 AND grp = ?3 AND (?4 IS NULL OR kind = ?4) AND k IS NOT NULL)`,
		set.logAt, a.change, a.group, a.kind).Scan(&n, &epoch, &lo, &hi, &gens, &changes)
	switch {
	case err != nil || epoch != set.epoch || hi > set.logAt && lo > set.logAt+1:
		return set, false // no log, another log, or rows lost off the ring
	case n > gen:
		return set, true
	case n != gen || gens != gen-set.gen:
		return set, false // generations moved by writes the log did not see
	}
	var rows [][3]int64
	if err := json.Unmarshal([]byte(changes), &rows); err != nil {
		return set, false
	}
	moved, ok := set.moved(a.desc, rows, total)
	if !ok {
		return set, false
	}
	moved.gen, moved.logAt = gen, hi
	l.anchors.moves.Add(1)
	return moved, false
}

// moved is set with each anchor moved by the rows (key, seq, +1 or -1)
// that came or went strictly before its key in the listing (desc: in
// descending order). The anchors' keys stay; an anchor whose row went
// still finds the row after it at its position. ok false: a position
// came out below 0 or past total, which a complete log cannot give.
func (s anchorSet) moved(desc bool, rows [][3]int64, total int) (anchorSet, bool) {
	// shift[i] is what the rows before anchor i's key add to anchors i...
	shift := make([]int, len(s.keys)+1)
	for _, r := range rows {
		// The first anchor whose key the row's key comes strictly before.
		i, j := 0, len(s.keys)
		for i < j {
			h := (i + j) / 2
			k := s.keys[h]
			before := k.key > r[0] || k.key == r[0] && k.seq > r[1]
			if desc {
				before = k.key < r[0] || k.key == r[0] && k.seq < r[1]
			}
			if before {
				j = h
			} else {
				i = h + 1
			}
		}
		shift[i] += int(r[2])
	}
	out := s
	out.total = total
	out.keys = make([]anchor, len(s.keys))
	d := 0
	for i, k := range s.keys {
		d += shift[i]
		k.pos += d
		if k.pos < 0 || k.pos > total || i > 0 && k.pos < out.keys[i-1].pos {
			return s, false
		}
		out.keys[i] = k
	}
	return out, true
}
