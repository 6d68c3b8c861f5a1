import { useEffect, useState } from 'preact/hooks'
import { api, fn } from './api.js'
import { Boxes } from './boxes.jsx'
import { colorOf, isBox } from './shapes.jsx'
import { fitStyle, useFit } from './labels.js'
import { PAGE, currentList, gridPath, itemAt, loadCount, loadPage } from './lake.js'
import { navigate } from './router.js'
import { useZoom } from './zoom.js'
import { VideoPlayer } from './video.jsx'
import { videoLabelPath } from './videows.jsx'

// ItemView shows one file full size with its boxes, details, tags and media
// link. Arrows step through the grid's listing it was opened from; Esc
// returns to the grid.
export function ItemView({ name }) {
  const [item, setItem] = useState(null)
  const [error, setError] = useState(null)
  const zoom = useZoom(name)
  const { ref: stage, fit } = useFit(item?.width, item?.height)

  useEffect(() => {
    setError(null)
    // The item answer carries every shape whole, with its keypoints labels' skeletons.
    api('/lake/files/' + encodeURIComponent(name)).then(setItem, setError)
  }, [name])

  useEffect(() => {
    const list = currentList()
    const step = async (d) => {
      if (!list || itemAt(list, list.cursor)?.uniqueName !== name) return
      const i = list.cursor + d
      const n = await loadCount(list)
      if (i < 0 || i >= n) return
      await loadPage(list, Math.floor(i / PAGE))
      list.cursor = i
      navigate('/items/' + encodeURIComponent(itemAt(list, i).uniqueName), { replace: true })
    }
    const key = (e) => {
      if (/INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName)) return
      if (e.key === 'Escape') navigate(gridPath(list))
      else if (e.key === 'ArrowRight') step(1)
      else if (e.key === 'ArrowLeft') step(-1)
      else return
      e.preventDefault()
    }
    addEventListener('keydown', key)
    return () => removeEventListener('keydown', key)
  }, [name])

  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!item || item.uniqueName !== name) return <div class="loading-page">Loading…</div>
  return (
    <div class="item" data-testid="item-view" data-unique-name={item.uniqueName}>
      <div class="stage" ref={stage}>
        {item.type === 'video' ? (
          <VideoPlayer item={item} />
        ) : (
          <div class="frame" ref={zoom.ref} style={zoom.style}>
            <img src={item.url} alt={item.name} class="media" data-testid="item-image" draggable={false} style={fitStyle(fit)} />
            <Boxes boxes={item.boxes.filter((b) => b.frame === 0)} width={item.width} height={item.height} fit={fit} skeletons={item.skeletons} />
          </div>
        )}
      </div>
      <aside class="details">
        <h2 title={item.name}>{item.name}</h2>
        <dl>
          <dt>unique name</dt><dd>{item.uniqueName}</dd>
          <dt>type</dt><dd>{item.type}</dd>
          {item.width > 0 && <><dt>size</dt><dd>{item.width} × {item.height}</dd></>}
          <dt>file size</dt><dd>{formatBytes(item.fileSize)}</dd>
          <dt>created</dt><dd>{new Date(item.createdAt).toLocaleString()}</dd>
          <dt>media</dt><dd><a href={item.url} target="_blank" rel="noopener">signed link</a></dd>
        </dl>
        {item.type === 'image' && <FindSimilar name={item.uniqueName} />}
        {item.type === 'video' && (
          <p><button data-testid="label-tracks" onClick={() => navigate(videoLabelPath(item.uniqueName))}>Label tracks</button></p>
        )}
        <h3>Tags</h3>
        <div class="tags">{item.tags?.length ? item.tags.map((t) => <span class="tag">{t}</span>) : <span class="muted">none</span>}</div>
        <h3>Annotations ({item.boxes.length})</h3>
        <ul class="annotations">
          {item.boxes.map((b) => (
            <li class={b.source}>
              <span class="swatch" style={isBox(b) || b.type === 'class' ? undefined : { borderColor: colorOf(b) }} /> {b.label}
              <span class="muted">
                {' '}{b.source}{b.confidence != null && ` ${b.confidence.toFixed(2)}`} ·{' '}
                {b.type === 'class' ? 'class' : `${b.type && b.type !== 'box' ? b.type + ' ' : ''}${Math.round(b.x)},${Math.round(b.y)} ${Math.round(b.width)}×${Math.round(b.height)}`}
                {item.type === 'video' && ` · frame ${b.frame}`}
              </span>
            </li>
          ))}
        </ul>
        {item.metadata && Object.keys(item.metadata).length > 0 && (
          <>
            <h3>Metadata</h3>
            <pre class="metadata">{JSON.stringify(item.metadata, null, 2)}</pre>
          </>
        )}
        <p class="muted keys">← → step{item.type === 'video' && ' · , . frame by frame'} · Esc back to the grid · wheel or + − zoom, drag to pan, 0 resets{zoom.scale > 1 && ` · ${zoom.scale.toFixed(1)}×`}</p>
      </aside>
    </div>
  )
}

// FindSimilar opens the grid of this file's nearest neighbours by an
// embedding model that has a vector for it (the system default, named
// "default", first), narrowed by the grid's query. Models without this file's
// vector are not offered: their search could only fail.
function FindSimilar({ name }) {
  const [models, setModels] = useState(null)
  const [model, setModel] = useState('default')
  useEffect(() => {
    let live = true
    api('/models').then(async (r) => {
      const all = r.modelList.filter((m) => m.application === 'embedding')
        .sort((a, b) => Number(b.systemDefault) - Number(a.systemDefault))
        .map((m) => (m.systemDefault ? 'default' : m.modelName))
      const label = new Map(r.modelList.filter((m) => m.systemDefault && m.application === 'embedding').map((m) => ['default', m.modelName + ' (default)']))
      const has = await Promise.all(all.map((m) => fn('get_embedding_vector', { model_name: m, unique_names: [name] })
        .then((v) => v.embeddings.length > 0, () => false)))
      const names = all.filter((_, i) => has[i])
      if (!live) return
      setModels(names.map((n) => ({ value: n, text: label.get(n) ?? n })))
      if (names.length) setModel(names[0])
    }, () => live && setModels([]))
    return () => { live = false }
  }, [name])
  const go = () => {
    const list = currentList()
    navigate(gridPath({ ...(list ?? {}), similar: name, model }))
  }
  return (
    <div class="similar">
      <button data-testid="similar-button" onClick={go} disabled={!models?.length}>Find similar</button>
      {models?.length > 1 && (
        <select value={model} onChange={(e) => setModel(e.currentTarget.value)} data-testid="similar-model">
          {models.map((m) => <option value={m.value}>{m.text}</option>)}
        </select>
      )}
      {models?.length === 0 && <span class="muted"> no embedding of this file</span>}
    </div>
  )
}

function formatBytes(n) {
  if (n < 1024) return n + ' B'
  const u = ['KiB', 'MiB', 'GiB', 'TiB']
  let i = -1
  do { n /= 1024; i++ } while (n >= 1024 && i < u.length - 1)
  return n.toFixed(1) + ' ' + u[i]
}
