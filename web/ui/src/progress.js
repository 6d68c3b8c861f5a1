// progressOf is what a job's progress reads: its percent and count, drawn
// from one source so they never disagree. 100% only for a completed job or
// done = total; a completed job whose counters stopped short (older servers
// counted a selection's first pick or total apart) shows how many it did,
// not a pair that reads unfinished ("100% 5/6").
export function progressOf(j) {
  const counted = j.total > 0
  if (j.status === 'completed') return { pct: 100, count: !counted ? '' : j.done === j.total ? `${j.done}/${j.total}` : `${j.done} done` }
  if (!counted) return { pct: Math.min(j.progress ?? 0, 99), count: '' }
  const pct = j.done >= j.total ? 100 : Math.min(99, Math.floor((100 * j.done) / j.total))
  return { pct, count: `${j.done}/${j.total}` }
}
