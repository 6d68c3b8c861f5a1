import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'

const live = (s) => s === 'queued' || s === 'running'

function Link({ to, children, ...rest }) {
  return <a href={to} onClick={(e) => { e.preventDefault(); navigate(to) }} {...rest}>{children}</a>
}

// Models lists the registered models (GET /api/v1/models) with the dimension
// of the vectors stored under their name (GET /api/v1/embedding-models), and
// the analysis runs (GET /api/v1/runs), all or one model's (/models?model=..),
// newest first; a running run's files done come from its job and refresh
// every second.
export function Models({ search }) {
  const only = new URLSearchParams(search).get('model') || ''
  const [models, setModels] = useState(null)
  const [runs, setRuns] = useState(null)
  const [jobs, setJobs] = useState({})
  const [error, setError] = useState(null)

  useEffect(() => {
    Promise.all([api('/models'), api('/embedding-models')]).then(([m, e]) => {
      const dims = new Map(e.modelList.map((v) => [v.modelName, v]))
      const rows = m.modelList.map((x) => ({ ...x, vectors: dims.get(x.modelName) }))
      // Vectors written by clients under a name no registered model has.
      for (const v of e.modelList) {
        if (!m.modelList.some((x) => x.modelName === v.modelName)) {
          rows.push({ modelName: v.modelName, application: 'embedding', vectorsOnly: true, createdAt: v.createdAt, vectors: v })
        }
      }
      setModels(rows)
    }, setError)
  }, [])

  useEffect(() => {
    let stop = false
    let timer
    const load = async () => {
      try {
        const r = await api('/runs?' + qs({ modelName: only, pageSize: 100 }))
        const running = r.runList.filter((x) => live(x.status))
        const js = await Promise.all(running.map((x) => api('/jobs/' + encodeURIComponent(x.jobId)).catch(() => null)))
        if (stop) return
        setRuns(r)
        setJobs(Object.fromEntries(js.filter(Boolean).map((j) => [j.id, j])))
        if (running.length) timer = setTimeout(load, 1000)
      } catch (e) {
        if (!stop) setError(e)
      }
    }
    load()
    return () => { stop = true; clearTimeout(timer) }
  }, [only])

  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!models || !runs) return <div class="loading-page">Loading…</div>
  return (
    <div class="page models-page">
      <h2>Models <span class="muted">({models.length})</span></h2>
      <table class="table">
        <thead><tr><th>model</th><th>application</th><th>dimension</th><th>default</th><th>registered</th><th /></tr></thead>
        <tbody>
          {models.map((m) => (
            <tr data-testid="model-row" data-model-name={m.modelName} class={m.modelName === only ? 'on' : ''}>
              <td><Link to={'/models?' + qs({ model: m.modelName })}>{m.modelName}</Link></td>
              <td>{m.application}{m.vectorsOnly && <span class="muted"> (vectors only)</span>}{m.labels?.length > 0 && <span class="muted"> · {m.labels.length} labels</span>}</td>
              <td>{m.vectors ? `${m.vectors.dimension} (${m.vectors.metric})` : <span class="muted">–</span>}</td>
              <td>{m.systemDefault ? '✓' : ''}</td>
              <td class="muted">{new Date(m.createdAt).toLocaleString()}</td>
              <td>{m.vectors && <Link to={'/map?' + qs({ model: m.modelName })} data-testid="model-map">map</Link>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2 class="runs-title">
        Runs <span class="muted">({runs.runCount}{only && ` of ${only}`})</span>
        {only && <> <Link to="/models">all models</Link></>}
      </h2>
      <table class="table">
        <thead><tr><th>run</th><th>model</th><th>application</th><th>status</th><th>files done</th><th>wrote</th><th>started</th><th>job</th></tr></thead>
        <tbody>{runs.runList.map((r) => <RunRow run={r} job={jobs[r.jobId]} />)}</tbody>
      </table>
      {runs.runCount === 0 && <p class="muted">No runs yet.</p>}
    </div>
  )
}

function RunRow({ run: r, job }) {
  const c = r.counts
  // A running run's count is its job's progress; a finished one's is its own.
  const done = job && live(r.status) ? `${job.done} of ${job.total || '?'}` : String(c.items)
  const wrote = [c.tags && `${c.tags} tags`, c.boxes && `${c.boxes} boxes`, c.embeddings && `${c.embeddings} vectors`,
    c.skipped && `${c.skipped} skipped`].filter(Boolean).join(', ')
  return (
    <tr data-testid="run-row" data-status={r.status} data-run-id={r.runId}>
      <td class="muted">{r.runId}</td>
      <td>{r.modelName}</td>
      <td>{r.application}</td>
      <td><span class={'status ' + r.status}>{r.status}</span>{r.error && <span class="error" title={r.error}> ⚠</span>}</td>
      <td data-testid="run-done">{done}</td>
      <td class="muted">{wrote || '–'}</td>
      <td class="muted">{new Date(r.createdAt).toLocaleString()}</td>
      <td><Link to={'/jobs/' + r.jobId}>{r.jobId}</Link></td>
    </tr>
  )
}
