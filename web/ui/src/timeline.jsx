import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { colorOf } from './shapes.jsx'
import { keyIndex, spans } from './tracks.js'

// Timeline is the video workspace's strip under the frame: one row per track
// in its label's colour, keyframes as solid marks, interpolated stretches as
// lighter bars, frames out of view as gaps, the current frame as a line. It
// is one <canvas> the size of the strip's view, drawn at each change with
// the rows in view (the strip scrolls over a spacer as tall as every row):
// 200 tracks over 18,000 frames draw the dozen or so rows on screen, marks
// that fall on one pixel column drawn once, never a DOM node per keyframe.
//
// Mouse: press and drag on the ruler or a row to scrub (the frame follows);
// a press on a keyframe drags it to another frame; a click on a row selects
// its track, Ctrl/Cmd- or Shift-click adds it to the selection (merge).
export const RULER = 18
export const ROW = 14
export const GUTTER = 84 // the tracks' names
const VIEW = 240 // the strip's height at most, in CSS pixels

export function Timeline({ tracks, frames, frame, selected, onJump, onSelect, onMoveKey }) {
  const wrap = useRef()
  const cnv = useRef()
  const drag = useRef(null)
  const [width, setWidth] = useState(0)
  const [ghost, setGhost] = useState(null) // {number, from, to} while a keyframe is dragged
  const [top, setTop] = useState(0) // the strip's scroll offset

  useLayoutEffect(() => {
    const el = wrap.current
    const measure = () => setWidth(el.clientWidth)
    measure()
    const watch = new ResizeObserver(measure)
    watch.observe(el)
    return () => watch.disconnect()
  }, [])

  const span = Math.max(1, frames)
  const h = RULER + Math.max(1, tracks.length) * ROW
  const view = Math.min(h, VIEW)
  const xOf = (f) => GUTTER + (f * (width - GUTTER)) / span
  const frameOf = (x) => Math.max(0, Math.min(span - 1, Math.floor(((x - GUTTER) * span) / Math.max(1, width - GUTTER))))

  useLayoutEffect(() => {
    const c = cnv.current
    if (!c || width <= 0) return
    const args = { tracks, frames: span, frame, selected, width, xOf, ghost, top, view }
    const paint = () => draw(c, args)
    const t0 = performance.now()
    paint()
    const ms = performance.now() - t0
    c.drawNow = paint
    c.dataset.drawMs = ms.toFixed(2)
    c.dataset.tracks = tracks.length
    c.dataset.frame = frame
    // For scripts and tests: where a frame and a track's row are, in CSS
    // pixels of the canvas.
    c.xOf = (f) => xOf(f + 0.5)
    c.yOf = (number) => RULER + tracks.findIndex((t) => t.number === number) * ROW + ROW / 2 - top
  })

  const at = (e) => {
    const r = cnv.current.getBoundingClientRect()
    return { x: e.clientX - r.left, y: e.clientY - r.top }
  }
  const rowAt = (y) => (y < RULER ? null : tracks[Math.floor((y - RULER + top) / ROW)] ?? null)
  // keyNear is the track's keyframe within 4 px of x, if any.
  const keyNear = (t, x) => {
    const f = frameOf(x)
    const k = keyIndex(t, f)
    let best = null
    for (const j of [k, k + 1]) {
      const kf = t.keyframes[j]
      if (!kf) continue
      const d = Math.abs(xOf(kf.frame + 0.5) - x)
      if (d <= Math.max(4, (width - GUTTER) / span / 2) && (!best || d < best.d)) best = { d, frame: kf.frame }
    }
    return best?.frame ?? null
  }

  const down = (e) => {
    if (e.button !== 0) return
    const p = at(e)
    const t = rowAt(p.y)
    e.currentTarget.setPointerCapture(e.pointerId)
    e.preventDefault()
    const additive = e.ctrlKey || e.metaKey || e.shiftKey
    if (t) onSelect(t.number, additive)
    if (t && !additive && p.x >= GUTTER) {
      const k = keyNear(t, p.x)
      if (k != null) {
        drag.current = { mode: 'key', number: t.number, from: k, to: k }
        onJump(k)
        return
      }
    }
    if (p.x < GUTTER && t) return
    drag.current = { mode: 'scrub' }
    onJump(frameOf(p.x))
  }
  const move = (e) => {
    const d = drag.current
    if (!d) return
    const p = at(e)
    if (d.mode === 'scrub') return onJump(frameOf(p.x))
    d.to = frameOf(p.x)
    setGhost({ number: d.number, from: d.from, to: d.to })
  }
  const up = () => {
    const d = drag.current
    drag.current = null
    setGhost(null)
    if (d?.mode === 'key' && d.to !== d.from) onMoveKey(d.number, d.from, d.to)
  }

  return (
    <div class="timeline" ref={wrap} style={{ maxHeight: VIEW + 'px' }} onScroll={(e) => setTop(e.currentTarget.scrollTop)}>
      <div class="timeline-rows" style={{ height: h + 'px' }}>
        <canvas ref={cnv} data-testid="timeline" width={Math.max(1, Math.floor(width * devicePixelRatio))}
          height={Math.floor(view * devicePixelRatio)} style={{ width: width + 'px', height: view + 'px' }}
          onPointerDown={down} onPointerMove={move} onPointerUp={up} onPointerCancel={up} />
      </div>
    </div>
  )
}

// draw paints the timeline's rows in view (scrolled by top) under its
// ruler on c (its backing store at devicePixelRatio).
function draw(c, { tracks, frames, frame, selected, width, xOf, ghost, top, view }) {
  const g = c.getContext('2d')
  const k = devicePixelRatio
  g.setTransform(k, 0, 0, k, 0, 0)
  const h = view
  g.fillStyle = '#15171a'
  g.fillRect(0, 0, width, h)
  g.font = '11px system-ui, sans-serif'
  g.textBaseline = 'middle'
  const first = Math.max(0, Math.floor(top / ROW))
  const end = Math.min(tracks.length, Math.ceil((top + h - RULER) / ROW))
  for (let i = first; i < end; i++) {
    const t = tracks[i]
    const y = RULER + i * ROW - top
    const on = selected.includes(t.number)
    if (on || i % 2) {
      g.fillStyle = on ? '#2b3a52' : '#1b1e22'
      g.fillRect(0, y, width, ROW)
    }
    const color = colorOf({ label: t.label, source: 'human' })
    g.fillStyle = on ? '#fff' : '#aab'
    g.fillText(`#${t.number} ${t.label}`.slice(0, 14), 4, y + ROW / 2)
    // Interpolated stretches: a light bar from each keyframe to the end of
    // its span; outside frames are left as gaps.
    g.globalAlpha = 0.4
    g.fillStyle = color
    for (const [a, b] of spans(t)) {
      if (b <= a) continue
      const x0 = xOf(a), x1 = xOf(b + 1)
      g.fillRect(x0, y + 4, Math.max(1, x1 - x0), ROW - 8)
    }
    g.globalAlpha = 1
    // Keyframes: a solid mark each, one per pixel column.
    let last = -1
    const kw = Math.max(2, Math.min(6, xOf(1) - xOf(0)))
    for (const kf of t.keyframes) {
      if (ghost && ghost.number === t.number && kf.frame === ghost.from) continue
      const x = Math.floor(xOf(kf.frame + 0.5) - kw / 2)
      if (x === last) continue
      last = x
      g.fillRect(x, y + 2, kw, ROW - 4)
    }
    if (ghost && ghost.number === t.number) {
      g.fillStyle = '#fff'
      g.fillRect(Math.floor(xOf(ghost.to + 0.5) - kw / 2), y + 1, kw, ROW - 2)
    }
  }
  ruler(g, frames, width, xOf)
  // The current frame.
  const x = Math.floor(xOf(frame + 0.5))
  g.fillStyle = '#ff5252'
  g.fillRect(x, 0, 1, h)
}

// ruler marks frame numbers at a round step about every 80 px.
function ruler(g, frames, width, xOf) {
  const per = (80 * frames) / Math.max(1, width - GUTTER)
  const steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000]
  const step = steps.find((s) => s >= per) ?? 10000
  g.fillStyle = '#1f2226'
  g.fillRect(0, 0, width, RULER)
  g.fillStyle = '#889'
  g.font = '10px system-ui, sans-serif'
  g.textBaseline = 'middle'
  for (let f = 0; f < frames; f += step) {
    const x = Math.floor(xOf(f))
    g.fillRect(x, RULER - 5, 1, 5)
    g.fillText(String(f), x + 2, RULER / 2 - 1)
  }
}
