import { useLayoutEffect, useRef } from 'preact/hooks'
import { decodeCounts } from './rle.js'

// Shapes other than boxes (docs/shapes.md) drawn on one <canvas> over the
// image, in the image's pixels scaled to the canvas: polygons filled
// even-odd (a ring inside another is a hole), masks as translucent fills,
// keypoints with their label's skeleton, polylines as open strokes. A canvas,
// not SVG: a frame of 200 polygons and 20 masks is one draw, and a vertex
// drag redraws it without React touching a node.

export const isBox = (a) => !a.type || a.type === 'box'
export const COLORS = { human: '#3ddc84', machine: '#ff9f1c' }
// A human shape's colour is its label's, so touching shapes of two labels
// read apart; machine shapes stay orange (and dashed), as machine boxes are.
// No label takes orange (machine) or cyan (an assist's draft), and every
// outline is drawn over a dark halo (HALO, 1 px each side): a yellow mask on
// an orange object, or a green one on grass, still shows where it ends, on
// light and dark images alike; on dark ground the bright colour itself does.
const PALETTE = ['#3ddc84', '#4d8dff', '#ff4fa3', '#ffe34d', '#b77dff', '#ff5a4f', '#c9b458', '#a3e635']
const HALO = 'rgba(0,0,0,0.75)'
const hash = (s) => { let h = 0; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0; return Math.abs(h) }
export const colorOf = (a) => (a.source === 'machine' ? COLORS.machine : PALETTE[hash(a.label ?? '') % PALETTE.length])

// Decoded masks, by their counts string: a mask is decoded once however
// often the frame redraws, into a path of rectangles, one per column span of
// set pixels (whole columns merged), which one fill draws: no bitmap of the
// frame's size per mask, and a 1080p frame's 20 masks decode in a few ms. A
// path's rectangles are filled as their union, so no seams show between them.
// The same pass makes the mask's outline (maskEdges): the pixel edges
// between set and unset pixels, as unit segments, which one stroke draws.
const masks = new Map()
export const decodeTime = { ms: 0 } // spent decoding masks, for the tests' figures
export function maskPath(mask) { return decodeMask(mask).path }
export function maskEdges(mask) { return decodeMask(mask).edges }
function decodeMask(mask) {
  const key = mask.size.join('x') + mask.counts
  let m = masks.get(key)
  if (m) return m
  const t0 = performance.now()
  const h = mask.size[0]
  const cnts = decodeCounts(mask.counts)
  const path = new Path2D()
  const out = new Outline(h)
  for (let k = 0, i = 0; k < cnts.length; i += cnts[k], k++) {
    if (!(k & 1)) continue
    let at = i, n = cnts[k]
    while (n > 0) {
      const x = Math.floor(at / h), y = at - x * h
      if (y === 0 && n >= h) { // whole columns
        const cols = Math.floor(n / h)
        path.rect(x, 0, cols, h)
        for (let c = 0; c < cols; c++) out.span(x + c, 0, h)
        at += cols * h; n -= cols * h
      } else {
        const len = Math.min(n, h - y)
        path.rect(x, y, 1, len)
        out.span(x, y, y + len)
        at += len; n -= len
      }
    }
  }
  m = { path, edges: out.end() }
  decodeTime.ms += performance.now() - t0
  if (masks.size > 256) masks.delete(masks.keys().next().value)
  masks.set(key, m)
  return m
}
export const forgetMask = (mask) => masks.delete(mask.size.join('x') + mask.counts)

// Outline gathers a mask's boundary from its column spans, given column by
// column, top to bottom: each span's top and bottom are boundary, and
// between two columns the boundary is where exactly one of them is set
// (the symmetric difference of their spans).
class Outline {
  constructor(h) { Object.assign(this, { h, path: new Path2D(), x: -1, cur: [], prevX: -2, prev: [], n: 0 }) }
  span(x, y0, y1) {
    if (x !== this.x) { this.column(); this.x = x }
    this.cur.push(y0, y1)
    this.n += 2
    this.path.moveTo(x, y0); this.path.lineTo(x + 1, y0)
    this.path.moveTo(x, y1); this.path.lineTo(x + 1, y1)
  }
  column() { // the column this.x is complete: its left side
    if (this.x < 0) return
    if (this.prevX === this.x - 1) this.side(this.x, xorSpans(this.prev, this.cur))
    else { this.side(this.prevX + 1, this.prev); this.side(this.x, this.cur) }
    this.prev = this.cur; this.prevX = this.x; this.cur = []
  }
  side(x, ys) { this.n += ys.length / 2; for (let i = 0; i + 1 < ys.length; i += 2) { this.path.moveTo(x, ys[i]); this.path.lineTo(x, ys[i + 1]) } }
  // end answers the outline, or null past MAX_EDGES segments: the browser
  // rasterises a stroke of so many pieces after the draw, on the main
  // thread, at every redraw (a 4K brush stroke's 14,000 made each cursor
  // move a 100 ms task), so such a mask is drawn filled only.
  end() { this.column(); this.side(this.prevX + 1, this.prev); return this.n <= MAX_EDGES ? this.path : null }
}

const MAX_EDGES = 4000

// xorSpans is where exactly one of two columns' sorted spans ([y0, y1, ...]) is set.
function xorSpans(a, b) {
  const out = []
  let i = 0, j = 0
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i] < b[j])) out.push(a[i++])
    else if (i >= a.length || b[j] < a[i]) out.push(b[j++])
    else { i++; j++ } // a boundary of both: none between them
  }
  return out
}

// outline strokes path p (or the current path) in the stroke style, lw wide,
// over the dark halo 1 px wider on each side (k canvas px per image px).
function outline(g, lw, k, p) {
  const colour = g.strokeStyle
  g.strokeStyle = HALO
  g.lineWidth = lw + 2 / k
  if (p) g.stroke(p); else g.stroke()
  g.strokeStyle = colour
  g.lineWidth = lw
  if (p) g.stroke(p); else g.stroke()
}

const ringPath = (g, r) => {
  g.moveTo(r[0], r[1])
  for (let i = 2; i < r.length; i += 2) g.lineTo(r[i], r[i + 1])
  g.closePath()
}

// drawShape draws one annotation on g, whose transform maps image pixels to
// the canvas; k is canvas pixels per image pixel (lines stay 2 px wide).
export function drawShape(g, a, k, { skeletonOf, selected, opacity = 0.35 } = {}) {
  const color = a.color ?? colorOf(a)
  const lw = (selected ? 3 : 2) / k
  g.lineWidth = lw
  g.strokeStyle = selected ? '#ffffff' : color
  g.fillStyle = color
  g.setLineDash(a.source === 'machine' || a.interpolated ? [6 / k, 4 / k] : []) // a track's interpolated shape is dashed too
  if (a.type === 'polygon' && a.polygon) {
    g.beginPath()
    a.polygon.forEach((r) => ringPath(g, r))
    g.globalAlpha = opacity
    g.fill('evenodd')
    g.globalAlpha = 1
    outline(g, lw, k)
  } else if (a.type === 'polyline' && a.points) {
    g.beginPath()
    g.moveTo(a.points[0], a.points[1])
    for (let i = 2; i < a.points.length; i += 2) g.lineTo(a.points[i], a.points[i + 1])
    outline(g, lw, k)
  } else if (a.type === 'mask' && a.mask) {
    try {
      g.globalAlpha = selected ? Math.min(1, opacity + 0.25) : opacity
      g.fill(maskPath(a.mask))
      g.globalAlpha = 1
      g.lineCap = 'square' // the outline's unit segments meet at the corners
      const edges = maskEdges(a.mask)
      if (edges) outline(g, lw * 0.75, k, edges)
      g.lineCap = 'butt'
    } catch { /* a mask that does not decode is drawn as its box by the caller's box */ }
  } else if (a.type === 'keypoints' && a.keypoints) {
    drawKeypoints(g, a.keypoints, skeletonOf?.(a.label), k, color, selected)
  } else if (isBox(a)) { // drawn here only where a page asks for boxes too (paint's withBoxes)
    g.strokeRect(a.x, a.y, a.width, a.height)
  }
  g.setLineDash([])
}

// drawKeypoints draws labelled points (v > 0; hollow when v = 1, not
// visible) and the skeleton's edges between labelled points.
export function drawKeypoints(g, pts, skel, k, color, selected) {
  const by = new Map(pts.filter((p) => p.v > 0).map((p) => [p.name, p]))
  g.lineWidth = 2 / k
  g.strokeStyle = color
  g.beginPath()
  for (const [a, b] of skel?.skeleton ?? []) {
    const p = by.get(a), q = by.get(b)
    if (p && q) { g.moveTo(p.x, p.y); g.lineTo(q.x, q.y) }
  }
  g.stroke()
  const r = (selected ? 5 : 4) / k
  for (const p of by.values()) {
    g.beginPath()
    g.arc(p.x, p.y, r, 0, 2 * Math.PI)
    if (p.v === 2) { g.fillStyle = color; g.fill() }
    g.strokeStyle = selected ? '#fff' : '#000'
    g.lineWidth = 1 / k
    g.stroke()
    if (p.v === 1) { g.strokeStyle = color; g.lineWidth = 2 / k; g.beginPath(); g.arc(p.x, p.y, r, 0, 2 * Math.PI); g.stroke() }
  }
}

// paint clears the canvas, sizes it to its box on screen and draws shapes
// over a width×height image; opts.after(g, ks) draws more on top (a draft).
// opts.region ([x, y, w, h] in image pixels) draws only that part of the
// image over the canvas (a review crop); opts.withBoxes draws boxes too, for
// pages that have no boxes of their own over the canvas.
export function paint(canvas, shapes, width, height, opts = {}) {
  const r = canvas.getBoundingClientRect()
  const dpr = devicePixelRatio || 1
  // The backing store follows what is shown (zoom included, so a zoomed
  // frame stays sharp), capped at 16 Mpx so a 16x zoom of a big frame does
  // not allocate gigabytes; past it the canvas is scaled up by the browser.
  let cw = (r.width || canvas.clientWidth) * dpr
  let ch = (r.height || canvas.clientHeight) * dpr
  const cap = Math.min(1, Math.sqrt(16e6 / Math.max(1, cw * ch)))
  cw = Math.max(1, Math.round(cw * cap))
  ch = Math.max(1, Math.round(ch * cap))
  if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch }
  const g = canvas.getContext('2d')
  g.setTransform(1, 0, 0, 1, 0, 0)
  g.clearRect(0, 0, cw, ch)
  const [x0, y0, rw, rh] = opts.region ?? [0, 0, width, height]
  const k = cw / rw
  g.setTransform(k, 0, 0, ch / rh, -x0 * k, (-y0 * ch) / rh)
  const ks = k / (dpr * cap) // canvas px per image px, in screen px: lines stay 2 px on screen
  for (const a of shapes) {
    if ((isBox(a) && !opts.withBoxes) || a.type === 'class') continue
    drawShape(g, a, ks, { ...opts, selected: a === opts.selected })
  }
  opts.after?.(g, ks)
  return g
}

// ShapeLayer is the canvas over an image (its parent is the image's size)
// that draws shapes; skeletonOf(label) gives a keypoints label's declared
// {keypoints, skeleton} or nothing (points are then drawn alone).
export function ShapeLayer({ shapes, width, height, skeletonOf, opacity, region, withBoxes, testid = 'shape-layer' }) {
  const ref = useRef()
  const args = useRef()
  args.current = { shapes, width, height, skeletonOf, opacity, region, withBoxes }
  const draw = () => {
    const a = args.current
    if (ref.current && a.width && a.height) paint(ref.current, a.shapes, a.width, a.height, a)
  }
  useLayoutEffect(draw)
  // The image's size may come after the shapes (its fit is measured once it
  // is in the page) or change with the pane: the canvas is drawn again then.
  const n = shapes.filter((a) => (withBoxes || !isBox(a)) && a.type !== 'class').length
  useLayoutEffect(() => {
    if (!ref.current) return
    const watch = new ResizeObserver(draw)
    watch.observe(ref.current)
    return () => watch.disconnect()
  }, [n > 0])
  if (!n) return null
  return <canvas ref={ref} class="shape-layer" data-testid={testid} data-shapes={n} data-types={typesOf(shapes)} data-region={region?.join(',')} />
}

// typesOf lists the shape types a layer draws, for tests and hover tools.
const typesOf = (shapes) => [...new Set(shapes.filter((a) => a.type && a.type !== 'box' && a.type !== 'class').map((a) => a.type))].sort().join(' ')

// skeletonsOf makes a skeletonOf from an answer's label → edges map
// (the grid's, item view's and review's answers carry it as skeletons).
export const skeletonsOf = (edges) => (label) => (edges?.[label] ? { skeleton: edges[label] } : undefined)
