import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'

// Stats is the per-person statistics page (/stats?from=&to=&project=): for
// each annotator and reviewer, by day, frames and shapes done, active
// editing time, rejection rate, reviews done and comments received and
// resolved, from GET /api/v1/stats/people (docs/team.md "Statistics").
// Columns follow the answer: a figure the server adds shows up under its
// own name. Fetched again every 10 s.
const NAMES = {
  user: 'person', day: 'day', frames: 'frames', shapes: 'shapes added', shapesRemoved: 'shapes removed', changes: 'saves',
  activeSeconds: 'active time', activeMinutes: 'active minutes', jobsReviewed: 'jobs reviewed', jobsRejected: 'jobs rejected',
  rejectionRate: 'rejection rate', reviewsDone: 'reviews done', commentsReceived: 'comments received', commentsResolved: 'comments resolved',
}
const FIRST = ['user', 'day']

// rowsOf finds the answer's list of days, whatever its field is named.
const rowsOf = (r) => (Array.isArray(r) ? r : Object.values(r ?? {}).find(Array.isArray) ?? [])

function cell(k, v) {
  if (v == null) return ''
  if (k === 'rejectionRate' && typeof v === 'number') return (100 * v).toFixed(0) + '%'
  if (k === 'activeSeconds' && typeof v === 'number') return v < 60 ? `${Math.round(v)} s` : `${Math.floor(v / 60)} min ${Math.round(v % 60)} s`
  if (typeof v === 'number') return Number.isInteger(v) ? v : v.toFixed(2)
  return String(v)
}

export function Stats({ search }) {
  const params = new URLSearchParams(search)
  const today = new Date().toISOString().slice(0, 10)
  const weekAgo = new Date(Date.now() - 6 * 864e5).toISOString().slice(0, 10)
  const from = params.get('from') || weekAgo
  const to = params.get('to') || today
  const project = params.get('project') || ''
  const [rows, setRows] = useState(null)
  const [projects, setProjects] = useState([])
  const [error, setError] = useState(null)
  useEffect(() => { api('/projects?' + qs({ pageSize: 1000 })).then((r) => setProjects(r.projectList), () => {}) }, [])
  useEffect(() => {
    // to is a day shown whole: the range asked ends the next midnight (UTC).
    const end = new Date(Date.parse(to + 'T00:00:00Z') + 864e5).toISOString()
    const load = () => api('/stats/people?' + qs({ from: from + 'T00:00:00Z', to: end, project }))
      .then((r) => { setRows(rowsOf(r)); setError(null) }, setError)
    load()
    const t = setInterval(load, 10000)
    return () => clearInterval(t)
  }, [from, to, project])
  const set = (k, v) => {
    const p = new URLSearchParams(search)
    if (v) p.set(k, v)
    else p.delete(k)
    navigate('/stats?' + p.toString(), { replace: true })
  }
  const cols = rows ? [...FIRST, ...[...new Set(rows.flatMap(Object.keys))].filter((k) => !FIRST.includes(k) && typeof rows.find((r) => r[k] != null)?.[k] !== 'object')] : []
  return (
    <div class="page people-stats" data-testid="stats">
      <h2>Statistics by person and day</h2>
      <form class="inline-form" onSubmit={(e) => e.preventDefault()}>
        <label>from <input type="date" value={from} data-testid="stats-from" onChange={(e) => set('from', e.currentTarget.value)} /></label>
        <label>to <input type="date" value={to} data-testid="stats-to" onChange={(e) => set('to', e.currentTarget.value)} /></label>
        <label>project <select value={project} data-testid="stats-project" onChange={(e) => set('project', e.currentTarget.value)}>
          <option value="">all</option>
          {projects.map((p) => <option value={p.projectId}>{p.projectName}</option>)}
        </select></label>
        <span class="muted">days in UTC · active time counts the time between a person's saves, gaps over 5 minutes left out</span>
      </form>
      {error && <div class="error" role="alert" data-testid="stats-error">{error.message}</div>}
      {rows && rows.length === 0 && <p class="muted" data-testid="stats-empty">Nobody did anything in these days.</p>}
      {rows && rows.length > 0 && (
        <table class="table stats-table">
          <thead><tr>{cols.map((k) => <th>{NAMES[k] ?? k}</th>)}</tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr data-testid="stats-row" data-user={r.user ?? r.who} data-day={r.day}>
                {cols.map((k) => <td data-key={k} data-value={r[k] ?? ''}>{cell(k, r[k])}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
