import { useEffect, useRef, useState } from 'preact/hooks'
import { newKey } from './frameio.js'
import { fitStyle, placeLabels } from './labels.js'
import { isBox } from './shapes.jsx'

// Space held down lends a drag to zoom.js (pan) instead of drawing.
let spaceHeld = false
addEventListener('keydown', (e) => { if (e.key === ' ' && !/INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName)) spaceHeld = true })
addEventListener('keyup', (e) => { if (e.key === ' ') spaceHeld = false })

const MIN = 2 // pixels of the image: a smaller drag is a click, not a box

// FrameCanvas shows a frame's image with its boxes and lets the annotator
// draw a box by dragging on the image, move one by dragging it and resize it
// by its corner handles. Boxes are placed in percentages of the stored pixel
// size, so zoom (a transform on the parent) moves them with the image.
// onChange(boxes) is called once per finished gesture. Every other shape is
// drawn and edited on the canvas below the boxes by editor (draw.js), with
// the workspace's tool; classes are chips at the frame's top.
export function FrameCanvas({ frame, boxes, suggestions, selected, onSelect, onChange, label, readOnly, ready, onLoad, zoomRef, zoomStyle, fit,
  editor, tool = 'box', brush = 10, hole = false, opacity = 0.35, hidden, skeletonOf, onDraft, zoom = 1, proposal, onAssist, children }) {
  const img = useRef()
  const cnv = useRef()
  const drag = useRef(null)
  const [draft, setDraft] = useState(null) // boxes while a gesture is under way

  useEffect(() => setDraft(null), [frame.uniqueName])
  editor.set({ frame, shapes: boxes, selected, label, readOnly, tool, brush, hole, opacity, hidden, skeletonOf, onDraft, zoom, fit, proposal, onAssist,
    canvas: () => cnv.current, img: () => img.current,
    onSelect: (i) => onSelect(i), onChange: (next, i) => onChange(next, i) })

  const at = (e) => {
    const r = img.current.getBoundingClientRect()
    const x = ((e.clientX - r.left) * frame.width) / r.width
    const y = ((e.clientY - r.top) * frame.height) / r.height
    return { x: Math.min(frame.width, Math.max(0, x)), y: Math.min(frame.height, Math.max(0, y)) }
  }

  const down = (e) => {
    if (readOnly || spaceHeld) return // zoom.js pans
    // The segment tool's right-click is a negative click.
    if (e.button === 2 && tool === 'segment' && editor.down(e, at(e))) {
      e.stopPropagation()
      drag.current = { mode: 'editor' }
      return e.currentTarget.setPointerCapture(e.pointerId)
    }
    if (e.button !== 0) return
    // Alt-drag pans too, unless Alt-click deletes a vertex of the selected shape.
    if (e.altKey && !editor.altDown(e, at(e))) return
    if (e.altKey) return e.stopPropagation()
    e.stopPropagation()
    e.preventDefault()
    const p = at(e)
    const handle = e.target.closest('[data-handle]')
    const boxEl = e.target.closest('[data-index]')
    if (!handle && !boxEl && e.target.closest('[data-class]')) return onSelect(+e.target.closest('[data-class]').dataset.class)
    if (!handle && !boxEl && editor.down(e, p)) {
      drag.current = { mode: 'editor' }
    } else if (tool !== 'box') {
      return
    } else if (handle) {
      const i = +handle.dataset.index
      drag.current = { mode: 'resize', i, corner: handle.dataset.handle, p, orig: boxes[i] }
    } else if (boxEl && boxEl.dataset.source === 'human') {
      const i = +boxEl.dataset.index
      onSelect(i)
      drag.current = { mode: 'move', i, p, orig: boxes[i] }
    } else {
      if (boxEl) return onSelect(null, boxEl.dataset.suggestion)
      onSelect(null)
      drag.current = { mode: 'draw', p }
    }
    e.currentTarget.setPointerCapture(e.pointerId)
  }

  const shaped = (d, p) => {
    if (d.mode === 'draw') {
      const b = { key: d.key ?? (d.key = newKey()), label, attributes: {}, source: 'human',
        x: Math.min(d.p.x, p.x), y: Math.min(d.p.y, p.y), width: Math.abs(p.x - d.p.x), height: Math.abs(p.y - d.p.y) }
      return [...boxes, b]
    }
    const o = d.orig
    let b
    if (d.mode === 'move') {
      const dx = p.x - d.p.x, dy = p.y - d.p.y
      b = { ...o, x: o.x + dx, y: o.y + dy }
    } else {
      let [x0, y0, x1, y1] = [o.x, o.y, o.x + o.width, o.y + o.height]
      if (d.corner.includes('w')) x0 = p.x
      if (d.corner.includes('e')) x1 = p.x
      if (d.corner.includes('n')) y0 = p.y
      if (d.corner.includes('s')) y1 = p.y
      b = { ...o, x: Math.min(x0, x1), y: Math.min(y0, y1), width: Math.abs(x1 - x0), height: Math.abs(y1 - y0) }
    }
    return boxes.map((x, i) => (i === d.i ? b : x))
  }

  const move = (e) => {
    const d = drag.current
    if (!d || d.mode === 'editor') {
      if (editor.move(e, at(e))) e.stopPropagation()
      return
    }
    e.stopPropagation()
    d.last = at(e)
    setDraft(shaped(d, d.last))
  }

  const up = (e) => {
    const d = drag.current
    if (!d) return
    e.stopPropagation()
    drag.current = null
    if (d.mode === 'editor') return editor.up()
    setDraft(null)
    if (!d.last) return
    const next = shaped(d, d.last)
    if (d.mode === 'draw') {
      const b = next[next.length - 1]
      if (b.width < MIN || b.height < MIN) return
      onChange(next, next.length - 1)
    } else {
      const b = next[d.i]
      if (b.width < MIN || b.height < MIN) return
      if (b.x === d.orig.x && b.y === d.orig.y && b.width === d.orig.width && b.height === d.orig.height) return
      onChange(next, d.i)
    }
  }

  const shown = draft ?? boxes
  // Boxes are DOM elements; their indices are kept, as selection and
  // onChange speak of the frame's whole list.
  const boxIdx = []
  const classIdx = []
  shown.forEach((b, i) => { if (isBox(b)) { if (!hidden?.(b)) boxIdx.push(i) } else if (b.type === 'class') classIdx.push(i) })
  const shownBoxes = boxIdx.map((i) => shown[i])
  const pct = (b) => ({
    left: (100 * b.x) / frame.width + '%', top: (100 * b.y) / frame.height + '%',
    width: (100 * b.width) / frame.width + '%', height: (100 * b.height) / frame.height + '%',
  })
  // Labels go where they overlap no other (labels.js): the selected box's
  // first, then human boxes', then the surer suggestions'.
  const all = [...suggestions, ...shownBoxes]
  const texts = all.map((b, i) => (i < suggestions.length ? `${b.label} ${b.confidence.toFixed(2)}` : b.label))
  const rank = (i) => (i < suggestions.length ? (suggestions[i].id === selected?.suggestion ? 0 : 2) : (boxIdx[i - suggestions.length] === selected?.index ? 0 : 1))
  const where = placeLabels(all, texts, frame.width, frame.height, fit, rank)
  return (
    <div class="frame ws-frame" ref={zoomRef} style={zoomStyle}>
      <img ref={img} src={frame.url} class="media" data-testid="frame-image" draggable={false} style={fitStyle(fit)} onLoad={(e) => e.currentTarget.decode().catch(() => {}).then(onLoad)} alt={frame.uniqueName} />
      <div class={'ws-canvas tool-' + tool + (readOnly ? ' read-only' : '')} data-testid="frame-canvas" data-frame={frame.uniqueName} data-ready={ready ? '1' : '0'}
        data-tool={tool} onPointerDown={down} onPointerMove={move} onPointerUp={up} onPointerCancel={up} onDblClick={(e) => { if (editor.finish()) e.stopPropagation() }}
        onContextMenu={(e) => { if (tool === 'segment') e.preventDefault() }}>
        <canvas ref={cnv} class="shape-layer" data-testid="shape-canvas" />
        {classIdx.length > 0 && (
          <div class="classes ws-classes" data-testid="frame-classes">
            {classIdx.map((i) => <span class={'class-chip human' + (i === selected?.index ? ' selected' : '')} data-class={i} data-testid="class-chip" data-label={shown[i].label}>{shown[i].label}</span>)}
          </div>
        )}
        {suggestions.map((s, j) => (
          <div class={'box machine' + (s.id === selected?.suggestion ? ' selected' : '')} data-testid="box" data-label={s.label}
            data-source="machine" data-suggestion={s.id} data-index={-1} style={pct(s)} title={`${s.label} ${s.confidence.toFixed(2)}`}>
            <span class={'box-label at-' + where[j]} data-testid="box-label" data-place={where[j]}>{texts[j]}</span>
          </div>
        ))}
        {boxIdx.map((i, n) => { const b = shown[i]; return (
          <div key={b.key} class={'box human' + (i === selected?.index ? ' selected' : '') + (b.interpolated ? ' interpolated' : '')} data-testid="box" data-label={b.label}
            data-source="human" data-index={i} style={pct(b)}>
            <span class={'box-label at-' + where[suggestions.length + n]} data-testid="box-label" data-place={where[suggestions.length + n]}>{b.label}</span>
            {i === selected?.index && !readOnly && ['nw', 'ne', 'sw', 'se'].map((c) => (
              <span class={'handle ' + c} data-handle={c} data-index={i} data-testid="box-handle" />
            ))}
          </div>
        ) })}
        {children}
      </div>
    </div>
  )
}
