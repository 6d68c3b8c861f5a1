import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { Boxes } from './boxes.jsx'
import { PAGE, gridPath, invalidate, listFor, loadCount, loadPage, itemAt, thumbFor } from './lake.js'
import { navigate } from './router.js'
import { QueryBar } from './query.jsx'
import { Facets } from './facets.jsx'
import { Upload } from './upload.jsx'

export const TYPES = ['image', 'video', 'other']
export const SORTS = ['date_modified', 'date_created', 'name', 'size', 'video_index']
const GAP = 6
const MAX_SCROLL = 10_000_000

// Grid is the lake as a virtualised grid: only the rows in view (and one
// either side) are in the DOM, and only the pages holding them are fetched,
// once scrolling settles.
export function Grid({ search, me }) {
  const params = new URLSearchParams(search)
  const q = params.get('q') ?? ''
  const sortBy = params.get('sort') || 'date_modified'
  const sortOrder = params.get('order') || 'DESC'
  const itemType = params.get('type') || 'image'
  const similar = params.get('similar') || ''
  const model = params.get('model') || 'default'
  const list = listFor({ q, sortBy, sortOrder, itemType, similar, model })
  const [count, setCount] = useState(list.count)
  const [error, setError] = useState(null)
  const [draft, setDraft] = useState(q)
  const [cell, setCell] = useState(() => +sessionStorage.getItem('framelake.cell') || 180)
  const [minConf, setMinConf] = useState(0)
  const [, setLoaded] = useState(0)
  const [view, setView] = useState({ top: 0, width: 0, height: 0 })
  const [uploading, setUploading] = useState(false)
  const scroller = useRef()

  const go = (over) => navigate(gridPath({ q, itemType, sortBy, sortOrder, similar, model, ...over }))

  useEffect(() => setDraft(q), [q])
  useEffect(() => {
    setError(null)
    setCount(list.count)
    loadCount(list).then(setCount, setError)
  }, [list])

  useLayoutEffect(() => {
    const el = scroller.current
    const update = () => {
      setView({ top: el.scrollTop, width: el.clientWidth, height: el.clientHeight })
      list.scrollTop = el.scrollTop
    }
    el.scrollTop = list.scrollTop
    update()
    const ro = new ResizeObserver(update)
    ro.observe(el)
    el.addEventListener('scroll', update, { passive: true })
    return () => {
      ro.disconnect()
      el.removeEventListener('scroll', update)
    }
  }, [list])

  useEffect(() => {
    const focus = (e) => {
      if (e.key === '/' && !/INPUT|TEXTAREA/.test(document.activeElement?.tagName)) {
        e.preventDefault()
        document.querySelector('[data-testid=query-input]')?.focus()
      }
    }
    addEventListener('keydown', focus)
    return () => removeEventListener('keydown', focus)
  }, [])

  const cols = Math.max(1, Math.floor((view.width + GAP) / (cell + GAP)))
  const rowH = cell + GAP + 18
  const n = count ?? 0
  const rows = Math.ceil(n / cols)
  // Browsers cap an element's height (Chromium near 33.5M px, 160k rows of
  // a million files), so past maxScroll the scrollbar maps onto the rows
  // proportionally: vtop is the virtual scroll position in row pixels.
  const total = rows * rowH
  const maxScroll = +sessionStorage.getItem('framelake.maxScroll') || MAX_SCROLL
  const scale = total > maxScroll ? (total - view.height) / (maxScroll - view.height) : 1
  const vtop = view.top * scale
  const firstRow = Math.max(0, Math.floor(vtop / rowH) - 1)
  const lastRow = Math.min(rows, Math.ceil((vtop + view.height) / rowH) + 1)
  const from = firstRow * cols
  const to = Math.min(n, lastRow * cols)

  useEffect(() => {
    if (to <= from) return
    const t = setTimeout(() => {
      for (let p = Math.floor(from / PAGE); p <= Math.floor((to - 1) / PAGE); p++) {
        loadPage(list, p).then(() => setLoaded((x) => x + 1), setError)
      }
    }, 60)
    return () => clearTimeout(t)
  }, [list, from, to])

  const jump = (i) => {
    const idx = Math.min(Math.max(0, i), n - 1)
    scroller.current.scrollTop = (Math.floor(idx / cols) * rowH) / scale
    list.cursor = idx
    setCursor(idx)
  }
  // The cursor is the keyboard's place in the grid: arrows, Page Up/Down,
  // Home and End move it (scrolling only as far as needed), Enter opens it.
  const [cursor, setCursor] = useState(list.cursor)
  const moveCursor = (to) => {
    if (n === 0) return
    const i = Math.min(Math.max(0, to), n - 1)
    const el = scroller.current
    const top = Math.floor(i / cols) * rowH
    const at = el.scrollTop * scale
    if (top < at) el.scrollTop = top / scale
    else if (top + rowH > at + el.clientHeight) el.scrollTop = (top + rowH - el.clientHeight) / scale
    list.cursor = i
    setCursor(i)
  }
  const perPage = Math.max(1, Math.floor(view.height / rowH)) * cols
  const onKey = (e) => {
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols, PageDown: perPage, PageUp: -perPage }[e.key]
    if (step !== undefined) moveCursor(Math.max(0, cursor) + (cursor < 0 ? 0 : step))
    else if (e.key === 'Home') moveCursor(0)
    else if (e.key === 'End') moveCursor(n - 1)
    else return
    e.preventDefault()
  }
  useEffect(() => setCursor(list.cursor), [list])
  // Back from the item view, whose arrows may have moved the cursor far.
  useEffect(() => {
    if (view.width > 0 && list.cursor >= 0) moveCursor(list.cursor)
  }, [list, view.width > 0])
  useEffect(() => {
    const a = document.activeElement
    if (cursor < 0 || (a && a !== document.body && !scroller.current.contains(a))) return // typing elsewhere
    scroller.current.querySelector(`[data-index="${cursor}"]`)?.focus({ preventScroll: true })
  }, [cursor, from, to, itemAt(list, cursor)])
  const open = (i, item) => {
    list.cursor = i
    setCursor(i)
    navigate('/items/' + encodeURIComponent(item.uniqueName))
  }

  const cells = []
  for (let i = from; i < to; i++) {
    const r = Math.floor(i / cols)
    const c = i % cols
    const style = { transform: `translate(${c * (cell + GAP)}px, ${r * rowH - vtop + view.top}px)`, width: cell + 'px' }
    cells.push(<Cell key={i} index={i} item={itemAt(list, i)} cell={cell} minConf={minConf} style={style} onOpen={open} />)
  }

  return (
    <div class="lake">
      <div class="toolbar">
        <QueryBar value={draft} submitted={q} onInput={setDraft} onSubmit={() => go({ q: draft.trim() })} error={error?.field === 'query' ? error : null} />
        <div class="controls">
          <span class="count" data-testid="item-count">
            {count == null ? (error ? '' : '…') : `${count.toLocaleString('en')} ${count === 1 ? 'item' : 'items'}`}
          </span>
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
          {me.role !== 'read' && !uploading && (
            <button class="ghost" data-testid="upload-button" onClick={() => setUploading(true)}>Upload</button>
          )}
          <form class="goto" onSubmit={(e) => { e.preventDefault(); jump(+e.currentTarget.elements.n.value - 1) }}>
            <input name="n" type="number" min="1" max={n || 1} placeholder="go to #" data-testid="goto-input" />
          </form>
        </div>
      </div>
      {uploading && <Upload onDone={invalidate} onClose={() => setUploading(false)} />}
      {error && error.field !== 'query' && <div class="error" role="alert">{error.message}</div>}
      <div class="lake-body">
        {!similar && <Facets q={q} itemType={itemType} go={go} list={list} />}
        <div class="scroller" ref={scroller} tabIndex={-1} onKeyDown={onKey}>
          <div class="spacer" style={{ height: Math.min(total, maxScroll) + 'px' }}>{cells}</div>
          {count === 0 && <div class="empty">No items match.</div>}
        </div>
      </div>
    </div>
  )
}

function Cell({ index, item, cell, minConf, style, onOpen }) {
  if (!item) return <div class="cell loading" style={style}><div class="frame" style={{ width: cell, height: cell }} /></div>
  const w = item.width || cell
  const h = item.height || cell
  const k = Math.min(cell / w, cell / h)
  return (
    <a class="cell" href={'/items/' + encodeURIComponent(item.uniqueName)} style={style}
      data-testid="grid-item" data-unique-name={item.uniqueName} data-index={index}
      onClick={(e) => { e.preventDefault(); onOpen(index, item) }}>
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
