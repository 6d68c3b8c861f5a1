// TrackBadge shows a video tile's track count (of every operation), which
// the lake's list answer carries (trackCount), so a page of videos costs no
// request more; a video without tracks shows no badge.
export function TrackBadge({ count }) {
  if (!count) return null
  return <span class="track-badge" data-testid="track-badge" data-count={count} title={`${count} ${count === 1 ? 'track' : 'tracks'}`}>{count} {count === 1 ? 'track' : 'tracks'}</span>
}
