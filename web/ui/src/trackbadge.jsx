import { useEffect, useState } from 'preact/hooks'
import { loadTracks } from './tracks.js'

// TrackBadge shows a video tile's track count (of every operation). The
// lake's list answer does not carry it (a file's track count has no field
// there yet), so a tile asks its video's tracks once, when drawn, and keeps
// the count while the tab lives; a video without tracks shows no badge.
const counts = new Map()
export function TrackBadge({ name }) {
  const [n, setN] = useState(() => (typeof counts.get(name) === 'number' ? counts.get(name) : null))
  useEffect(() => {
    let live = true
    if (!counts.has(name)) counts.set(name, loadTracks(name).then((ts) => (counts.set(name, ts.length), ts.length), () => (counts.delete(name), 0)))
    Promise.resolve(counts.get(name)).then((v) => live && setN(v))
    return () => { live = false }
  }, [name])
  if (!n) return null
  return <span class="track-badge" data-testid="track-badge" data-count={n} title={`${n} ${n === 1 ? 'track' : 'tracks'}`}>{n} {n === 1 ? 'track' : 'tracks'}</span>
}

// forgetTrackCount drops a video's count after its tracks changed.
export const forgetTrackCount = (name) => counts.delete(name)
