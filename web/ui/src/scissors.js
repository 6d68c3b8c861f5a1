import { framePixels } from './assist.js'
import { simplify, traceWire } from './livewire.js'

// Intelligent scissors (issue 33, "a polygon edge that snaps to image edges
// as you move the mouse"): each click sets an anchor; from the last anchor,
// a Web Worker (scissors.worker.js) computes the live-wire map (livewire.js:
// Dijkstra over a gradient-magnitude and direction cost) over a window of
// the frame's full-resolution pixels around it (the worker holds the frame's
// pixels and cuts the window itself), and each cursor move only
// walks that map back from the cursor: a few hundred array reads, so a 4K
// frame moves as a small one. A cursor past the window asks for a wider one
// (the path is a straight line until it arrives). A click commits the path
// to it, simplified (Douglas–Peucker, TOL px); closing adds the path back to
// the first anchor.

const MINR = 256 // a new anchor's window: ±MINR image pixels
const MAXR = 1400 // the widest window asked for (2801² pixels, a 4K frame's height)
const TOL = 0.8 // px: a committed path's vertices stay within TOL of its pixels

let worker = null
let seq = 0
let sent = null // the frame URL whose pixels the worker holds
const waiting = new Map()
// wire asks the worker for the map of a window of frame px (at url): the
// frame's pixels go with the first request on that frame (a copy: px stays
// the page's), later requests send only the window.
function wire(url, px, req) {
  if (!worker) {
    worker = new Worker(new URL('./scissors.worker.js', import.meta.url), { type: 'module' })
    worker.onmessage = (e) => { const done = waiting.get(e.data.id); waiting.delete(e.data.id); done?.(e.data) }
    worker.onerror = (e) => { sent = null; for (const done of waiting.values()) done({ error: e.message || 'the scissors worker failed' }); waiting.clear() }
  }
  const id = ++seq
  const msg = { ...req, id, url }
  if (sent !== url) { msg.rgba = px.data.slice().buffer; msg.fw = px.w; msg.fh = px.h; sent = url }
  return new Promise((resolve) => { waiting.set(id, resolve); worker.postMessage(msg, msg.rgba ? [msg.rgba] : []) })
}

// snap moves a click to the strongest edge (Sobel magnitude of the grey
// image) within r pixels, so an anchor dropped near an edge lies on it.
export function snap(px, p, r) {
  const { w, h, data } = px
  const cx = Math.min(w - 1, Math.max(0, Math.floor(p.x))), cy = Math.min(h - 1, Math.max(0, Math.floor(p.y)))
  r = Math.max(1, Math.round(r))
  const grey = (x, y) => { const k = (y * w + x) * 4; return 0.299 * data[k] + 0.587 * data[k + 1] + 0.114 * data[k + 2] }
  let best = { x: cx, y: cy }, bm = 60 // below this (a grey step of about 15) there is no edge to snap to
  for (let y = Math.max(1, cy - r); y <= Math.min(h - 2, cy + r); y++) {
    for (let x = Math.max(1, cx - r); x <= Math.min(w - 2, cx + r); x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 > r * r) continue
      const gx = grey(x + 1, y - 1) + 2 * grey(x + 1, y) + grey(x + 1, y + 1) - grey(x - 1, y - 1) - 2 * grey(x - 1, y) - grey(x - 1, y + 1)
      const gy = grey(x - 1, y + 1) + 2 * grey(x, y + 1) + grey(x + 1, y + 1) - grey(x - 1, y - 1) - 2 * grey(x, y - 1) - grey(x + 1, y - 1)
      const m = Math.sqrt(gx * gx + gy * gy) - 2 * Math.hypot(x - cx, y - cy) // nearer wins a tie
      if (m > bm) { bm = m; best = { x, y } }
    }
  }
  return best
}

// Scissors is one polygon being cut on frame ({url, width, height}).
// onUpdate is called when a wider window's map arrives (redraw the path).
export class Scissors {
  constructor(frame, onUpdate) {
    this.frame = frame
    this.onUpdate = onUpdate
    this.px = framePixels(frame.url, frame.width, frame.height)
    this.anchors = [] // integer pixels
    this.pts = [] // the committed outline, [x, y, ...] in image pixels (pixel centres)
    this.live = null // the path from the last anchor to the cursor
    this.map = null // {dir, x0, y0, w, h, a}: the last anchor's live-wire map
    this.widening = null
    this.chain = Promise.resolve()
    this.lastMapMs = 0
  }

  // mapFrom asks the worker for anchor a's map over ±r pixels (clipped to the frame).
  async mapFrom(a, r) {
    const px = await this.px
    r = Math.min(MAXR, Math.max(MINR, Math.ceil(r)))
    const x0 = Math.max(0, a.x - r), y0 = Math.max(0, a.y - r)
    const x1 = Math.min(px.w, a.x + r + 1), y1 = Math.min(px.h, a.y + r + 1)
    const w = x1 - x0, h = y1 - y0
    const ans = await wire(this.frame.url, px, { x0, y0, w, h, ax: a.x - x0, ay: a.y - y0 })
    if (ans.error) throw new Error(ans.error)
    this.lastMapMs = ans.ms
    return { dir: ans.dir, x0, y0, w, h, a, r }
  }

  // trace is the map's path from its anchor to integer pixel q in image
  // pixels, or null when q is outside its window.
  static trace(m, q) {
    const t = m && traceWire(m.dir, m.w, m.h, q.x - m.x0, q.y - m.y0)
    if (!t) return null
    for (let i = 0; i < t.length; i += 2) { t[i] += m.x0 + 0.5; t[i + 1] += m.y0 + 0.5 }
    return t
  }

  // pathTo is the path from the last anchor to q, widening the map first when q is past it.
  async pathTo(q) {
    const a = this.anchors[this.anchors.length - 1]
    let t = Scissors.trace(this.map, q)
    if (!t) {
      this.map = await this.mapFrom(a, 1.25 * Math.max(Math.abs(q.x - a.x), Math.abs(q.y - a.y)) + 32)
      t = Scissors.trace(this.map, q)
    }
    return t ?? [a.x + 0.5, a.y + 0.5, q.x + 0.5, q.y + 0.5]
  }

  // down sets an anchor at p (snapped to an edge within r pixels),
  // committing the path to it; clicks are taken in order, each once the
  // last anchor's map is in.
  down(p, r) {
    this.chain = this.chain.then(async () => {
      const q = snap(await this.px, p, r)
      if (this.anchors.length) {
        const last = this.anchors[this.anchors.length - 1]
        if (last.x === q.x && last.y === q.y) return
        this.pts.push(...simplify(await this.pathTo(q), TOL).slice(2))
      } else this.pts.push(q.x + 0.5, q.y + 0.5)
      this.anchors.push(q)
      this.live = null
      this.map = null
      this.map = await this.mapFrom(q, MINR)
      this.onUpdate()
    })
    return this.chain
  }

  // move follows the cursor: the map's path to it when it is inside the
  // window (synchronous), else a straight line while a wider map is asked for.
  move(p) {
    const a = this.anchors[this.anchors.length - 1]
    if (!a) return
    const q = { x: Math.min(this.frame.width - 1, Math.max(0, Math.floor(p.x))), y: Math.min(this.frame.height - 1, Math.max(0, Math.floor(p.y))) }
    this.cursor = q
    const m = this.map
    this.live = (m?.a === a && Scissors.trace(m, q)) || [a.x + 0.5, a.y + 0.5, q.x + 0.5, q.y + 0.5]
    if (m && m.a === a && !this.widening && (q.x < m.x0 || q.y < m.y0 || q.x >= m.x0 + m.w || q.y >= m.y0 + m.h) && m.r < MAXR) {
      this.widening = this.mapFrom(a, 1.5 * Math.max(Math.abs(q.x - a.x), Math.abs(q.y - a.y)) + 32).then((wide) => {
        this.widening = null
        if (this.anchors[this.anchors.length - 1] !== a) return
        this.map = wide
        this.live = Scissors.trace(wide, this.cursor) ?? this.live
        this.onUpdate()
      }, () => { this.widening = null })
    }
  }

  // close answers the outline closed by the path back to the first anchor
  // (a ring of at least 3 vertices), or null with fewer than 3 anchors' worth.
  close() {
    this.chain = this.chain.then(async () => {
      if (this.anchors.length < 2) return null
      const back = simplify(await this.pathTo(this.anchors[0]), TOL)
      const ring = [...this.pts, ...back.slice(2, -2)]
      return ring.length >= 6 ? ring : null
    })
    return this.chain
  }

  // draw draws the committed outline and the live path (label colour over a
  // dark halo) and the anchors, on g in image pixels (k canvas px per image px).
  draw(g, k, color) {
    const path = () => {
      g.beginPath()
      const all = this.live ? [this.pts, this.live] : [this.pts]
      for (const pts of all) {
        if (!pts.length) continue
        g.moveTo(pts[0], pts[1])
        for (let i = 2; i < pts.length; i += 2) g.lineTo(pts[i], pts[i + 1])
      }
    }
    path()
    g.lineJoin = 'round'
    g.strokeStyle = 'rgba(0,0,0,0.7)'
    g.lineWidth = 4 / k
    g.stroke()
    g.strokeStyle = color
    g.lineWidth = 2 / k
    g.stroke()
    g.fillStyle = '#fff'
    for (const a of this.anchors) g.fillRect(a.x + 0.5 - 3 / k, a.y + 0.5 - 3 / k, 6 / k, 6 / k)
  }
}
