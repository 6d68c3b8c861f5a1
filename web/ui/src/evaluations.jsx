import { useEffect, useState } from 'preact/hooks'
import { api, fn } from './api.js'
import { Field, JobWatch, Link, evalPath } from './evalkit.jsx'
import { navigate } from './router.js'
import { useFetch } from './usefetch.js'
import { TrackMetrics } from './trackmetrics.jsx'

// Evaluations lists the stored evaluations (list_evaluations), newest
// first, polled while one runs; two ticked open the compare page. A write
// key starts a new one from the form, whose job row shows its progress.
export function Evaluations({ me }) {
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  const [tick, setTick] = useState(0)
  const [picked, setPicked] = useState([])
  useEffect(() => {
    let stop = false
    let timer
    const load = () => fn('list_evaluations', {}).then((r) => {
      if (stop) return
      setList(r.evaluations)
      if (r.evaluations.some((e) => e.status === 'running')) timer = setTimeout(load, 1000)
    }, (e) => !stop && setError(e))
    load()
    return () => { stop = true; clearTimeout(timer) }
  }, [tick])
  const pick = (key) => setPicked((p) => (p.includes(key) ? p.filter((k) => k !== key) : [...p.slice(-1), key]))

  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!list) return <div class="loading-page">Loading…</div>
  return (
    <div class="page eval-page">
      {me.role !== 'read' && <NewEvaluation me={me} onStarted={() => setTick((t) => t + 1)} />}
      <h2>
        Evaluations <span class="muted">({list.length})</span>{' '}
        <button class="ghost" data-testid="eval-compare" disabled={picked.length !== 2}
          onClick={() => navigate('/evaluations/compare?' + new URLSearchParams({ a: picked[0], b: picked[1] }))}>
          Compare {picked.length === 2 ? picked.join(' and ') : '(tick two)'}
        </button>
      </h2>
      <table class="table">
        <thead><tr><th /><th>key</th><th>model run</th><th>IoU</th><th>over</th><th>status</th><th>created</th><th>job</th></tr></thead>
        <tbody>
          {list.map((e) => (
            <tr data-testid="eval-row" data-key={e.key} data-status={e.status}>
              <td><input type="checkbox" data-testid="eval-pick" checked={picked.includes(e.key)} onChange={() => pick(e.key)} /></td>
              <td><Link to={evalPath(e.key)}>{e.key}</Link></td>
              <td class="muted">{e.params.pred_run_id}</td>
              <td>{e.params.iou}</td>
              <td class="muted">{over(e.params)}</td>
              <td><span class={'status ' + e.status}>{e.status}</span>{e.error && <span class="error" title={e.error}> ⚠</span>}</td>
              <td class="muted">{new Date(e.createdAt).toLocaleString()}</td>
              <td><Link to={'/jobs/' + e.jobId}>{e.jobId}</Link></td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.length === 0 && <p class="muted">No evaluations yet.</p>}
      <TrackMetrics />
    </div>
  )
}

// over says which files an evaluation covered.
export function over(p) {
  const parts = []
  if (p.version_id) parts.push(`version ${p.version_id}${p.split ? ` (${p.split})` : ''}`)
  if (p.collection_id) parts.push(`collection ${p.collection_id}`)
  if (p.query) parts.push(p.query)
  if (p.gt_operations?.length) parts.push('truth: ' + p.gt_operations.join(', '))
  return parts.join(' · ') || 'all images'
}

// NewEvaluation is the form of evaluate_detections: the model run (runs that
// wrote boxes), the key, the IoU and confidence, and the files: the lake's
// images narrowed by a query, a collection, or a dataset version's split.
function NewEvaluation({ me, onStarted }) {
  const runs = useFetch(() => api('/runs?pageSize=100').then((r) => r.runList.filter((x) => x.counts?.boxes > 0)), [])
  const groups = useFetch(() => api('/datasets'), [])
  const [from, setFrom] = useState('lake')
  const [job, setJob] = useState(null)
  const [error, setError] = useState(null)
  const [done, setDone] = useState(null)
  const submit = async (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const p = { pred_run_id: f.run.value, key: f.key.value.trim(), iou: +f.iou.value || undefined,
      confidence: +f.confidence.value || undefined, query: f.query.value.trim() || undefined,
      gt_operations: f.gt.value.trim() ? f.gt.value.split(',').map((s) => s.trim()) : undefined }
    if (from === 'collection') p.collection_id = f.collection.value.trim()
    if (from === 'version') Object.assign(p, { version_id: f.version.value, split: f.split.value || undefined })
    setError(null)
    setDone(null)
    try {
      const r = await fn('evaluate_detections', p)
      setJob({ id: r.jobId, key: p.key })
      onStarted()
    } catch (err) {
      setError(err)
    }
  }
  const versions = (groups ?? []).flatMap((g) => g.versionList.filter((v) => v.status === 'ready').map((v) => ({ ...v, name: g.name })))
  return (
    <section class="eval-form-wrap">
      <h2>New evaluation</h2>
      <form class="eval-form" data-testid="eval-form" onSubmit={submit}>
        <Field label="model run">
          <select name="run" data-testid="eval-run" required>
            {(runs ?? []).map((r) => <option value={r.runId}>{r.modelName} · {r.runId} ({r.counts.boxes} boxes)</option>)}
          </select>
        </Field>
        <Field label="key" hint="letters, digits, _ or -"><input name="key" data-testid="eval-key" required pattern="[A-Za-z0-9_\-]{1,64}" /></Field>
        <Field label="IoU"><input name="iou" data-testid="eval-iou" type="number" min="0.05" max="1" step="0.05" defaultValue="0.5" /></Field>
        <Field label="min confidence"><input name="confidence" type="number" min="0" max="1" step="0.05" defaultValue="0" /></Field>
        <Field label="truth" hint="project ids, comma-separated; empty: every human box"><input name="gt" data-testid="eval-gt" /></Field>
        <Field label="files">
          <select data-testid="eval-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
            <option value="lake">the lake's images</option>
            <option value="collection">a collection</option>
            <option value="version">a dataset version</option>
          </select>
        </Field>
        {from === 'collection' && <Field label="collection id"><input name="collection" data-testid="eval-collection" required /></Field>}
        {from === 'version' && (
          <>
            <Field label="version">
              <select name="version" data-testid="eval-version" required>
                {versions.map((v) => <option value={v.versionId}>{v.name} {v.versionNo}</option>)}
              </select>
            </Field>
            <Field label="split">
              <select name="split" data-testid="eval-split">
                <option value="">all</option><option>train</option><option>validation</option><option>test</option>
              </select>
            </Field>
          </>
        )}
        <Field label="query" hint="narrows the files"><input name="query" data-testid="eval-query" class="eval-query" /></Field>
        <button type="submit" data-testid="eval-start">Evaluate</button>
      </form>
      {error && <p class="error" data-testid="eval-error">{error.message}</p>}
      {job && <JobWatch id={job.id} me={me} onEnd={(j) => { setDone(j.status === 'completed' && job.key); onStarted() }} />}
      {done && <p><Link to={evalPath(done)} data-testid="eval-open">Open evaluation {done}</Link></p>}
    </section>
  )
}
