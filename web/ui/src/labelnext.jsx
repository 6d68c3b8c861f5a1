import { useState } from 'preact/hooks'
import { api, fn, qs } from './api.js'
import { Field, JobWatch, Link, gridFor, quote } from './evalkit.jsx'
import { useFetch } from './usefetch.js'

const STRATEGIES = {
  uncertainty: 'the files whose boxes the model is least sure of (a run)',
  diversity: 'k-center greedy: files far from each other in embedding space (a model)',
  uniqueness: 'files farthest from their nearest neighbours (a model)',
  hybrid: 'uncertain and far from those already chosen (a run and a model)',
}

// LabelNext chooses what to label next (select_samples): a budget of files
// from a pool (a query) by a strategy; the chosen files are tagged, and the
// grid shows them as tags = "<tag>", where the selection can become a task.
export function LabelNext({ me, search }) {
  const runs = useFetch(() => api('/runs?pageSize=100').then((r) => r.runList.filter((x) => x.counts?.boxes > 0)), [])
  const models = useFetch(() => api('/embedding-models').then((r) => r.modelList), [])
  const [strategy, setStrategy] = useState('uncertainty')
  const [job, setJob] = useState(null)
  const [result, setResult] = useState(null)
  const [error, setError] = useState(null)
  const needRun = strategy === 'uncertainty' || strategy === 'hybrid'
  const needModel = strategy !== 'uncertainty'
  const submit = async (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const p = { strategy, budget: +f.budget.value, query: f.query.value.trim() || undefined, tag: f.tag.value.trim() || undefined,
      seed: f.seed.value === '' ? undefined : +f.seed.value }
    if (needRun) Object.assign(p, { run_id: f.run.value, measure: f.measure.value })
    if (needModel) p.model_name = f.model.value || undefined
    setError(null)
    setResult(null)
    try {
      setJob((await fn('select_samples', p)).jobId)
    } catch (err) {
      setError(err)
    }
  }
  if (me.role === 'read') return <div class="page"><p class="muted">Choosing files tags them: it needs a write key.</p></div>
  return (
    <div class="page eval-page">
      <h2>Label next</h2>
      <p class="muted">Pick the files most worth labelling from a pool. They get a tag; open them in the grid, select them and make an annotation task.</p>
      <form class="eval-form" data-testid="select-form" onSubmit={submit}>
        <Field label="strategy" hint={STRATEGIES[strategy]}>
          <select data-testid="select-strategy" value={strategy} onChange={(e) => setStrategy(e.currentTarget.value)}>
            {Object.keys(STRATEGIES).map((s) => <option>{s}</option>)}
          </select>
        </Field>
        <Field label="budget"><input name="budget" data-testid="select-budget" type="number" min="1" max="100000" defaultValue="100" required /></Field>
        {needRun && (
          <>
            <Field label="model run">
              <select name="run" data-testid="select-run" required>
                {(runs ?? []).map((r) => <option value={r.runId}>{r.modelName} · {r.runId}</option>)}
              </select>
            </Field>
            <Field label="measure">
              <select name="measure" data-testid="select-measure">
                <option value="least_confidence">least confidence</option><option value="margin">margin</option><option value="entropy">entropy</option>
              </select>
            </Field>
          </>
        )}
        {needModel && (
          <Field label="embeddings">
            <select name="model" data-testid="select-model">
              {embeddingChoices(models).map((m) => <option value={m.value}>{m.text}</option>)}
            </select>
          </Field>
        )}
        <Field label="pool" hint="a query; empty: every image">
          <input name="query" data-testid="select-query" class="eval-query" defaultValue={new URLSearchParams(search).get('q') ?? ''} />
        </Field>
        <Field label="seed"><input name="seed" data-testid="select-seed" type="number" defaultValue="0" /></Field>
        <Field label="tag" hint="default: the job's id"><input name="tag" data-testid="select-tag" /></Field>
        <button type="submit" data-testid="select-start">Choose</button>
      </form>
      {error && <p class="error" data-testid="select-error">{error.message}</p>}
      {job && <JobWatch id={job} me={me} onEnd={(j) => j.status === 'completed' && setResult(j.result)} />}
      {result && <Chosen r={result} />}
    </div>
  )
}

// embeddingChoices is one entry per model with vectors: the system default
// (default-embedding; "default" names the same model) first and marked, so
// it is not offered twice; with no vectors at all, the server's default.
export function embeddingChoices(models) {
  const names = [...new Set((models ?? []).map((m) => (m.modelName === 'default' ? 'default-embedding' : m.modelName)))]
  names.sort((a, b) => (b === 'default-embedding') - (a === 'default-embedding'))
  if (!names.length) return [{ value: '', text: 'default' }]
  return names.map((n) => ({ value: n, text: n === 'default-embedding' ? n + ' (default)' : n }))
}

function Chosen({ r }) {
  // The first 20 chosen files' thumbnails (and names), in one request.
  const first = r.uniqueNames.slice(0, 20)
  const items = useFetch(() => (first.length
    ? api('/lake/items?' + qs({ query: `uniqueName IN (${first.map(quote).join(', ')})`, pageSize: 20, thumbSize: 128 }))
    : Promise.resolve({ items: [] })), [r])
  const thumbs = items && new Map(items.items.map((it) => [it.uniqueName, it.thumbUrl]))
  const names = items && new Map(items.items.map((it) => [it.uniqueName, it.name]))
  return (
    <section class="version" data-testid="select-result" data-count={r.uniqueNames.length}>
      <h3>{r.uniqueNames.length} of {r.candidates} candidates chosen by {r.strategy}{r.measure ? ` (${r.measure})` : ''}, tagged {r.tag}</h3>
      <p><Link to={gridFor(`tags = ${quote(r.tag)}`)} data-testid="select-open">Open the {r.uniqueNames.length} files in the grid</Link>
        <span class="muted"> — select them there to make an annotation task.</span></p>
      <ol class="chosen">
        {r.uniqueNames.slice(0, 20).map((n, i) => (
          <li data-testid="select-chosen" data-unique-name={n}>
            <Link to={'/items/' + encodeURIComponent(n)} title={n}>
              <span class="chosen-thumb">{thumbs?.get(n) ? <img src={thumbs.get(n)} alt="" data-testid="select-thumb" /> : null}</span>
              <span class="chosen-name">{names?.get(n) ?? n}</span>
            </Link>
            <span class="muted">{r.scores?.[i]?.toFixed(3)}</span>
          </li>
        ))}
        {r.uniqueNames.length > 20 && <li class="muted">…</li>}
      </ol>
    </section>
  )
}
