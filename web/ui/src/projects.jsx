import { useEffect, useState } from 'preact/hooks'
import { api, fn, qs } from './api.js'
import { currentList } from './lake.js'
import { navigate } from './router.js'
import { Members } from './members.jsx'

const STATUS = ['not started', 'in progress', 'completed']

// Projects lists the annotation projects with their labels and tasks
// (status and progress); a write key creates projects and tasks. A task's
// frames are lake images: named one per line, the images a query selects
// (the grid's current query by default) or a collection's.
export function Projects({ me }) {
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    api('/projects?' + qs({ pageSize: 1000 })).then(setList, setError)
  }, [tick])
  const reload = () => setTick((t) => t + 1)
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!list) return <div class="loading-page">Loading…</div>
  const canWrite = me.role !== 'read'
  return (
    <div class="page projects">
      <h2>Projects <span class="muted">({list.projectCount})</span></h2>
      {canWrite && <NewProject onCreated={reload} />}
      {list.projectList.map((p) => <Project p={p} canWrite={canWrite} onChanged={reload} />)}
      {list.projectCount === 0 && <p class="muted">No projects yet.</p>}
    </div>
  )
}

function Project({ p, canWrite, onChanged }) {
  const [tasks, setTasks] = useState(null)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    api('/tasks?' + qs({ projectId: p.projectId, pageSize: 1000 })).then((r) => setTasks(r.taskList), () => setTasks([]))
  }, [p.projectId, tick])
  return (
    <section class="project" data-testid="project-row" data-project-id={p.projectId} data-name={p.projectName}>
      <h3>{p.projectName} <span class="muted">{p.contentType === 1 ? 'video' : 'image'} · {p.taskCount} tasks · {p.progress}% annotated</span></h3>
      <div class="tags">{p.labels.map((l, i) => <span class="tag" title={l.labelDescription}>{i < 9 && <kbd>{i + 1}</kbd>} {l.labelName}</span>)}</div>
      <table class="table">
        <thead><tr><th>task</th><th>status</th><th>progress</th><th>frames</th><th>updated</th><th /></tr></thead>
        <tbody>
          {(tasks ?? []).map((t) => (
            <tr data-testid="task-row" data-task-id={t.id} data-status={t.status}>
              <td><a href={'/tasks/' + t.id} onClick={(e) => { e.preventDefault(); navigate('/tasks/' + t.id) }}>{t.taskName}</a></td>
              <td>{STATUS[t.status]}</td>
              <td><progress max="100" value={t.progress} /> {t.completedFrames} / {t.frameCount}</td>
              <td>{t.frameCount}</td>
              <td class="muted">{new Date(t.updatedAt).toLocaleString()}</td>
              <td><a href={'/review?' + qs({ taskId: t.id, label: p.labels[0]?.labelName })} data-testid="task-review"
                onClick={(e) => { e.preventDefault(); navigate(e.currentTarget.getAttribute('href')) }}>review boxes</a>
                {' · '}<a href={'/tasks/' + t.id + '/jobs'} data-testid="task-jobs-link"
                onClick={(e) => { e.preventDefault(); navigate('/tasks/' + t.id + '/jobs') }}>jobs</a></td>
            </tr>
          ))}
        </tbody>
      </table>
      {canWrite && <Members projectId={p.projectId} />}
      {canWrite && <NewTask projectId={p.projectId} onCreated={() => { setTick((t) => t + 1); onChanged() }} />}
    </section>
  )
}

function NewProject({ onCreated }) {
  const [error, setError] = useState(null)
  const submit = (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const labels = f.labels.value.split(',').map((s) => s.trim()).filter(Boolean).map((labelName) => ({ labelName, labelDescription: '' }))
    api('/projects', { method: 'POST', body: { projectName: f.name.value.trim(), contentType: +f.type.value, labels } })
      .then(() => { e.target.reset(); setError(null); onCreated() }, setError)
  }
  return (
    <form class="inline-form" onSubmit={submit} data-testid="project-form">
      <input name="name" placeholder="project name" required data-testid="project-name" />
      <select name="type" data-testid="project-type"><option value="2">images</option><option value="1">video frames</option></select>
      <input name="labels" placeholder="labels, comma separated" required data-testid="project-labels" size="40" />
      <button type="submit" data-testid="project-create">Create project</button>
      {error && <span class="error">{error.message}</span>}
    </form>
  )
}

function NewTask({ projectId, onCreated }) {
  const [from, setFrom] = useState('query')
  const [cols, setCols] = useState([])
  const [error, setError] = useState(null)
  useEffect(() => {
    if (from === 'collection' && !cols.length) {
      fn('get_item_list_from_datalake', { item_type: 'image_collection', page_size: 1000 }).then((r) => setCols(r ?? []), () => {})
    }
  }, [from])
  const submit = (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const body = { taskName: f.taskName.value.trim() }
    if (from === 'names') body.uniqueNames = f.names.value.split(/\s*\n\s*/).map((s) => s.trim()).filter(Boolean)
    else if (from === 'query') body.query = f.query.value
    else body.collectionId = f.collection.value
    api('/projects/' + encodeURIComponent(projectId) + '/tasks', { method: 'POST', body })
      .then((t) => { e.target.reset(); setError(null); onCreated(t) }, setError)
  }
  return (
    <form class="inline-form task-form" onSubmit={submit} data-testid="task-form">
      <input name="taskName" placeholder="task name" data-testid="task-name" />
      <select value={from} onChange={(e) => setFrom(e.currentTarget.value)} data-testid="task-from">
        <option value="query">images of a query</option>
        <option value="names">images named</option>
        <option value="collection">a collection</option>
      </select>
      {from === 'query' && <input name="query" size="40" defaultValue={currentList()?.q ?? ''} placeholder='e.g. collection = "batch"' data-testid="task-query" />}
      {from === 'names' && <textarea name="names" rows="3" cols="50" placeholder="one uniqueName per line" data-testid="task-names" />}
      {from === 'collection' && (
        <select name="collection" data-testid="task-collection">{cols.map((c) => <option value={c.id}>{c.name}</option>)}</select>
      )}
      <button type="submit" data-testid="task-create">Create task</button>
      {error && <span class="error" data-testid="task-error">{error.message}</span>}
    </form>
  )
}
