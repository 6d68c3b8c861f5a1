import { useEffect, useRef, useState } from 'preact/hooks'
import { Boxes } from './boxes.jsx'
import { PAGE, gridPath, invalidate, listFor, loadCount, loadPage, itemAt, thumbFor } from './lake.js'
import { navigate } from './router.js'
import { QueryBar } from './query.jsx'
import { Facets } from './facets.jsx'
import { Upload } from './upload.jsx'
import { SelectionBar, useSelection } from './selection.jsx'
import { layout, useCursor, useSlashFocus, useView } from './gridnav.js'

export const TYPES = ['image', 'video', 'other']
export const SORTS = ['date_modified', 'date_created', 'name', 'size', 'video_index']

// paramsOf reads the grid's address: its query, order, type, or similarity search.
function paramsOf(search) {
  const p = new URLSearchParams(search)
  return {
    q: p.get('q') ?? '', sortBy: p.get('sort') || 'date_modified', sortOrder: p.get('order') || 'DESC',
    itemType: p.get('type') || 'image', similar: p.get('similar') || '', model: p.get('model') || 'default',
    picked: p.get('picked') || '',
  }
}

// Grid is the lake as a virtualised grid: only the rows in view (and one
// either side) are in the DOM, and only the pages holding them are fetched,
// once scrolling settles.
export function Grid({ search, me }) {
  const P = paramsOf(search)
  const list = listFor(P)
  const [count, setCount] = useState(list.count)
  const [error, setError] = useState(null)
  const [draft, setDraft] = useState(P.q)
  const [cell, setCell] = useState(() => +sessionStorage.getItem('framelake.cell') || 180)
  const [minConf, setMinConf] = useState(0)
  const [, setLoaded] = useState(0)
  const [uploading, setUploading] = useState(false)
  const scroller = useRef()
  const view = useView(list, scroller)
  const L = layout(view, cell, count ?? 0)
  const nav = useCursor(list, scroller, L, view.width)
  useSlashFocus()
  const sel = useSelection(list, me.role !== 'read')
  const go = (over) => navigate(gridPath({ ...P, ...over }))

  useEffect(() => setDraft(P.q), [P.q])
  useEffect(() => {
    setError(null)
    setCount(list.count)
    loadCount(list).then(setCount, setError)
  }, [list])
  useEffect(() => {
    if (L.to <= L.from) return
    const t = setTimeout(() => {
      for (let p = Math.floor(L.from / PAGE); p <= Math.floor((L.to - 1) / PAGE); p++) {
        loadPage(list, p).then(() => setLoaded((x) => x + 1), setError)
      }
    }, 60)
    return () => clearTimeout(t)
  }, [list, L.from, L.to])

  const open = (i, item, e) => {
    if (e && sel.click(e, i, item)) return
    nav.place(i)
    navigate('/items/' + encodeURIComponent(item.uniqueName))
  }
  const cells = []
  for (let i = L.from; i < L.to; i++) {
    const [x, y] = L.cellAt(i)
    const style = { transform: `translate(${x}px, ${y}px)`, width: cell + 'px' }
    const item = itemAt(list, i)
    cells.push(<Cell key={i} index={i} item={item} cell={cell} minConf={minConf} style={style} onOpen={open} selected={item && sel.has(item)} />)
  }

  return (
    <div class="lake">
      <div class="toolbar">
        <QueryBar value={draft} submitted={P.q} onInput={setDraft} onSubmit={() => go({ q: draft.trim() })} error={error?.field === 'query' ? error : null} />
        <div class="controls">
          <span class="count" data-testid="item-count">
            {count == null ? (error ? '' : '…') : `${count.toLocaleString('en')} ${count === 1 ? 'item' : 'items'}`}
          </span>
          <Controls P={P} go={go} cell={cell} setCell={setCell} minConf={minConf} setMinConf={setMinConf} />
          {me.role !== 'read' && !uploading && (
            <button class="ghost" data-testid="upload-button" onClick={() => setUploading(true)}>Upload</button>
          )}
          <form class="goto" onSubmit={(e) => { e.preventDefault(); nav.jump(+e.currentTarget.elements.n.value - 1) }}>
            <input name="n" type="number" min="1" max={L.n || 1} placeholder="go to #" data-testid="goto-input" />
          </form>
        </div>
      </div>
      {sel.enabled && <SelectionBar sel={sel} P={P} count={count} />}
      {uploading && <Upload onDone={invalidate} onClose={() => setUploading(false)} />}
      {error && error.field !== 'query' && <div class="error" role="alert">{error.message}</div>}
      <div class="lake-body">
        {!P.similar && !P.picked && <Facets q={P.q} itemType={P.itemType} go={go} list={list} />}
        <div class="scroller" ref={scroller} tabIndex={-1} onKeyDown={nav.onKey}>
          <div class="spacer" style={{ height: L.height + 'px' }}>{cells}</div>
          {count === 0 && <div class="empty">No items match.</div>}
        </div>
      </div>
    </div>
  )
}

// Controls are the grid's settings: the similarity banner or type and sort,
// the thumbnail size and the machine boxes' confidence floor.
function Controls({ P, go, cell, setCell, minConf, setMinConf }) {
  const { similar, model, itemType, sortBy, sortOrder, picked } = P
  if (picked) {
    return (
      <span class="similar-to" data-testid="picked-banner">
        picked on the map
        <button class="ghost" onClick={() => go({ picked: '' })} title="back to the lake">✕</button>
      </span>
    )
  }
  return (
    <>
      {similar && (
        <span class="similar-to" data-testid="similar-banner">
          nearest to {similar} by {model}
          <button class="ghost" onClick={() => go({ similar: '' })} title="back to the lake">✕</button>
        </span>
      )}
      {!similar && (
        <>
          <label>
            type
            <select value={itemType} data-testid="type-select" onChange={(e) => go({ itemType: e.currentTarget.value })}>
              {TYPES.map((t) => <option value={t}>{t}s</option>)}
            </select>
          </label>
          <label>
            sort
            <select value={sortBy} onChange={(e) => go({ sortBy: e.currentTarget.value })}>
              {SORTS.map((s) => <option value={s}>{s.replace('_', ' ')}</option>)}
            </select>
          </label>
          <button class="ghost" title="sort order" onClick={() => go({ sortOrder: sortOrder === 'DESC' ? 'ASC' : 'DESC' })}>
            {sortOrder === 'DESC' ? '↓ desc' : '↑ asc'}
          </button>
        </>
      )}
      <label title="thumbnail size">
        size
        <input type="range" min="96" max="400" step="4" value={cell}
          onInput={(e) => { setCell(+e.currentTarget.value); sessionStorage.setItem('framelake.cell', e.currentTarget.value) }} />
      </label>
      <label title="hide machine boxes below this confidence">
        conf ≥ {minConf.toFixed(2)}
        <input type="range" min="0" max="1" step="0.05" value={minConf} data-testid="confidence-slider" onInput={(e) => setMinConf(+e.currentTarget.value)} />
      </label>
    </>
  )
}

function Cell({ index, item, cell, minConf, style, onOpen, selected }) {
  if (!item) return <div class="cell loading" style={style}><div class="frame" style={{ width: cell, height: cell }} /></div>
  const w = item.width || cell
  const h = item.height || cell
  const k = Math.min(cell / w, cell / h)
  return (
    <a class={'cell' + (selected ? ' selected' : '')} href={'/items/' + encodeURIComponent(item.uniqueName)} style={style}
      data-testid="grid-item" data-unique-name={item.uniqueName} data-index={index} data-selected={selected ? 'true' : 'false'}
      onClick={(e) => { e.preventDefault(); onOpen(index, item, e) }}>
      <div class="well" style={{ height: cell + 'px' }}>
        <div class="frame" style={{ width: w * k + 'px', height: h * k + 'px' }}>
          {item.thumbUrl
            ? <img src={thumbFor(item.thumbUrl, cell)} alt="" loading="lazy" decoding="async" draggable={false} />
            : <div class="nothumb">{item.type}</div>}
          <Boxes boxes={item.boxes} width={item.width} height={item.height} minConfidence={minConf} />
        </div>
      </div>
      <span class="cell-name" title={item.name}>
        {item.distance !== undefined && <span class="distance">{item.distance.toFixed(3)} </span>}
        {item.name}
      </span>
    </a>
  )
}
