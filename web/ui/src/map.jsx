import { useEffect, useRef, useState } from 'preact/hooks'
import createScatterplot from './scatter.js'
import { api, qs } from './api.js'
import { pickNames } from './lake.js'
import { navigate } from './router.js'

// The embedding map (/map?model=..&color=label|tag): a model's vectors placed
// in 2D by the server (GET /api/v1/models/{name}/projection), drawn by
// scatter.js in WebGL (no generated code, so it draws under the app's CSP). Hover shows the file's thumbnail; shift-drag
// draws a lasso, whose files open as a grid.

// Eleven colours for the most common values; the rest and "none" are grey.
const PALETTE = ['#5b9dff', '#ff9f1c', '#3ddc84', '#ff6b6b', '#c77dff', '#ffd166', '#06d6a0', '#f78fb3', '#4cc9f0', '#e07a5f', '#b5e48c']
const GREY = '#6b6e76'

// loadMap fetches every page of the model's map; categories are merged across
// pages by name.
async function loadMap(model, color, signal) {
  const all = { uniqueName: [], x: [], y: [], cat: [], names: [], projection: null }
  const index = new Map()
  let after = 0
  for (;;) {
    const r = await api(`/models/${encodeURIComponent(model)}/projection?` + qs({ after, colorBy: color || undefined }), { signal })
    all.projection = r.projection
    const p = r.points
    for (let i = 0; i < p.x.length; i++) {
      all.uniqueName.push(p.uniqueName[i])
      all.x.push(p.x[i])
      all.y.push(p.y[i])
      let c = -1
      if (color && p.category[i] >= 0) {
        const name = r.categories[p.category[i]]
        if (!index.has(name)) index.set(name, { name, n: 0 })
        c = name
        index.get(name).n++
      }
      all.cat.push(c)
    }
    if (r.next == null) break
    after = r.next
  }
  // The most common values get the colours.
  all.names = [...index.values()].sort((a, b) => b.n - a.n)
  all.none = all.cat.filter((c) => c === -1).length
  const rank = new Map(all.names.map((v, i) => [v.name, Math.min(i, PALETTE.length)]))
  all.valueA = all.cat.map((c) => (c === -1 ? PALETTE.length : rank.get(c)))
  fill(all)
  return all
}

// MARGIN is the share of each half-axis kept free around the points, so the
// points at the edges are drawn whole, not cut by the canvas's border.
const MARGIN = 0.08

// fill stretches the server's layout (about [-1, 1], its aspect kept, so a
// map longer than wide used a narrow strip) to [-1, 1] on each axis less the
// margin: in scatter.js that box is the whole canvas. The axes of a projection have no units, so
// each is scaled on its own; the server's x and y stay in x0 and y0.
function fill(all) {
  for (const k of ['x', 'y']) {
    const v = all[k]
    let lo = Infinity
    let hi = -Infinity
    for (const a of v) { if (a < lo) lo = a; if (a > hi) hi = a }
    const mid = (lo + hi) / 2
    const k1 = hi > lo ? (2 * (1 - MARGIN)) / (hi - lo) : 0
    all[k + '0'] = v
    all[k] = v.map((a) => (a - mid) * k1)
  }
}

export function MapPage({ search, me }) {
  const p = new URLSearchParams(search)
  const [models, setModels] = useState(null)
  const model = p.get('model') || models?.[0]?.modelName || ''
  const color = p.get('color') || ''
  const [data, setData] = useState(null)
  const [error, setError] = useState(null)
  const [tick, setTick] = useState(0)
  const go = (over) => navigate('/map?' + qs({ model, color, ...over }))

  useEffect(() => {
    api('/embedding-models').then((r) => {
      // The default embedding model first, as the rest of the app offers it.
      const ms = r.modelList.sort((a, b) => (b.modelName === 'default-embedding') - (a.modelName === 'default-embedding'))
      setModels(ms)
    }, setError)
  }, [])

  useEffect(() => {
    if (!model) return
    const ctl = new AbortController()
    let timer
    const t0 = performance.now()
    setError(null)
    loadMap(model, color, ctl.signal).then((d) => {
      d.loadMs = performance.now() - t0
      setData(d)
      // While a job computes the map, look again every second.
      if (d.projection.status === 'computing') timer = setTimeout(() => setTick((t) => t + 1), 1000)
    }, (e) => e.name !== 'AbortError' && setError(e))
    return () => { ctl.abort(); clearTimeout(timer) }
  }, [model, color, tick])

  const refit = () => api(`/models/${encodeURIComponent(model)}/projection`, { method: 'POST' }).then(() => setTick((t) => t + 1), setError)
  const st = data?.projection
  return (
    <div class="map-page">
      <div class="toolbar map-bar">
        <label>model
          <select value={model} data-testid="map-model" onChange={(e) => go({ model: e.currentTarget.value })}>
            {(models ?? []).map((m) => <option value={m.modelName}>{m.modelName} ({m.dimension}-d)</option>)}
          </select>
        </label>
        <label>colour by
          <select value={color} data-testid="map-color" onChange={(e) => go({ color: e.currentTarget.value })}>
            <option value="">nothing</option>
            <option value="label">label</option>
            <option value="tag">tag</option>
          </select>
        </label>
        {st && (
          <span class="map-status" data-testid="map-status" data-status={st.status}>
            {st.pointCount.toLocaleString('en')} of {st.vectorCount.toLocaleString('en')} vectors · {st.status}
            {st.jobId && <> · <a href={'/jobs/' + st.jobId} onClick={(e) => { e.preventDefault(); navigate('/jobs/' + st.jobId) }}>job</a></>}
            {st.error && <span class="error"> {st.error}</span>}
          </span>
        )}
        {me.role !== 'read' && st && st.status !== 'computing' && <button class="ghost" onClick={refit} title="fit the map anew">Refit</button>}
        <span class="muted">shift-drag: lasso · wheel: zoom · drag: pan</span>
      </div>
      {error && <div class="error" role="alert">{error.message}</div>}
      {models?.length === 0 && <p class="muted pad">No model has vectors yet: run an embedding job first.</p>}
      {data && <Scatter data={data} />}
    </div>
  )
}

// Scatter draws the points and keeps one scatterplot per mount.
function Scatter({ data }) {
  const canvas = useRef()
  const plot = useRef()
  const [hover, setHover] = useState(null)
  const [picked, setPicked] = useState([])
  const [drawMs, setDrawMs] = useState(null)
  const mouse = useRef([0, 0])
  const plotData = useRef(null)

  useEffect(() => {
    const { width, height } = canvas.current.getBoundingClientRect()
    // [-1, 1] on both axes fills the canvas (see fill).
    const sp = createScatterplot({ canvas: canvas.current, width, height, opacity: 0.85,
      backgroundColor: '#0c0d0f', lassoColor: [0.36, 0.62, 1, 1], lassoMinDelay: 0, lassoMinDist: 2 })
    plot.current = sp
    // A hook for scripts and tests: where point i (in the drawn order) is on the canvas, in CSS pixels.
    canvas.current.pointAt = (i) => sp.getScreenPosition(i)
    canvas.current.uniqueNameAt = (i) => plotData.current?.uniqueName[i]
    sp.subscribe('pointOver', (i) => setHover({ i, at: mouse.current }))
    sp.subscribe('pointOut', () => setHover(null))
    sp.subscribe('select', ({ points }) => setPicked(points))
    sp.subscribe('deselect', () => setPicked([]))
    // The canvas follows its box (window size, a banner appearing above it).
    const watch = new ResizeObserver(() => {
      const r = canvas.current.getBoundingClientRect()
      if (r.width > 0 && r.height > 0) sp.set({ width: r.width, height: r.height })
    })
    watch.observe(canvas.current)
    return () => { watch.disconnect(); sp.destroy() }
  }, [])

  useEffect(() => {
    const sp = plot.current
    plotData.current = data
    const t0 = performance.now()
    // Few points are drawn large enough to hover; many small enough to show density.
    const n = data.x.length
    sp.set({ colorBy: 'valueA', pointColor: [...PALETTE, GREY], pointSize: n < 2000 ? 10 : n < 30000 ? 5 : 3 })
    sp.draw({ x: data.x, y: data.y, valueA: data.valueA }).then(() => setDrawMs(performance.now() - t0))
    setPicked([])
  }, [data])

  const open = () => {
    const id = pickNames(picked.map((i) => data.uniqueName[i]))
    navigate('/?' + qs({ picked: id }))
  }
  return (
    <div class="map-body">
      <div class="map-canvas-wrap" onMouseMove={(e) => { mouse.current = [e.offsetX, e.offsetY] }}>
        <canvas ref={canvas} class="map-canvas" data-testid="map-canvas" data-points={data.x.length}
          data-draw-ms={drawMs == null ? '' : drawMs.toFixed(0)} data-load-ms={data.loadMs.toFixed(0)} />
        {hover && <HoverThumb name={data.uniqueName[hover.i]} at={hover.at} box={canvas.current.getBoundingClientRect()} />}
      </div>
      <aside class="map-side">
        <div data-testid="map-selected" data-count={picked.length}>
          {picked.length ? `${picked.length.toLocaleString('en')} selected` : 'Shift-drag to select points'}
        </div>
        {picked.length > 0 && <button data-testid="map-open-grid" onClick={open}>Show in the grid</button>}
        {data.names.length > 0 && <Legend data={data} picked={picked} />}
      </aside>
    </div>
  )
}

// Legend names the colours with how many points have each: of the whole map,
// or once points are selected, of the selection (and of the map beside it).
function Legend({ data, picked }) {
  const all = new Array(PALETTE.length + 1).fill(0)
  for (const v of data.valueA) all[v]++
  let sel = null
  if (picked.length) {
    sel = new Array(PALETTE.length + 1).fill(0)
    for (const i of picked) sel[data.valueA[i]]++
  }
  const rows = data.names.slice(0, PALETTE.length).map((v, i) => [v.name, PALETTE[i], i])
  if (all[PALETTE.length] > 0) rows.push([data.names.length > PALETTE.length ? 'other or none' : 'none', GREY, PALETTE.length])
  return (
    <ul class="legend" data-testid="map-legend" data-of={sel ? 'selection' : 'map'}>
      {sel && <li class="muted">in the selection, of all</li>}
      {rows.map(([name, color, i]) => (
        <li data-testid="map-legend-row" data-name={name} data-count={sel ? sel[i] : all[i]} class={sel && !sel[i] ? 'none-picked' : ''}>
          <span class="dot" style={{ background: color }} />{name}{' '}
          <span class="muted">{sel ? `${sel[i]} of ${all[i]}` : all[i]}</span>
        </li>
      ))}
    </ul>
  )
}

// Thumbnail URLs are signed per file, so a hovered point's is fetched once.
const thumbs = new Map()
function HoverThumb({ name, at, box }) {
  const [item, setItem] = useState(thumbs.get(name))
  useEffect(() => {
    if (thumbs.has(name)) return setItem(thumbs.get(name))
    let live = true
    api('/lake/files/' + encodeURIComponent(name)).then((it) => { thumbs.set(name, it); live && setItem(it) }, () => {})
    return () => { live = false }
  }, [name])
  return (
    <div class="map-hover" data-testid="map-hover" data-unique-name={name} style={{
      // Beside the cursor, on the side with room for a 150 px card.
      [at[0] > box.width - 170 ? 'right' : 'left']: (at[0] > box.width - 170 ? box.width - at[0] + 14 : at[0] + 14) + 'px',
      [at[1] > box.height - 180 ? 'bottom' : 'top']: (at[1] > box.height - 180 ? box.height - at[1] + 14 : at[1] + 14) + 'px',
    }}>
      {item?.thumbUrl && <img src={item.thumbUrl.replace(/\/thumbs\/\d+\//, '/thumbs/128/')} alt="" />}
      <div>{item?.name ?? name}</div>
    </div>
  )
}
