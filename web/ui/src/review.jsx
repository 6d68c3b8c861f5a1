import { useEffect, useRef, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'

const CELL = 140 // px a patch takes, its gap included
const PAGE = 500 // patches fetched at once

// Review is a grid of crops of every box of a label, in the whole lake or on
// a task's frames (/review?label=car&taskId=&source=), to spot wrong labels
// fast. Only the rows in view (and a screen either side) are in the DOM, and
// the pages a screen ahead are fetched before they are reached. A click opens
// the box's frame in its task's workspace (or the item view).
export function Review({ search }) {
  const p = new URLSearchParams(search)
  const [label, setLabel] = useState(p.get('label') ?? '')
  const taskId = p.get('taskId') ?? ''
  const source = p.get('source') ?? ''
  const [count, setCount] = useState(null)
  const [error, setError] = useState(null)
  const [view, setView] = useState({ top: 0, height: 800, width: 1000 })
  const pages = useRef(new Map())
  const [, setTick] = useState(0)
  const box = useRef()

  const key = JSON.stringify([p.get('label'), taskId, source])
  const load = (i) => {
    if (pages.current.has(i)) return
    pages.current.set(i, null)
    api('/lake/patches?' + qs({ label: p.get('label'), taskId, source, pageIndex: i, pageSize: PAGE })).then((r) => {
      pages.current.set(i, r.patches)
      setCount(r.patchCount)
      setTick((t) => t + 1)
    }, setError)
  }
  useEffect(() => {
    pages.current = new Map()
    setCount(null)
    setError(null)
    if (p.get('label')) load(0)
  }, [key])

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
  const first = Math.max(0, Math.floor(view.top / CELL) - Math.ceil(view.height / CELL)) * cols
  const last = Math.min(count ?? 0, (Math.ceil((view.top + 2 * view.height) / CELL) + 1) * cols)
  for (let i = Math.floor(first / PAGE); count && i <= Math.floor(Math.min(count - 1, last + PAGE / 2) / PAGE); i++) load(i)
  const at = (i) => pages.current.get(Math.floor(i / PAGE))?.[i % PAGE]
  const open = (x) => navigate(x.taskId ? `/tasks/${x.taskId}?frame=${x.frameIndex}` : '/items/' + encodeURIComponent(x.uniqueName))

  const cells = []
  for (let i = first; i < last; i++) {
    const x = at(i)
    const style = { left: (i % cols) * CELL + 'px', top: Math.floor(i / cols) * CELL + 'px' }
    cells.push(x
      ? <a key={i} class={'patch ' + x.source} style={style} data-testid="patch" data-unique-name={x.uniqueName} data-label={x.label} data-index={i}
          href={x.taskId ? `/tasks/${x.taskId}?frame=${x.frameIndex}` : '/items/' + encodeURIComponent(x.uniqueName)}
          onClick={(e) => { e.preventDefault(); open(x) }} title={`${x.label} · ${x.source}${x.confidence != null ? ' ' + x.confidence.toFixed(2) : ''} · ${x.uniqueName}`}>
          <img src={x.cropUrl} loading="eager" alt={x.label} draggable={false} />
        </a>
      : <span key={i} class="patch loading" style={style} data-index={i} />)
  }
  return (
    <div class="review">
      <form class="inline-form review-bar" onSubmit={(e) => { e.preventDefault(); navigate('/review?' + qs({ label, taskId, source })) }}>
        <input value={label} onInput={(e) => setLabel(e.currentTarget.value)} placeholder="label" data-testid="review-label" />
        <button type="submit">Show boxes</button>
        {taskId && <span class="muted">on task {taskId}</span>}
        {count != null && <span class="count" data-testid="patch-count">{count.toLocaleString()} boxes</span>}
        <span class="muted">green: human · orange: machine · click opens the frame</span>
      </form>
      {error && <div class="error" role="alert">{error.message}</div>}
      <div class="review-scroll" ref={box}>
        <div class="spacer" style={{ height: Math.ceil((count ?? 0) / cols) * CELL + 'px' }}>{cells}</div>
      </div>
    </div>
  )
}
