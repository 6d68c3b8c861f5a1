import { useEffect, useRef, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'
import { isAdmin, isCurator, teamOnly, when } from './team.js'

// jobPath is a labelling job's workspace.
export const jobPath = (taskId, number) => `/tasks/${encodeURIComponent(taskId)}/jobs/${number}`

// STATE_NAMES are a job's states as the page says them.
export const STATE_NAMES = { annotation: 'annotating', submitted: 'submitted', in_review: 'in review', accepted: 'accepted', rejected: 'rejected' }

// usePoll runs load now and every ms while the page is open, and again
// when the tab comes back to the front: the queue changes as others work.
export function usePoll(load, ms, deps) {
  const latest = useRef(load)
  latest.current = load
  useEffect(() => {
    latest.current()
    const t = setInterval(() => document.visibilityState === 'visible' && latest.current(), ms)
    const vis = () => document.visibilityState === 'visible' && latest.current()
    document.addEventListener('visibilitychange', vis)
    return () => { clearInterval(t); document.removeEventListener('visibilitychange', vis) }
  }, deps)
}

// myProjects are the projects a person may open: an annotator's or
// reviewer's memberships (GET /projects is refused to their roles), everyone
// else's the projects listed.
export async function myProjects(me) {
  if (!teamOnly(me)) return (await api('/projects?' + qs({ pageSize: 1000 }))).projectList
  const s = await api('/session')
  const ids = [...new Set((s.memberships ?? []).map((m) => m.projectId))]
  return (await Promise.all(ids.map((id) => api('/projects/' + encodeURIComponent(id)).catch(() => null)))).filter(Boolean)
}

// pullable are the projects a person takes jobs of: an annotator's
// memberships (GET /api/v1/session; annotators may not list the lake's
// projects), everyone else's the projects listed.
async function pullable(me) {
  if (me.role === 'annotator' || me.role === 'reviewer') {
    const s = await api('/session')
    const ids = [...new Set((s.memberships ?? []).filter((m) => m.role === 'annotator').map((m) => m.projectId))]
    return (await Promise.all(ids.map((id) => api('/projects/' + encodeURIComponent(id)).catch(() => null)))).filter(Boolean)
  }
  return (await api('/projects?' + qs({ pageSize: 1000 }))).projectList
}

// Queue is a person's home (/queue, where annotators and reviewers land):
// their jobs from GET /api/v1/queue, what to do next first (work sent back,
// reviews under way, new work, jobs to review), and "Next job" per project,
// which hands out the project's next unassigned job (pull mode). Enter
// opens the first job; n takes the next job of the first project.
export function Queue({ me }) {
  const [jobs, setJobs] = useState(null)
  const [projects, setProjects] = useState([])
  const [error, setError] = useState(null)
  const [note, setNote] = useState('')
  usePoll(() => api('/queue').then((r) => { setJobs(r.jobs); setError(null) }, setError), 3000, [])
  useEffect(() => { pullable(me).then(setProjects, () => {}) }, [])
  const next = (p) => api('/projects/' + encodeURIComponent(p.projectId) + '/jobs/next', { method: 'POST' })
    .then((j) => navigate(jobPath(j.taskId, j.number)), (e) => setNote(`${p.projectName}: ${e.message}`))
  useEffect(() => {
    const key = (e) => {
      if (/INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName) || e.ctrlKey || e.metaKey) return
      if (e.key === 'Enter' && jobs?.length && document.activeElement === document.body) navigate(jobPath(jobs[0].taskId, jobs[0].number))
      else if (e.key === 'n' && projects.length) next(projects[0])
      else return
      e.preventDefault()
    }
    addEventListener('keydown', key)
    return () => removeEventListener('keydown', key)
  }, [jobs, projects])
  if (error && !jobs) return <div class="error" role="alert">{error.message}</div>
  if (!jobs) return <div class="loading-page">Loading…</div>
  return (
    <div class="page queue" data-testid="queue">
      <h2>{me.name ? `${me.name}'s queue` : 'My queue'} <span class="muted">({jobs.length} {jobs.length === 1 ? 'job' : 'jobs'})</span></h2>
      <div class="next-jobs">
        {projects.map((p) => (
          <button data-testid="next-job" data-project-id={p.projectId} onClick={() => next(p)}
            title="take the next unassigned job of this project">Next job in {p.projectName}</button>
        ))}
        <span class="muted keys">Enter opens the first job{projects.length > 0 && ' · n takes the next job'}</span>
      </div>
      {note && <p class="error" data-testid="queue-note" role="status">{note}</p>}
      {jobs.length === 0 ? <p class="muted" data-testid="queue-empty">
        {/* only annotators pull jobs: a reviewer's work comes when an annotator submits */}
        Nothing waits for you. {projects.length > 0 ? 'Take the next job of a project above.' : me.role === 'reviewer' ? 'Jobs come here when their annotators submit them.' : ''}
      </p> : (
        <table class="table">
          <thead><tr><th>to do</th><th>project</th><th>task</th><th>job</th><th>state</th><th>frames</th><th>comments</th><th>updated</th></tr></thead>
          <tbody>
            {jobs.map((j) => (
              <tr data-testid="queue-row" data-task-id={j.taskId} data-number={j.number} data-action={j.action} data-state={j.state}>
                <td><a href={jobPath(j.taskId, j.number)} data-testid="queue-open" class={'action action-' + j.action.replace(' ', '-')}
                  onClick={(e) => { e.preventDefault(); navigate(jobPath(j.taskId, j.number)) }}>{j.action}</a></td>
                <td>{j.projectName}</td>
                <td>{j.taskName}</td>
                <td>#{j.number}{j.copy > 0 && <span class="muted"> (copy {j.copy})</span>}</td>
                <td>{STATE_NAMES[j.state] ?? j.state}</td>
                <td>{j.annotatedFrames} / {j.frameCount}</td>
                <td>{j.openComments > 0 ? <strong>{j.openComments} open</strong> : <span class="muted">{j.comments}</span>}</td>
                <td class="muted">{when(j.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

// TaskJobs is a task's jobs (/tasks/<id>/jobs): who holds what, in which
// state, with how much done. Curators cut the task into jobs and reassign
// a job's annotator or reviewer in place (PATCH .../jobs/<n>).
export function TaskJobs({ id, me }) {
  const [jobs, setJobs] = useState(null)
  const [task, setTask] = useState(null)
  const [people, setPeople] = useState([])
  const [error, setError] = useState(null)
  const [note, setNote] = useState('')
  const base = '/tasks/' + encodeURIComponent(id) + '/jobs'
  const load = () => api(base).then((r) => { setJobs(r.jobs); setError(null) }, setError)
  usePoll(load, 3000, [id])
  useEffect(() => {
    api('/tasks/' + encodeURIComponent(id)).then(setTask, () => {})
    if (isAdmin(me)) api('/users').then((r) => setPeople(r.users.filter((u) => !u.disabledAt).map((u) => u.name)), () => {})
  }, [id])
  const curate = isCurator(me)
  const assign = (j, field, name) => api(base + '/' + j.number, { method: 'PATCH', body: { [field]: name || null } })
    .then((nj) => { setJobs((js) => js.map((x) => (x.number === j.number && x.copy === j.copy ? nj : x))); setNote(`job ${j.number}: ${field} ${name || 'nobody'}`) },
      (e) => setNote(e.message))
  if (error && !jobs) return <div class="error" role="alert">{error.message}</div>
  if (!jobs) return <div class="loading-page">Loading…</div>
  return (
    <div class="page task-jobs" data-testid="task-jobs">
      <h2>
        <HomeCrumb me={me} /> / {task?.taskName ?? id} · jobs
        <span class="muted"> ({jobs.length})</span>
      </h2>
      {curate && <CutJobs base={base} hasJobs={jobs.length > 0} people={people} onCut={(js) => { setJobs(js); setNote(`${js.length} jobs`) }} />}
      <p class="muted" role="status" data-testid="jobs-note">{note}</p>
      <datalist id="people">{people.map((p) => <option value={p} />)}</datalist>
      {jobs.length === 0 ? <p class="muted">This task is not cut into jobs: its frames are edited in the task's workspace.</p> : (
        <table class="table">
          <thead><tr><th>job</th><th>state</th><th>annotator</th><th>reviewer</th><th>annotated</th><th>accepted</th><th>rejected</th><th>comments</th><th>updated</th></tr></thead>
          <tbody>
            {jobs.map((j) => (
              <tr data-testid="label-job-row" data-number={j.number} data-copy={j.copy} data-state={j.state} data-assignee={j.assignee ?? ''}>
                <td><a href={jobPath(id, j.number)} onClick={(e) => { e.preventDefault(); navigate(jobPath(id, j.number)) }}>#{j.number}</a>
                  {j.copy > 0 && <span class="muted"> copy {j.copy}</span>}</td>
                <td>{STATE_NAMES[j.state] ?? j.state}</td>
                <td>{curate ? <Holder value={j.assignee} onSet={(n) => assign(j, 'assignee', n)} testid="job-assignee" /> : j.assignee ?? <span class="muted">nobody</span>}</td>
                <td>{curate ? <Holder value={j.reviewer} onSet={(n) => assign(j, 'reviewer', n)} testid="job-reviewer" /> : j.reviewer ?? <span class="muted">any</span>}</td>
                <td>{j.annotatedFrames} / {j.frameCount}</td>
                <td>{j.acceptedFrames}</td>
                <td>{j.rejectedFrames}</td>
                <td>{j.openComments} open / {j.comments}</td>
                <td class="muted">{when(j.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

// Holder is a job's annotator or reviewer, changed by typing a name and
// Enter (or leaving the field); an empty name unassigns.
function Holder({ value, onSet, testid }) {
  const [v, setV] = useState(value ?? '')
  useEffect(() => setV(value ?? ''), [value])
  const send = () => { if ((v.trim() || null) !== (value ?? null)) onSet(v.trim()) }
  return <input list="people" value={v} size="12" placeholder="nobody" data-testid={testid} onInput={(e) => setV(e.currentTarget.value)}
    onKeyDown={(e) => e.key === 'Enter' && send()} onBlur={send} />
}

function CutJobs({ base, hasJobs, people, onCut }) {
  const [error, setError] = useState(null)
  const submit = (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const assignees = f.assignees.value.split(',').map((s) => s.trim()).filter(Boolean)
    const body = { size: +f.size.value, assignees, replace: hasJobs }
    if (+f.share.value > 0) body.overlap = { share: +f.share.value / 100, annotators: +f.annotators.value }
    api(base, { method: 'POST', body }).then((r) => { setError(null); onCut(r.jobs) }, setError)
  }
  return (
    <form class="inline-form" onSubmit={submit} data-testid="jobs-form">
      <label>frames a job <input name="size" type="number" min="1" defaultValue="10" size="5" data-testid="jobs-size" /></label>
      <label>annotators <input name="assignees" list="people" placeholder="names, comma separated (none: pulled)" size="32" data-testid="jobs-assignees" defaultValue="" /></label>
      <label>given twice <input name="share" type="number" min="0" max="100" defaultValue="0" size="4" />%</label>
      <label>to <input name="annotators" type="number" min="2" max="5" defaultValue="2" size="3" /> people</label>
      <button type="submit" data-testid="jobs-create">{hasJobs ? 'Cut again' : 'Cut into jobs'}</button>
      {error && <span class="error" data-testid="jobs-error">{error.message}</span>}
      {people.length > 0 && <span class="muted">people: {people.join(', ')}</span>}
    </form>
  )
}

// HomeCrumb is the first step of a task page's breadcrumb: the projects
// for those who may list them, an annotator's or reviewer's queue for
// them (GET /projects is refused to their roles: no link a role cannot follow).
export function HomeCrumb({ me }) {
  const [to, text] = teamOnly(me) ? ['/queue', 'My queue'] : ['/projects', 'Projects']
  return <a href={to} data-testid="home-crumb" onClick={(e) => { e.preventDefault(); navigate(to) }}>{text}</a>
}
