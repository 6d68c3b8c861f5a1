package lake

import (
	"context"
	"database/sql"
)

// TrackGuard decides, inside a track write's transaction and before
// anything is written, whether the write may go ahead: before is what the
// write replaces as it stands in that transaction (the operation's tracks
// of the numbers written, or all of them for a write of the whole set). An
// error refuses the write and nothing is written; what the guard writes on
// tx (a job marked started) commits with the tracks or not at all. Writes
// are serialised (one writer), so nothing another request commits can
// come between the guard's reads and the tracks' write: a project's rules
// (annotate.Service.TrackEditGuard) hold at the moment of the write, not
// at an earlier check.
type TrackGuard func(ctx context.Context, tx *sql.Tx, before []Track) error

// SetTrackIf is SetTrack when guard allows it.
func (l *Lake) SetTrackIf(ctx context.Context, uniqueName string, source Source, operation string, t Track, guard TrackGuard) (Track, error) {
	tracks := []Track{t}
	err := l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{record: true, guard: guard})
	return tracks[0], err
}

// SetTracksIf is SetTracks when guard allows it.
func (l *Lake) SetTracksIf(ctx context.Context, uniqueName string, source Source, operation string, tracks []Track, guard TrackGuard) error {
	return l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{whole: true, record: true, guard: guard})
}

// ImportTracksIf is ImportTracks when guard allows it.
func (l *Lake) ImportTracksIf(ctx context.Context, uniqueName string, source Source, operation string, tracks []Track, guard TrackGuard) error {
	return l.putTracks(ctx, uniqueName, source, operation, tracks, trackWrite{whole: true, guard: guard})
}

// guardTracks asks guard, when there is one, about the operation's tracks
// of numbers (nil: all) as they are in tx.
func guardTracks(ctx context.Context, tx *sql.Tx, fileSeq int64, operation string, numbers []int, guard TrackGuard) error {
	if guard == nil {
		return nil
	}
	before, err := readTracks(ctx, tx, fileSeq, []string{operation}, numbers)
	if err != nil {
		return err
	}
	return guard(ctx, tx, before)
}
