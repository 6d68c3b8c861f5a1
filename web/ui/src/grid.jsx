import { pure } from './pure.js'
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { Boxes } from './boxes.jsx'
import { PAGE, gridPath, invalidate, listFor, loadCount, itemAt, readyPage, thumbFor } from './lake.js'
import { navigate } from './router.js'
import { api, qs } from './api.js'
import { QueryBar } from './query.jsx'
import { Facets } from './facets.jsx'
import { Upload } from './upload.jsx'
import { SelectionBar, useSelection } from './selection.jsx'
import { layout, useCursor, useSlashFocus, useView } from './gridnav.js'
import { TrackBadge } from './trackbadge.jsx'

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
// once scrolling settles (a jump's before it scrolls).
export function Grid({ search, me }) {
  const P = paramsOf(search)
  const wanted = listFor(P)
  const [error, setError] = useState(null)
  const [cell, setCell] = useState(() => +sessionStorage.getItem('framelake.cell') || 180)
  const screen = useRef() // the items a listing shows at its top, as [from, to), and the cell size
  const list = useShown(wanted, setError, () => screen.current())
  const [draft, setDraft] = useState(P.q)
  const [minConf, setMinConf] = useState(0)
  const [, setLoaded] = useState(0)
  const [uploading, setUploading] = useState(false)
  const scroller = useRef()
  const opener = useRef()
  const onOpen = useCallback((...a) => opener.current(...a), []) // one function, so unchanged cells skip rendering
  const view = useView(list, scroller)
  const L = layout(view, cell, sizeOf(list))
  screen.current = () => { const T = layout({ ...view, top: 0 }, cell, PAGE); return [T.from, T.to, cell] }
  const nav = useCursor(list, scroller, L, view.width)
  useSlashFocus()
  const sel = useSelection(list, me.role !== 'read')
  const address = useRef()
  address.current = P
  const go = useCallback((over) => navigate(gridPath({ ...address.current, ...over })), []) // one function, so the sidebar need not render with the grid
  // the count shown is the listing's on screen, so the grid and its count never disagree;
  // while the query has an error, the last listing stays, greyed with its count (stale)
  const stale = error?.field === 'query' && list !== wanted
  const count = list === wanted || stale ? list.count : null
  const fetchPages = (from, to) => {
    for (let p = Math.floor(from / PAGE); p <= Math.floor((to - 1) / PAGE); p++) {
      if (!list.drawn.has(p)) readyPage(list, p, from, to, cell).then(() => setLoaded((x) => x + 1), setError)
    }
  }
  // A jump fetches the pages of the rows it lands on (and decodes their
  // thumbnails) first and scrolls then, so the grid goes from where it was to
  // the target screen in one repaint, without placeholders in between.
  const jumps = useRef(0)
  const jump = (i) => {
    const n = ++jumps.current
    const row = Math.floor(Math.min(Math.max(0, i), L.n - 1) / L.cols)
    const [from, to] = [Math.max(0, (row - 1) * L.cols), Math.min(L.n, (row + Math.ceil(view.height / L.rowH) + 1) * L.cols)]
    const pages = []
    for (let p = Math.floor(from / PAGE); p <= Math.floor((to - 1) / PAGE); p++) pages.push(readyPage(list, p, from, to, cell))
    Promise.all(pages).then(() => n === jumps.current && nav.jump(i), setError)
  }

  useLayoutEffect(() => setDraft(P.q), [P.q]) // in the same repaint as the rest of the change
  useEffect(() => {
    if (L.to <= L.from) return
    const t = setTimeout(() => fetchPages(L.from, L.to), 60)
    return () => clearTimeout(t)
  }, [list, L.from, L.to])

  const open = (i, item, e) => {
    if (e && sel.click(e, i, item)) return
    nav.place(i)
    navigate('/items/' + encodeURIComponent(item.uniqueName))
  }
  opener.current = open
  const cells = []
  for (let i = L.from; i < L.to; i++) {
    const [x, y] = L.cellAt(i)
    const item = list.drawn.has(Math.floor(i / PAGE)) ? itemAt(list, i) : undefined
    cells.push(<Cell key={i} index={i} item={item} cell={cell} minConf={minConf} x={x} y={y} onOpen={onOpen} selected={item && sel.has(item)}
      dup={item && dupNames(list).has(item.name)} />)
  }

  return (
    <div class="lake">
      <div class="toolbar">
        <QueryBar value={draft} submitted={P.q} onInput={setDraft} onSubmit={() => go({ q: draft.trim() })} error={error?.field === 'query' ? error : null} />
        <div class="controls">
          <span class={'count' + (stale ? ' stale' : '')} data-testid="item-count" data-stale={stale ? 'true' : 'false'}
            title={stale ? 'the count of the last query that ran: this one has an error' : undefined}>
            {count == null ? (error ? '' : '…') : `${count.toLocaleString('en')} ${count === 1 ? 'item' : 'items'}`}
          </span>
          <Controls P={P} go={go} cell={cell} setCell={setCell} minConf={minConf} setMinConf={setMinConf} />
          {me.role !== 'read' && !uploading && (
            <button class="ghost" data-testid="upload-button" onClick={() => setUploading(true)}>Upload</button>
          )}
          <form class="goto" onSubmit={(e) => { e.preventDefault(); jump(+e.currentTarget.elements.n.value - 1) }}>
            <input name="n" type="number" min="1" max={L.n || 1} placeholder="go to #" data-testid="goto-input" />
          </form>
        </div>
      </div>
      {sel.enabled && <SelectionBar sel={sel} P={P} count={count} />}
      {uploading && <Upload onDone={invalidate} onClose={() => setUploading(false)} />}
      {error && error.field !== 'query' && <div class="error" role="alert">{error.message}</div>}
      <div class="lake-body">
        {!P.similar && !P.picked && <Facets q={P.q} itemType={P.itemType} go={go} list={wanted} stale={error?.field === 'query'} />}
        <div class={'scroller' + (stale ? ' stale' : '')} ref={scroller} tabIndex={-1} onKeyDown={nav.onKey} aria-busy={list !== wanted && !stale ? 'true' : undefined}>
          <div class="spacer" style={{ height: L.height + 'px' }}>{cells}</div>
          {count === 0 && <div class="empty">No items match.</div>}
        </div>
      </div>
    </div>
  )
}

// useShown is the listing on screen. A new one (a facet click, a query)
// asks for its count and its first page together, from a layout effect so
// the requests leave before the click is painted, and takes the screen when
// that page and the thumbnails at its top are ready (or the page failed):
// the grid goes from the old items to the new in one repaint, not through an
// empty grid, grey placeholders and a repaint per thumbnail, and shows
// before its count, which may take longer to compute.
function useShown(wanted, setError, top) {
  const [shown, setShown] = useState(wanted)
  const [, counted] = useState(0)
  useLayoutEffect(() => {
    let stop = false
    const fail = (e) => stop || setError(e)
    const ready = () => readyPage(wanted, 0, ...top())
    setError(null)
    loadCount(wanted).then(() => stop || counted((x) => x + 1), fail)
    // a listing that fails (a query's parse error) never takes the screen: the last one stays
    if (wanted !== shown) ready().then(() => stop || setShown(wanted), fail)
    else if (wanted.count == null) ready().then(() => stop || counted((x) => x + 1), fail) // the first listing
    return () => (stop = true)
  }, [wanted])
  return shown
}

// dupNames is the file names that more than one loaded item of a listing
// has, counted again when a page arrives.
function dupNames(list) {
  if (list.dups?.pages === list.pages.size) return list.dups.names
  const seen = new Set()
  const names = new Set()
  for (const page of list.pages.values()) for (const it of page ?? []) (seen.has(it.name) ? names : seen).add(it.name)
  list.dups = { pages: list.pages.size, names }
  return names
}

// sizeOf is how many items a listing has: its count, or until the count
// arrives the items of its first page.
const sizeOf = (list) => list.count ?? list.pages.get(0)?.length ?? 0

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

// Cell is one grid cell; it renders again only when one of its props
// changes, not on every render of the grid.
const Cell = pure(function Cell({ index, item, cell, minConf, x, y, onOpen, selected, dup }) {
  const style = { transform: `translate(${x}px, ${y}px)`, width: cell + 'px' }
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
            ? <img src={thumbFor(item.thumbUrl, cell)} alt="" decoding="async" draggable={false} />
            : <div class="nothumb">{item.type}</div>}
          <Boxes boxes={item.boxes} width={item.width} height={item.height} minConfidence={minConf} skeletons={item.skeletons} />
        </div>
        {item.type === 'video' && <TrackBadge count={item.trackCount} />}
      </div>
      <CellName item={item} dup={dup} />
    </a>
  )
})

// collectionsOf caches the names of the collections a file is in. The lake's
// list answer does not carry them, so they are asked of the collection facet
// narrowed to the one file, once per file, when its caption needs them.
const collectionsOf = new Map()
function collections(item) {
  if (!collectionsOf.has(item.uniqueName)) {
    collectionsOf.set(item.uniqueName, api('/lake/facets/collection?' + qs({ query: 'uniqueName = ' + quote(item.uniqueName), itemType: item.type, limit: 20 }))
      .then((r) => r.values.map((v) => v.value), () => []))
  }
  return collectionsOf.get(item.uniqueName)
}
const quote = (v) => '"' + String(v).replace(/[\\"]/g, (c) => '\\' + c) + '"'

// CellName is a cell's caption: the file's name, and when another file of the
// listing has the same name, its collections, so two 2011_000025.jpg of two
// imports tell apart; hovering shows the unique name and the collections.
function CellName({ item, dup }) {
  const [cols, setCols] = useState(null)
  useEffect(() => {
    let live = true
    setCols(null)
    if (dup) collections(item).then((c) => live && setCols(c))
    return () => { live = false }
  }, [item.uniqueName, dup])
  const hover = () => { if (!cols) collections(item).then(setCols) }
  const title = `${item.name}\n${item.uniqueName}` + (cols ? `\n${cols.length ? 'in ' + cols.join(', ') : 'in no collection'}` : '')
  return (
    <span class="cell-name" title={title} onMouseEnter={hover} data-testid="cell-name" data-collections={cols?.join(',')}>
      {item.distance !== undefined && <span class="distance">{item.distance.toFixed(3)} </span>}
      {item.name}
      {dup && <span class="cell-collection">{' · ' + (cols ? cols.join(', ') || 'no collection' : item.uniqueName)}</span>}
    </span>
  )
}
