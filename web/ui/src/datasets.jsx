import { useEffect, useState } from 'preact/hooks'
import { api, authHeaders } from './api.js'
import { navigate } from './router.js'

// useDatasets loads Dataset List, again every 2 s while a version builds.
function useDatasets() {
  const [groups, setGroups] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    let stop = false
    let timer
    const load = () =>
      api('/datasets').then((g) => {
        if (stop) return
        setGroups(g)
        if (g.some((d) => d.versionList.some((v) => v.status === 'building'))) timer = setTimeout(load, 2000)
      }, (e) => !stop && setError(e))
    load()
    return () => {
      stop = true
      clearTimeout(timer)
    }
  }, [])
  return { groups, error }
}

export function Datasets() {
  const { groups, error } = useDatasets()
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!groups) return <div class="loading-page">Loading…</div>
  return (
    <div class="page">
      <h2>Datasets <span class="muted">({groups.length})</span></h2>
      <table class="table">
        <thead><tr><th>name</th><th>versions</th><th>latest</th><th>created</th></tr></thead>
        <tbody>
          {groups.map((g) => {
            const v = g.versionList[g.versionList.length - 1]
            return (
              <tr data-testid="dataset-row" data-dataset-id={g.id}>
                <td><a href={'/datasets/' + g.id} onClick={(e) => { e.preventDefault(); navigate('/datasets/' + g.id) }}>{g.name}</a></td>
                <td>{g.versionList.length}</td>
                <td>{v && <>{v.versionNo} <span class={'status ' + v.status}>{v.status}</span></>}</td>
                <td class="muted">{new Date(g.createdAt).toLocaleString()}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
      {groups.length === 0 && <p class="muted">No datasets yet.</p>}
    </div>
  )
}

// Dataset shows a dataset's versions: status, split and label statistics,
// and a download per format (the zip of download_dataset, without media).
export function Dataset({ id }) {
  const { groups, error } = useDatasets()
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!groups) return <div class="loading-page">Loading…</div>
  const g = groups.find((d) => d.id === id)
  if (!g) return <div class="error" role="alert">No dataset {id}.</div>
  return (
    <div class="page">
      <h2>{g.name} <span class="muted">{g.id}</span></h2>
      {[...g.versionList].reverse().map((v) => <Version v={v} />)}
    </div>
  )
}

// Leakage is the build's near-duplicate pairs that cross splits (a copy of
// a test image in train inflates the test figures), with the split pairs
// they join; nothing for builds made before it was measured.
function Leakage({ l }) {
  if (!l) return null
  const pairs = Object.entries(l.splitPairs ?? {}).filter(([, n]) => n > 0)
  return (
    <p class={'leakage' + (l.crossing > 0 ? ' leaks' : '')} data-testid="dataset-leakage" data-crossing={l.crossing}>
      {l.crossing > 0
        ? <>{l.crossing} duplicate {l.crossing === 1 ? 'pair crosses' : 'pairs cross'} splits{pairs.length > 0 && ` (${pairs.map(([k, n]) => `${k}: ${n}`).join(', ')})`}</>
        : <>no duplicates cross splits</>}
      <span class="muted"> · {l.pairs} near-duplicate {l.pairs === 1 ? 'pair' : 'pairs'} among {l.frames} frames ({l.method}, distance ≤ {l.threshold})</span>
    </p>
  )
}

function Version({ v }) {
  const [err, setErr] = useState(null)
  // Counts by shape type (stats.shapes), the most first; a version of boxes alone says boxes.
  const types = Object.entries(v.stats.shapes ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  const shapes = types.some(([t]) => t !== 'box') ? 'shapes' : 'boxes'
  return (
    <section class="version" data-testid="dataset-version" data-status={v.status} data-version-id={v.versionId}>
      <h3>
        Version {v.versionNo} <span class={'status ' + (v.status === 'ready' ? 'completed' : v.status)}>{v.status}</span>
        <span class="muted"> by {v.createdBy} · {new Date(v.createdAt).toLocaleString()}</span>
      </h3>
      <p class="muted">{v.versionDetails}</p>
      {v.error && <p class="error">{v.error}</p>}
      <div class="stats">
        <Stat label="frames" value={v.stats.totalFrames} />
        <Stat label={shapes} value={v.stats.totalBoxes} />
        {shapes === 'shapes' && types.map(([t, n]) => <Stat label={t} value={n} testid={'dataset-shapes-' + t} />)}
        {['train', 'validation', 'test'].map((s) => <Stat label={s} value={v.stats.splits?.[s]?.frames ?? 0} />)}
      </div>
      <Leakage l={v.leakage ?? v.stats?.leakage} />
      <table class="table labels">
        <thead><tr><th>label</th><th>frames</th><th>{shapes}</th></tr></thead>
        <tbody>
          {Object.entries(v.stats.labels ?? {}).map(([l, c]) => <tr><td>{l}</td><td>{c.frames}</td><td>{c.boxes}</td></tr>)}
        </tbody>
      </table>
      {v.status === 'ready' && (
        <div class="downloads">
          {v.downloadFormats.map((f) => (
            <button class="ghost" data-testid="dataset-download" data-format={f} onClick={() => download(v, f).catch(setErr)}>
              Download {f}
            </button>
          ))}
          {err && <span class="error"> {err.message}</span>}
        </div>
      )}
    </section>
  )
}

const Stat = ({ label, value, testid }) => <div class="stat" data-testid={testid}><b>{value.toLocaleString('en')}</b><span class="muted">{label}</span></div>

// download fetches the archive with the key headers (a plain link could not
// send them) and hands it to the browser as a file.
async function download(v, format) {
  const r = await fetch('/api/v1/client/download_dataset', {
    method: 'POST',
    headers: { ...authHeaders('POST'), 'content-type': 'application/json' },
    body: JSON.stringify({ version_id: v.versionId, export_type: format, is_media_include: false }),
  })
  if (!r.ok) throw new Error((await r.json().catch(() => null))?.error?.message ?? `HTTP ${r.status}`)
  const name = /filename="?([^";]+)/.exec(r.headers.get('content-disposition') ?? '')?.[1] ?? `${v.versionId}-${format}.zip`
  const a = document.createElement('a')
  a.href = URL.createObjectURL(await r.blob())
  a.download = name
  a.click()
  setTimeout(() => URL.revokeObjectURL(a.href), 10000)
}
