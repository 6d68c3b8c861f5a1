import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'
import { progressOf } from './progress.js'

const live = (j) => j.status === 'queued' || j.status === 'running'

// usePolled fetches path now and every second while live(data) says the
// server is still working; it stops when the page goes away.
export function usePolled(path, isLive) {
  const [data, setData] = useState(null)
  const [error, setError] = useState(null)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let stop = false
    let timer
    const load = () =>
      api(path).then(
        (d) => {
          if (stop) return
          setData(d)
          setError(null)
          if (isLive(d)) timer = setTimeout(load, 1000)
        },
        (e) => !stop && setError(e),
      )
    load()
    return () => {
      stop = true
      clearTimeout(timer)
    }
  }, [path, tick])
  return { data, error, reload: () => setTick((t) => t + 1) }
}

// Jobs lists the newest jobs with live progress; a write key may cancel.
export function Jobs({ me, search }) {
  const page = +new URLSearchParams(search).get('page') || 0
  const { data, error, reload } = usePolled('/jobs?' + qs({ pageIndex: page, pageSize: 50 }), (d) => d.jobList.some(live))
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!data) return <div class="loading-page">Loading…</div>
  return (
    <div class="page">
      <h2>Jobs <span class="muted">({data.jobCount})</span></h2>
      <table class="table">
        <thead><tr><th>job</th><th>type</th><th>status</th><th>progress</th><th>created</th><th /></tr></thead>
        <tbody>{data.jobList.map((j) => <JobRow job={j} me={me} onChange={reload} />)}</tbody>
      </table>
      {data.jobCount === 0 && <p class="muted">No jobs yet.</p>}
    </div>
  )
}

// Job is one job's page: its progress while it runs, then its result or error.
export function Job({ id, me }) {
  const { data: j, error, reload } = usePolled('/jobs/' + encodeURIComponent(id), live)
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!j) return <div class="loading-page">Loading…</div>
  return (
    <div class="page">
      <h2>{j.type} <span class="muted">{j.id}</span></h2>
      <table class="table"><tbody><JobRow job={j} me={me} onChange={reload} /></tbody></table>
      {j.error && <p class="error">{j.error}</p>}
      {j.result != null && <pre class="metadata">{JSON.stringify(j.result, null, 2)}</pre>}
    </div>
  )
}

export function JobRow({ job: j, me, onChange }) {
  const [err, setErr] = useState(null)
  const cancel = () => api(`/jobs/${encodeURIComponent(j.id)}/cancel`, { method: 'POST' }).then(onChange, setErr)
  // A failed job runs again from the inputs it kept (POST /jobs/{id}/retry, write keys); its
  // row is fetched again at once and followed while the job runs (the page polls), without a reload.
  const retry = () => {
    setErr(null)
    api(`/jobs/${encodeURIComponent(j.id)}/retry`, { method: 'POST' }).then(() => onChange?.(), setErr)
  }
  const p = progressOf(j)
  return (
    <tr data-testid="job-row" data-status={j.status} data-job-id={j.id} data-finished={j.finishedAt ?? ''}>
      <td><a href={'/jobs/' + j.id} onClick={(e) => { e.preventDefault(); navigate('/jobs/' + j.id) }}>{j.id}</a></td>
      <td>{j.type}</td>
      <td><span class={'status ' + j.status}>{j.status}</span></td>
      <td data-testid="job-progress" data-pct={p.pct}>
        <progress max="100" value={p.pct} /> {p.pct}%
        {p.count && <span class="muted" data-testid="job-count"> {p.count}</span>}
      </td>
      <td class="muted">{new Date(j.createdAt).toLocaleString()}</td>
      <td>
        {me.role !== 'read' && live(j) && <button class="ghost" data-testid="job-cancel" onClick={cancel}>Cancel</button>}
        {me.role !== 'read' && j.status === 'failed' && <button class="ghost" data-testid="job-retry" onClick={retry}>Retry</button>}
        {err && <span class="error"> {err.message}</span>}
      </td>
    </tr>
  )
}
