import { useEffect, useState } from 'preact/hooks'
import { api, fn, qs } from './api.js'
import { PAGE, invalidate, itemAt, loadPage } from './lake.js'
import { navigate } from './router.js'
import { quote } from './qtext.js'
import { TaskForm } from './gridtask.jsx'

// The grid's selection, kept per listing (its query, type and order) while
// the tab lives, so refreshing the listing after a tagging keeps it. Items
// are kept by unique name; "all matching" stands for the listing's query,
// which actions send instead of names.
const store = { key: null, all: false, picked: new Map(), anchor: -1 }

// MAX_NAMES is how many picked items one query names (the query language's
// IN list limit); tags and collections are sent in such chunks, jobs and
// datasets need one query, so they take at most this many picked items.
const MAX_NAMES = 1000
// MAX_RANGE caps a shift-click range, whose pages are fetched to name it.
const MAX_RANGE = 20 * PAGE

export function useSelection(list, enabled) {
  const [, bump] = useState(0)
  const changed = () => bump((x) => x + 1)
  if (store.key !== list.key) Object.assign(store, { key: list.key, all: false, picked: new Map(), anchor: -1 })

  const toggle = (i, item) => {
    if (store.all) Object.assign(store, { all: false, picked: new Map() })
    if (store.picked.has(item.uniqueName)) store.picked.delete(item.uniqueName)
    else store.picked.set(item.uniqueName, i)
    store.anchor = i
  }
  const range = async (a, b) => {
    const [lo, hi] = [Math.min(a, b), Math.min(Math.max(a, b), Math.min(a, b) + MAX_RANGE - 1)]
    const pages = []
    for (let p = Math.floor(lo / PAGE); p <= Math.floor(hi / PAGE); p++) pages.push(loadPage(list, p))
    await Promise.all(pages)
    if (store.all) Object.assign(store, { all: false, picked: new Map() })
    for (let i = lo; i <= hi; i++) {
      const it = itemAt(list, i)
      if (it) store.picked.set(it.uniqueName, i)
    }
    store.anchor = b
    changed()
  }
  return {
    enabled,
    all: store.all,
    size: store.picked.size,
    has: (item) => store.all || store.picked.has(item.uniqueName),
    // click selects on shift (a range from the last click), ctrl or cmd (one
    // item), or any click once something is picked; it reports whether it
    // used the click, which otherwise opens the item.
    click(e, i, item) {
      if (!enabled) return false
      if (e.shiftKey && store.anchor >= 0) {
        range(store.anchor, i)
        return true
      }
      if (e.ctrlKey || e.metaKey || store.picked.size > 0) {
        toggle(i, item)
        changed()
        return true
      }
      return false
    },
    selectAll() { Object.assign(store, { all: true, picked: new Map(), anchor: -1 }); changed() },
    clear() { Object.assign(store, { all: false, picked: new Map(), anchor: -1 }); changed() },
    // names are the selected files' names in grid order; "all matching"
    // pages through the listing, up to max names.
    async names(max) {
      if (!store.all) return [...store.picked].sort((a, b) => a[1] - b[1]).map(([n]) => n).slice(0, max + 1)
      const out = []
      for (let p = 0; out.length <= max; p++) {
        const items = await loadPage(list, p)
        out.push(...items.map((it) => it.uniqueName))
        if (items.length < PAGE) break
      }
      return out
    },
    // queries are the selection as queries of at most MAX_NAMES names each.
    queries() {
      if (store.all) return [list.q]
      const names = [...store.picked.keys()]
      const out = []
      for (let i = 0; i < names.length; i += MAX_NAMES) {
        out.push(`uniqueName IN (${names.slice(i, i + MAX_NAMES).map(quote).join(', ')})`)
      }
      return out
    },
  }
}

const ACTIONS = [['tag', 'Tag'], ['untag', 'Untag'], ['collect', 'Add to collection'], ['model', 'Run model'], ['dataset', 'Create dataset'], ['task', 'Create task']]

// SelectionBar shows what is selected and what can be done with it; only
// keys that may write see it, since every action writes.
export function SelectionBar({ sel, P, count }) {
  const [action, setAction] = useState(null)
  const [msg, setMsg] = useState(null)
  const [busy, setBusy] = useState(false)
  const n = sel.all ? count ?? 0 : sel.size
  const run = async (work) => {
    setBusy(true)
    setMsg(null)
    try {
      setMsg({ ok: true, body: await work() })
      setAction(null)
    } catch (err) {
      setMsg({ ok: false, body: err.message })
    } finally {
      setBusy(false)
    }
  }
  const props = { sel, P, run, busy }
  return (
    <div class="selection" data-testid="selection-bar">
      <span class="selected" data-testid="selection-count" data-count={n} data-all={sel.all ? 'true' : 'false'}>
        {sel.all ? `all ${n.toLocaleString('en')} matching` : n ? `${n.toLocaleString('en')} selected` : 'ctrl-click or shift-click to select'}
      </span>
      {!P.similar && !sel.all && <button class="ghost" data-testid="select-all" onClick={sel.selectAll}>Select all matching</button>}
      {(n > 0 || sel.all) && <button class="ghost" data-testid="select-clear" onClick={() => { sel.clear(); setAction(null) }}>Clear</button>}
      {(n > 0 || sel.all) && ACTIONS.map(([k, title]) => (
        <button class={'ghost' + (action === k ? ' on' : '')} data-testid="selection-action" data-action={k}
          onClick={() => { setAction(action === k ? null : k); setMsg(null) }}>{title}</button>
      ))}
      {action === 'tag' && <TagForm {...props} remove={false} />}
      {action === 'untag' && <TagForm {...props} remove={true} />}
      {action === 'collect' && <CollectForm {...props} />}
      {action === 'model' && <ModelForm {...props} />}
      {action === 'dataset' && <DatasetForm {...props} />}
      {action === 'task' && <TaskForm {...props} />}
      {msg && <span class={msg.ok ? 'selection-done' : 'error'} data-testid="selection-message" role="status">{msg.body}</span>}
    </div>
  )
}

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean)
const onSubmit = (f) => (e) => { e.preventDefault(); f(e.currentTarget.elements) }

function TagForm({ sel, P, run, busy, remove }) {
  const go = (el) => run(async () => {
    const tags = list(el.tags.value)
    let files = 0
    for (const query of sel.queries()) {
      files += (await api('/lake/selection/tags', { method: 'POST', body: { query, itemType: P.itemType, [remove ? 'remove' : 'add']: tags } })).files
    }
    invalidate()
    return `${remove ? 'Untagged' : 'Tagged'} ${files.toLocaleString('en')} files: ${tags.join(', ')}`
  })
  return (
    <form class="selection-form" onSubmit={onSubmit(go)}>
      <input name="tags" required placeholder="tags, comma-separated" data-testid="selection-tags" autofocus />
      <button type="submit" disabled={busy} data-testid="selection-apply">{remove ? 'Untag' : 'Tag'}</button>
    </form>
  )
}

function CollectForm({ sel, P, run, busy }) {
  const names = useNames()
  const go = (el) => run(async () => {
    let added = 0
    for (const query of sel.queries()) {
      added += (await api('/lake/selection/collection', { method: 'POST', body: { query, itemType: P.itemType, collection: el.name.value.trim() } })).added
    }
    invalidate()
    return `Added ${added.toLocaleString('en')} files to ${el.name.value.trim()}`
  })
  return (
    <form class="selection-form" onSubmit={onSubmit(go)}>
      <input name="name" required list="collection-names" placeholder="collection (new or existing)" data-testid="selection-collection" autofocus />
      <datalist id="collection-names">{names.map((c) => <option value={c} />)}</datalist>
      <button type="submit" disabled={busy} data-testid="selection-apply">Add</button>
    </form>
  )
}

function useNames() {
  const [names, setNames] = useState([])
  useEffect(() => { api('/lake/complete?' + qs({ field: 'collection', limit: 200 })).then((r) => setNames(r.values), () => {}) }, [])
  return names
}

// oneQuery is the selection as a single query, for a job or a dataset.
function oneQuery(sel) {
  const qs = sel.queries()
  if (qs.length > 1) throw new Error(`select at most ${MAX_NAMES} items for this, or use Select all matching`)
  return qs[0]
}

const APPS = {
  auto_tagging: { title: 'auto tag', fn: 'generate_auto_tags_to_lake' },
  auto_annotation: { title: 'annotate with prompts', fn: 'generate_auto_annotations_to_lake' },
  embedding: { title: 'embed', fn: 'generate_embeddings_to_lake' },
}

function ModelForm({ sel, P, run, busy }) {
  const [app, setApp] = useState('auto_tagging')
  const [models, setModels] = useState([])
  useEffect(() => { api('/models').then((r) => setModels(r.modelList), () => setModels([])) }, [])
  const mine = models.filter((m) => m.application === app)
  const go = (el) => run(async () => {
    const p = { content_type: P.itemType, model_name: el.model.value, query: oneQuery(sel) }
    if (app === 'auto_annotation') p.prompts = list(el.prompts.value).map((label) => ({ label, description: label }))
    if (app === 'auto_tagging' && el.conf.value) p.confidence_threshold = +el.conf.value
    const r = await fn(APPS[app].fn, p)
    return <>Started <a href={'/jobs/' + r.jobId} data-testid="selection-job" onClick={(e) => { e.preventDefault(); navigate('/jobs/' + r.jobId) }}>job {r.jobId}</a></>
  })
  return (
    <form class="selection-form" onSubmit={onSubmit(go)}>
      <select value={app} data-testid="selection-app" onChange={(e) => setApp(e.currentTarget.value)}>
        {Object.entries(APPS).map(([k, a]) => <option value={k}>{a.title}</option>)}
      </select>
      <select name="model" data-testid="selection-model">
        {mine.map((m) => <option value={m.systemDefault ? 'default' : m.modelName}>{m.modelName}{m.systemDefault ? ' (default)' : ''}</option>)}
        {mine.length === 0 && <option value="default">default</option>}
      </select>
      {app === 'auto_annotation' && <input name="prompts" required placeholder="labels to find, comma-separated" data-testid="selection-prompts" />}
      {app === 'auto_tagging' && <input name="conf" type="number" min="0" max="1" step="0.05" placeholder="confidence 0.5" title="confidence threshold" />}
      <button type="submit" disabled={busy} data-testid="selection-apply">Start job</button>
    </form>
  )
}

function DatasetForm({ sel, P, run, busy }) {
  const [labels, setLabels] = useState('')
  useEffect(() => {
    let q
    try { q = oneQuery(sel) } catch { return }
    api('/lake/facets/annotation.label?' + qs({ query: q, itemType: P.itemType, limit: 50 }))
      .then((r) => setLabels(r.values.map((v) => v.value).join(', ')), () => {})
  }, [])
  const go = (el) => run(async () => {
    const r = await fn('create_dataset_from_datalake', {
      dataset_name: el.name.value.trim(), labels: list(labels), item_type: P.itemType, query: oneQuery(sel),
      split_info: { train: +el.train.value, test: +el.test.value, validation: +el.validation.value },
    })
    return <>Creating <a href={'/datasets/' + r.datasetId} data-testid="selection-dataset" onClick={(e) => { e.preventDefault(); navigate('/datasets/' + r.datasetId) }}>dataset {el.name.value.trim()}</a></>
  })
  return (
    <form class="selection-form" onSubmit={onSubmit(go)}>
      <input name="name" required placeholder="dataset name" data-testid="selection-dataset-name" />
      <input name="labels" required value={labels} onInput={(e) => setLabels(e.currentTarget.value)} placeholder="labels, comma-separated" data-testid="selection-dataset-labels" />
      {/* The split's fields are the person's (defaultValue): a value would set them back at every render, as each
          keystroke in the labels' field is one. */}
      <label title="train / test / validation %">split
        <input name="train" type="number" min="0" max="100" defaultValue="70" class="pct" />
        <input name="test" type="number" min="0" max="100" defaultValue="20" class="pct" />
        <input name="validation" type="number" min="0" max="100" defaultValue="10" class="pct" />
      </label>
      <button type="submit" disabled={busy} data-testid="selection-apply">Create</button>
    </form>
  )
}
