import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { DateInput } from './draftinput.jsx'
import { navigate } from './router.js'
import { myProjects } from './queue.jsx'

// Stats is the per-person statistics page (/stats?from=&to=&project=): for
// each annotator and reviewer, by day, frames and shapes done, active
// editing time, rejection rate, reviews done and comments received and
// resolved, from GET /api/v1/stats/people (docs/team.md "Statistics").
// Columns follow the answer: a figure the server adds shows up under its
// own name. Fetched again every 10 s. With a project chosen, its agreement
// between annotators shows below.
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

// Agreement shows a project's agreement between annotators (GET
// /api/v1/projects/{id}/agreement, docs/team.md "Agreement between
// annotators"): F1 overall and per label, and the kappa of frame classes
// overall and per class (one against the rest), with the review queue's size.
function Agreement({ project }) {
  const [a, setA] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    setA(null)
    api('/projects/' + encodeURIComponent(project) + '/agreement').then((r) => { setA(r); setError(null) }, setError)
  }, [project])
  if (error) return <div class="error" role="alert" data-testid="agreement-error">{error.message}</div>
  if (!a) return null
  if (!a.measuredFrames) return <p class="muted" data-testid="agreement-none">No frame of this project was labelled by two or more annotators yet.</p>
  const labels = [...new Set([...Object.keys(a.byLabel ?? {}), ...Object.keys(a.kappa?.byLabel ?? {})])].sort()
  const num = (v) => (v == null ? '' : v.toFixed(2))
  return (
    <div class="agreement" data-testid="agreement">
      <h3>Agreement between annotators</h3>
      <p>{a.measuredFrames} frames measured · F1 <b data-testid="agreement-f1">{num(a.f1)}</b>
        {a.kappa && <> · {a.kappa.kind === 'cohen' ? "Cohen's" : "Fleiss'"} kappa <b data-testid="agreement-kappa">{num(a.kappa.value)}</b></>}
        {' '}· {a.review.length} to review</p>
      {labels.length > 0 && (
        <table class="table stats-table">
          <thead><tr><th>label</th><th>F1 of shapes</th><th>kappa of the class (one against the rest)</th></tr></thead>
          <tbody>
            {labels.map((l) => (
              <tr data-testid="agreement-label" data-label={l}>
                <td>{l}</td><td data-key="f1">{num(a.byLabel?.[l])}</td><td data-key="kappa">{num(a.kappa?.byLabel?.[l])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

export function Stats({ search, me }) {
  const params = new URLSearchParams(search)
  const today = new Date().toISOString().slice(0, 10)
  const weekAgo = new Date(Date.now() - 6 * 864e5).toISOString().slice(0, 10)
  const from = params.get('from') || weekAgo
  const to = params.get('to') || today
  const project = params.get('project') || ''
  const [rows, setRows] = useState(null)
  const [projects, setProjects] = useState([])
  const [error, setError] = useState(null)
  useEffect(() => { myProjects(me).then(setProjects, () => {}) }, [])
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
        <label>from <DateInput value={from} data-testid="stats-from" onCommit={(v) => set('from', v)} /></label>
        <label>to <DateInput value={to} data-testid="stats-to" onCommit={(v) => set('to', v)} /></label>
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
      {project && <Agreement project={project} />}
    </div>
  )
}
