package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/framelake/framelake/errs"
)

// ChangeInfo is a change without its shapes: the file, frame and
// operation whose shapes it changed, when, by whom and through what.
func (l *Lake) ChangeInfo(ctx context.Context, changeID string) (Change, error) {
	c := Change{ID: changeID, Removed: []json.RawMessage{}, Added: []json.RawMessage{}}
	var at int64
	err := l.db.Point.QueryRowContext(ctx, `SELECT f.unique_name, c.frame, c.operation, c.at, c.who, c.via
		FROM frame_change c JOIN file f ON f.seq = c.file_seq WHERE c.id = ?`, changeID).Scan(&c.File, &c.Frame,
		&c.Operation, &at, &c.Who, &c.Via)
	if err == sql.ErrNoRows {
		return Change{}, errs.NotFoundf("no change %q", changeID)
	}
	if err != nil {
		return Change{}, fmt.Errorf("history: %w", err)
	}
	c.At = fromMillis(at)
	return c, nil
}

// VersionBoxes is FrameVersion as boxes to write back: each shape of the
// frame (of the change's operation) as it was right after the change.
func (l *Lake) VersionBoxes(ctx context.Context, changeID string) ([]Box, error) {
	shapes, err := l.FrameVersion(ctx, changeID)
	if err != nil {
		return nil, err
	}
	out := make([]Box, len(shapes))
	for i, sh := range shapes {
		if err := json.Unmarshal(sh, &out[i]); err != nil {
			return nil, fmt.Errorf("history: change %s: shape %d: %w", changeID, i, err)
		}
		out[i].Area = nil // measured again as it is stored
	}
	return out, nil
}

// RestoreChange writes the shapes of a change's frame and operation back to
// their state right after it, as a new change by ctx's actor. It is for
// shapes no project's frame holds (an import's): a project's frame has a
// version that moves with every edit, so the annotate service restores
// those.
func (l *Lake) RestoreChange(ctx context.Context, changeID string) error {
	return l.RestoreChangeIf(ctx, changeID, nil)
}

// RestoreCheck decides, inside a restore's transaction and before anything
// is written, whether the restore may go ahead; an error refuses it and
// nothing is written. Writes are serialised (one writer), so a role or job
// changed by another request lands wholly before the check (which sees
// it) or after the restore, never between them; what it writes on tx (a
// job marked started) commits with the restore or not at all.
type RestoreCheck func(ctx context.Context, tx *sql.Tx) error

// RestoreChangeIf is RestoreChange when check (nil: none), asked inside
// the restore's transaction, allows it.
func (l *Lake) RestoreChangeIf(ctx context.Context, changeID string, check RestoreCheck) error {
	c, err := l.ChangeInfo(ctx, changeID)
	if err != nil {
		return err
	}
	f, err := l.File(ctx, c.File)
	if err != nil {
		return err
	}
	if f.Type == Video {
		version, track, err := l.TrackVersion(ctx, c)
		if err != nil {
			return err
		}
		if track {
			if err := l.restoreTrackFrame(ctx, c.File, c.Operation, c.Frame, version, check); err != nil {
				return errs.Prefix(err, "restore")
			}
			return nil
		}
	}
	boxes, err := l.VersionBoxes(ctx, changeID)
	if err != nil {
		return err
	}
	err = l.db.Tx(ctx, func(tx *sql.Tx) error {
		if check != nil {
			if err := check(ctx, tx); err != nil {
				return err
			}
		}
		return ReplaceBoxes(ctx, tx, f.seq, Human, c.Operation, c.Frame, boxes)
	})
	if err != nil {
		return errs.Prefix(err, "restore")
	}
	return nil
}

// LatestChange is the newest change, with its shapes, of a file's frame of
// an operation; ok is false when it has none.
func (l *Lake) LatestChange(ctx context.Context, uniqueName string, frame int, operation string) (c Change, ok bool, err error) {
	ch, err := l.History(ctx, HistoryQuery{UniqueName: uniqueName, Frame: &frame, Operations: []string{operation}, Limit: 1})
	if err != nil || len(ch) == 0 {
		return Change{}, false, err
	}
	return ch[0], true, nil
}

// TrackVersion is the shapes of change c's frame right after it, and
// whether they are a video's track keyframes (track_history.go): when the
// version or the frame's latest holds one.
func (l *Lake) TrackVersion(ctx context.Context, c Change) ([]json.RawMessage, bool, error) {
	version, err := l.FrameVersion(ctx, c.ID)
	if err != nil || isTrackVersion(version) {
		return version, err == nil, err
	}
	latest, ok, err := l.LatestChange(ctx, c.File, c.Frame, c.Operation)
	if err != nil || !ok {
		return version, false, err
	}
	now, err := l.FrameVersion(ctx, latest.ID)
	return version, err == nil && isTrackVersion(now), err
}
