import { useEffect, useRef, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'
import { applyToPatches } from './reviewbulk.js'
import { ShapeLayer, isBox } from './shapes.jsx'

const CELL = 140 // px a patch takes across, its gap included
const ROW = 168 // px a patch takes down: the crop and its label and confidence
const PAGE = 500 // patches fetched at once

// Review is a grid of crops of every box or shape of a label (each drawn on its crop), in the whole lake or on
// a task's frames (/review?label=car&taskId=&source=), to spot wrong labels
// fast. Only the rows in view (and a screen either side) are in the DOM, and
// the pages a screen ahead are fetched before they are reached. A click opens
// the box's frame in its task's workspace (or the item view).
//
// A write key chooses patches (Ctrl/Cmd-click one, Shift-click a range) and
// relabels or rejects them together (reviewbulk.js), as FiftyOne's patches
// view does; a plain click still opens the frame.
export function Review({ search, me }) {
  const p = new URLSearchParams(search)
  const [label, setLabel] = useState(p.get('label') ?? '')
  const taskId = p.get('taskId') ?? ''
  const source = p.get('source') ?? ''
  const [count, setCount] = useState(null)
  const [error, setError] = useState(null)
  const [view, setView] = useState({ top: 0, height: 800, width: 1000 })
  const pages = useRef(new Map())
  const skeleton = useRef() // the label's declared edges, when its patches are keypoints
  const [, setTick] = useState(0)
  const box = useRef()
  const canWrite = me?.role !== 'read'
  const [picked, setPicked] = useState(() => new Map()) // index -> patch
  const [anchor, setAnchor] = useState(null)
  const [newLabel, setNewLabel] = useState('')
  const [busy, setBusy] = useState(false)
  const [done, setDone] = useState(null)

  const key = JSON.stringify([p.get('label'), taskId, source])
  const load = (i) => {
    if (pages.current.has(i)) return
    pages.current.set(i, null)
    api('/lake/patches?' + qs({ label: p.get('label'), taskId, source, pageIndex: i, pageSize: PAGE })).then((r) => {
      pages.current.set(i, r.patches)
      skeleton.current = r.skeleton
      setCount(r.patchCount)
      setTick((t) => t + 1)
    }, setError)
  }
  const reload = () => {
    pages.current = new Map()
    setCount(null)
    setError(null)
    setPicked(new Map())
    if (p.get('label')) load(0)
  }
  useEffect(reload, [key])
  const apply = async (action) => {
    setBusy(true)
    setDone(null)
    try {
      const r = await applyToPatches([...picked.values()], action, newLabel.trim())
      setDone(r)
      reload()
    } catch (e) {
      setDone({ changed: 0, skipped: [e.message] })
    } finally {
      setBusy(false)
    }
  }
  const pick = (e, i, x) => {
    if (!canWrite || !(e.ctrlKey || e.metaKey || e.shiftKey || picked.size)) return false
    const next = new Map(picked)
    if (e.shiftKey && anchor != null) {
      for (let j = Math.min(anchor, i); j <= Math.max(anchor, i); j++) if (at(j)) next.set(j, at(j))
    } else if (next.has(i)) next.delete(i)
    else next.set(i, x)
    setPicked(next)
    setAnchor(i)
    return true
  }

  useEffect(() => {
    const el = box.current
    if (!el) return
    const on = () => setView({ top: el.scrollTop, height: el.clientHeight, width: el.clientWidth })
    on()
    el.addEventListener('scroll', on, { passive: true })
    addEventListener('resize', on)
    return () => { el.removeEventListener('scroll', on); removeEventListener('resize', on) }
  }, [count != null])

  const cols = Math.max(1, Math.floor(view.width / CELL))
  const first = Math.max(0, Math.floor(view.top / ROW) - Math.ceil(view.height / ROW)) * cols
  const last = Math.min(count ?? 0, (Math.ceil((view.top + 2 * view.height) / ROW) + 1) * cols)
  for (let i = Math.floor(first / PAGE); count && i <= Math.floor(Math.min(count - 1, last + PAGE / 2) / PAGE); i++) load(i)
  const at = (i) => pages.current.get(Math.floor(i / PAGE))?.[i % PAGE]
  const open = (x) => navigate(x.taskId ? `/tasks/${x.taskId}?frame=${x.frameIndex}` : '/items/' + encodeURIComponent(x.uniqueName))

  const cells = []
  for (let i = first; i < last; i++) {
    const x = at(i)
    const style = { left: (i % cols) * CELL + 'px', top: Math.floor(i / cols) * ROW + 'px' }
    const conf = x?.confidence != null ? x.confidence.toFixed(2) : ''
    cells.push(x
      ? <a key={i} class={'patch-cell' + (picked.has(i) ? ' picked' : '')} style={style} data-testid="patch" data-unique-name={x.uniqueName} data-label={x.label} data-type={x.type ?? 'box'}
          data-index={i} data-id={x.id} data-picked={picked.has(i) ? 'true' : 'false'}
          href={x.taskId ? `/tasks/${x.taskId}?frame=${x.frameIndex}` : '/items/' + encodeURIComponent(x.uniqueName)}
          onClick={(e) => { e.preventDefault(); if (!pick(e, i, x)) open(x) }} title={`${x.label} · ${x.source}${conf && ' ' + conf} · ${x.uniqueName}`}>
          <span class={'patch ' + x.source}><Crop x={x} skeleton={skeleton.current} /></span>
          <span class="patch-caption" data-testid="patch-caption"><span class="patch-label">{x.label}</span> <span class="muted">{conf || x.source}</span></span>
        </a>
      : <span key={i} class="patch-cell" style={style} data-index={i}><span class="patch loading" /></span>)
  }
  return (
    <div class="review">
      <form class="inline-form review-bar" onSubmit={(e) => { e.preventDefault(); navigate('/review?' + qs({ label, taskId, source })) }}>
        <input value={label} onInput={(e) => setLabel(e.currentTarget.value)} placeholder="label" data-testid="review-label" />
        <button type="submit">Show shapes</button>
        {taskId && <span class="muted">on task {taskId}</span>}
        {count != null && <span class="count" data-testid="patch-count">{count.toLocaleString()} {count === 1 ? 'shape' : 'shapes'}</span>}
        <span class="muted">green: human · orange: machine · click opens the frame{canWrite && ' · Ctrl-click or Shift-click chooses'}</span>
      </form>
      {canWrite && picked.size > 0 && (
        <form class="inline-form review-bar review-bulk" data-testid="review-bulk" onSubmit={(e) => { e.preventDefault(); if (newLabel.trim()) apply('relabel') }}>
          <strong data-testid="review-picked" data-count={picked.size}>{picked.size} chosen</strong>
          <input value={newLabel} onInput={(e) => setNewLabel(e.currentTarget.value)} placeholder="new label" data-testid="review-new-label" />
          <button type="submit" disabled={busy || !newLabel.trim()} data-testid="review-relabel">Relabel</button>
          <button type="button" class="ghost" disabled={busy} data-testid="review-reject" onClick={() => apply('reject')}>Reject (delete)</button>
          <button type="button" class="ghost" onClick={() => setPicked(new Map())}>Clear</button>
        </form>
      )}
      {done && (
        <div class="review-bar muted" data-testid="review-done" data-changed={done.changed}>
          {done.changed} {done.changed === 1 ? 'shape' : 'shapes'} changed
          {done.skipped.length > 0 && <span class="error"> · not changed: {done.skipped.join('; ')}</span>}
        </div>
      )}
      {error && <div class="error" role="alert">{error.message}</div>}
      <div class="review-scroll" ref={box}>
        <div class="spacer" style={{ height: Math.ceil((count ?? 0) / cols) * ROW + 'px' }}>{cells}</div>
      </div>
    </div>
  )
}

// Crop is a patch's crop with its shape drawn over it (a box's patch is
// its border): the crop is the box and a fifth of its larger side around
// it, within the image, as the server cuts it (web/review.go).
function Crop({ x, skeleton }) {
  const img = <img src={x.cropUrl} loading="eager" alt={x.label} draggable={false} />
  if (isBox(x) || x.type === 'class' || !x.fileWidth) return img
  const m = 0.2 * Math.max(x.width, x.height)
  const x0 = Math.max(0, x.x - m), y0 = Math.max(0, x.y - m)
  const region = [x0, y0, Math.min(x.fileWidth, x.x + x.width + m) - x0, Math.min(x.fileHeight, x.y + x.height + m) - y0]
  return (
    <span class="patch-crop">
      {img}
      <ShapeLayer shapes={[x]} width={x.fileWidth} height={x.fileHeight} region={region}
        skeletonOf={() => (skeleton ? { skeleton } : undefined)} testid="patch-shape" />
    </span>
  )
}
