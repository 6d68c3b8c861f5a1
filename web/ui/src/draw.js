import { newKey } from './frameio.js'
import { encodeBits, encodeRegion, maskBits } from './rle.js'
import { colorOf, decodeTime, drawKeypoints, forgetMask, isBox, maskPath, paint } from './shapes.jsx'
import { framePixels } from './assist.js'
import { Scissors } from './scissors.js'

// ShapeEditor draws and edits the workspace's shapes other than boxes on the
// frame's canvas (canvas.jsx owns boxes, which are DOM elements). It is
// imperative on purpose: while a vertex is dragged or a brush paints, only
// the canvas is redrawn, once per animation frame; React hears of the shape
// once, when the gesture ends (onChange), so a 2,000-vertex polygon drags
// without re-rendering anything.
//
// Tools (the workspace's keys): polygon (click points; double-click or Enter
// closes; Shift held while dragging places points freehand; with hole on the
// ring becomes a hole of the selected polygon), polyline (the same, Enter
// ends it open), keypoints (click places the label's next declared point,
// Shift-click places it not visible, n skips it; Enter ends), brush and
// eraser (paint the selected mask, or a new one, at full resolution).
// Editing a selected polygon or polyline: drag a vertex, click an edge to
// insert one, Alt-click a vertex to delete it. A selected skeleton: drag a
// point to move it, Shift-drag to move the whole skeleton, Alt-click a
// point to switch it between visible and not visible.
//
// The assists' tools (assistws.jsx does the work): segment (drag a box;
// click adds a positive click, Alt- or right-click a negative one) and wand
// (click grows a colour region, Shift-click adds one) hand their gestures to
// onAssist; the proposal they produce (p.proposal, on its own frame) is
// drawn over the shapes until it is accepted or dropped. The scissors
// (scissors.js) are a draft here: clicks set anchors, the path to the cursor
// follows the image's edges, and closing it (double-click, Enter) hands the
// polygon to onAssist as a proposal.
export class ShapeEditor {
  constructor() {
    this.draft = null // points being placed: {type, pts: [x, y, ...]} or {type: 'keypoints', kps}
    this.drag = null
    this.p = {}
    this.queued = false
    this.hover = null
  }

  // set takes the component's props at each render.
  set(p) {
    const frameChanged = p.frame?.uniqueName !== this.p.frame?.uniqueName
    this.p = p
    if (frameChanged) { this.draft = null; this.drag = null }
    // The scissors read the frame's pixels: decoded as the tool is picked, not at the first click.
    if (p.tool === 'scissors' && !p.readOnly && p.frame?.url) framePixels(p.frame.url, p.frame.width, p.frame.height).catch(() => {})
    this.redraw()
  }

  get sel() { const i = this.p.selected?.index; return i != null ? this.p.shapes[i] : null }
  get tol() { // 7 screen px in image px
    const r = this.p.img()?.getBoundingClientRect()
    return r?.width ? (7 * this.p.frame.width) / r.width : 7
  }

  redraw() {
    if (this.queued) return
    this.queued = true
    requestAnimationFrame(() => { this.queued = false; this.draw() })
  }

  // draw paints now: the frame's shapes (the one being dragged in its
  // dragged form), the selected shape's vertices, and the draft.
  draw() {
    const { canvas, frame, shapes, hidden } = this.p
    const c = canvas()
    if (!c || !frame) return
    const t0 = performance.now()
    const dec0 = decodeTime.ms
    const d = this.drag
    let shown = shapes.map((a, i) => (d?.i === i && d.shape ? d.shape : a))
    if (hidden) shown = shown.filter((a) => !hidden(a))
    const selShape = this.p.selected?.index != null ? shown[this.p.selected.index] ?? null : null
    const opts = { skeletonOf: this.p.skeletonOf, opacity: this.p.opacity, selected: selShape }
    if (this.draft && this.draft.type !== 'keypoints' && !d) this.drawOverLayer(c, shown, opts)
    else {
      this.layer?.bitmap.close()
      this.layer = null
      this.scenePaints = (this.scenePaints ?? 0) + 1
      paint(c, shown, frame.width, frame.height, { ...opts, after: (g, k) => this.overlay(g, k, selShape) })
    }
    this.lastDrawMs = performance.now() - t0
    c.dataset.scenePaints = this.scenePaints // for the tests: the shapes painted again, not copied
    c.dataset.layered = this.layer ? '1' : '0'
    c.dataset.frame = frame.uniqueName
    c.dataset.shapes = shown.filter((a) => !isBox(a) && a.type !== 'class').length
    c.dataset.drawMs = this.lastDrawMs.toFixed(2)
    c.dataset.decodeMs = (decodeTime.ms - dec0).toFixed(2)
    const pr = this.p.proposal
    c.dataset.proposal = pr?.frame === frame.uniqueName && pr.shape ? pr.kind : ''
    // The first draw of a segment's answer: mouse-up to mask shown, for the figure.
    if (pr?.shape && pr.t0 && pr.shownMs == null && pr.frame === frame.uniqueName) {
      pr.shownMs = performance.now() - pr.t0
      c.dataset.assistShownMs = pr.shownMs.toFixed(1)
    }
  }

  // drawOverLayer draws a draft (a polygon's or polyline's points and the
  // line to the cursor, the scissors' path) over a bitmap of the rest,
  // painted once while the draft lives: every cursor move redraws the live
  // line, and the canvas's raster at each frame was the whole scene again
  // (a brushed 4K mask is a path of thousands of column rectangles: 90 ms of
  // the renderer's main thread a frame at load 30, against 0.3 ms to copy a
  // bitmap). The bitmap is painted again when what it shows changes: the
  // shapes shown (each the same object, not the same list: the workspace's
  // renders make new lists and filters), the selection, the proposal, the
  // canvas's size.
  drawOverLayer(c, shown, opts) {
    const { frame, proposal, readOnly } = this.p
    const r = c.getBoundingClientRect()
    const key = [frame.uniqueName, opts.selected, opts.opacity, proposal, readOnly, r.width, r.height, devicePixelRatio,
      shown.some((a) => a.type === 'keypoints') ? opts.skeletonOf : null, shown.length, ...shown]
    let L = this.layer
    if (!L || L.key.length !== key.length || L.key.some((v, i) => v !== key[i])) {
      L?.bitmap.close()
      let ks = 1
      this.scenePaints = (this.scenePaints ?? 0) + 1
      const g = paint(c, shown, frame.width, frame.height, { ...opts, after: (g, k) => { ks = k; this.overlay(g, k, opts.selected, true) } })
      const off = new OffscreenCanvas(c.width, c.height)
      off.getContext('2d').drawImage(c, 0, 0)
      L = this.layer = { key, bitmap: off.transferToImageBitmap(), m: g.getTransform(), ks } // a bitmap: no canvas snapshot a frame
    }
    const g = c.getContext('2d')
    g.setTransform(1, 0, 0, 1, 0, 0)
    g.clearRect(0, 0, c.width, c.height)
    g.drawImage(L.bitmap, 0, 0)
    g.setTransform(L.m)
    this.drawDraft(g, L.ks)
  }

  // drawProposal draws the assist's proposal (a draft fill or outline in
  // cyan, dashed) and the segment tool's box and clicks.
  drawProposal(g, k) {
    const pr = this.p.proposal
    if (pr && pr.frame === this.p.frame.uniqueName) {
      const s = pr.shape
      g.strokeStyle = g.fillStyle = '#22d3ee'
      g.lineWidth = 2 / k
      g.setLineDash([5 / k, 4 / k])
      if (s?.type === 'mask') {
        g.globalAlpha = 0.5
        try { g.fill(maskPath(s.mask)) } catch {}
        g.globalAlpha = 1
      } else if (s?.type === 'polygon') {
        g.beginPath()
        for (const r of s.polygon) {
          g.moveTo(r[0], r[1])
          for (let i = 2; i < r.length; i += 2) g.lineTo(r[i], r[i + 1])
          g.closePath()
        }
        g.globalAlpha = 0.25
        g.fill('evenodd')
        g.globalAlpha = 1
        g.stroke()
        g.setLineDash([])
        g.fillStyle = '#fff'
        for (const r of s.polygon) for (let i = 0; i < r.length; i += 2) g.fillRect(r[i] - 2 / k, r[i + 1] - 2 / k, 4 / k, 4 / k)
      } else if (s && isBox(s)) g.strokeRect(s.x, s.y, s.width, s.height) // the video workspace tracks boxes too
      if (pr.box?.length === 4) { g.setLineDash([5 / k, 4 / k]); g.strokeRect(pr.box[0], pr.box[1], pr.box[2] - pr.box[0], pr.box[3] - pr.box[1]) }
      g.setLineDash([])
      for (const q of pr.points ?? []) {
        g.beginPath()
        g.arc(q.x, q.y, 5 / k, 0, 2 * Math.PI)
        g.fillStyle = q.label ? '#3ddc84' : '#ff4d4f'
        g.fill()
        g.strokeStyle = '#000'
        g.lineWidth = 1 / k
        g.stroke()
      }
    }
    const d = this.drag
    if (d?.mode === 'sbox') {
      g.strokeStyle = '#22d3ee'
      g.lineWidth = 2 / k
      g.setLineDash([5 / k, 4 / k])
      g.strokeRect(Math.min(d.p0.x, d.p1.x), Math.min(d.p0.y, d.p1.y), Math.abs(d.p1.x - d.p0.x), Math.abs(d.p1.y - d.p0.y))
      g.setLineDash([])
    }
  }

  // overlay draws over the shapes: the stroke being painted, the proposal,
  // the selected shape's handles and the draft (unless noDraft).
  overlay(g, k, s, noDraft) {
    if (this.paintCanvas) {
      g.globalAlpha = this.p.opacity ?? 0.35
      g.imageSmoothingEnabled = false
      g.drawImage(this.paintCanvas, 0, 0)
      g.globalAlpha = 1
    }
    this.drawProposal(g, k)
    if (s && !this.p.readOnly && (s.type === 'polygon' || s.type === 'polyline')) {
      const rings = s.type === 'polygon' ? s.polygon : [s.points]
      // Vertex handles: a 2,000-vertex ring is one path of small squares.
      const h = 3 / k
      g.beginPath()
      for (const r of rings) for (let i = 0; i < r.length; i += 2) g.rect(r[i] - h, r[i + 1] - h, 2 * h, 2 * h)
      g.fillStyle = '#fff'
      g.fill()
      g.lineWidth = 1 / k
      g.strokeStyle = '#000'
      g.stroke()
    }
    if (!noDraft) this.drawDraft(g, k)
  }

  // drawDraft draws the shape being placed: its points so far, and the
  // line on to the cursor.
  drawDraft(g, k) {
    const dr = this.draft
    if (!dr) return
    const color = colorOf({ label: this.p.label })
    if (dr.type === 'scissors') return dr.sc.draw(g, k, color)
    if (dr.type === 'keypoints') {
      drawKeypoints(g, dr.kps, this.p.skeletonOf?.(this.p.label), k, color, true)
      return
    }
    const pts = this.hover ? [...dr.pts, this.hover.x, this.hover.y] : dr.pts
    g.lineWidth = 2 / k
    g.strokeStyle = dr.hole ? '#ff6b6b' : color
    g.setLineDash([4 / k, 3 / k])
    g.beginPath()
    g.moveTo(pts[0], pts[1])
    for (let i = 2; i < pts.length; i += 2) g.lineTo(pts[i], pts[i + 1])
    g.stroke()
    g.setLineDash([])
    for (let i = 0; i < dr.pts.length; i += 2) { g.fillStyle = '#fff'; g.fillRect(dr.pts[i] - 3 / k, dr.pts[i + 1] - 3 / k, 6 / k, 6 / k) }
  }

  // down handles a pointerdown at image point p; it answers true when the
  // editor took the gesture (canvas.jsx then captures the pointer).
  down(e, p) {
    const { tool, readOnly } = this.p
    if (readOnly) return this.pick(p)
    const s = this.sel
    if (tool === 'brush' || tool === 'eraser') return this.startPaint(p)
    if (tool === 'segment') { this.drag = { mode: 'sbox', p0: p, p1: p, negative: e.button === 2 }; return true }
    if (tool === 'wand') { this.p.onAssist?.({ kind: 'wand', p, add: e.shiftKey }); return true }
    if (tool === 'scissors') return this.scissorsDown(e, p)
    if (s && (s.type === 'polygon' || s.type === 'polyline') && !this.draft && this.editVertex(e, p, s)) return true
    if (s && s.type === 'keypoints' && !this.draft && this.editKeypoint(e, p, s)) return true
    if (tool === 'polygon' || tool === 'polyline') {
      if (!this.draft) this.draft = { type: tool, pts: [], hole: tool === 'polygon' && this.p.hole && s?.type === 'polygon' }
      if (e.detail >= 2) { this.finish(); return true }
      this.draft.pts.push(p.x, p.y)
      if (e.shiftKey) this.drag = { mode: 'freehand' } // freehand: points follow the pointer while held
      this.redraw()
      return true
    }
    if (tool === 'keypoints') return this.placeKeypoint(p, e.shiftKey ? 1 : 2)
    return this.pick(p)
  }

  // altDown is an Alt-click: it deletes a vertex of the selected polygon or
  // polyline or switches a keypoint's visibility, when one is under p.
  altDown(e, p) {
    if (!this.p.readOnly && this.p.tool === 'segment') { this.p.onAssist?.({ kind: 'segment-point', p, label: 0 }); return true }
    const s = this.sel
    if (this.p.readOnly || !s || this.draft) return false
    if (s.type === 'polygon' || s.type === 'polyline') return this.editVertex(e, p, s)
    if (s.type === 'keypoints') return this.editKeypoint(e, p, s)
    return false
  }

  // pick selects the topmost shape (not a box) under p.
  pick(p) {
    const { shapes } = this.p
    for (let i = shapes.length - 1; i >= 0; i--) {
      const a = shapes[i]
      if (isBox(a) || a.type === 'class' || this.p.hidden?.(a)) continue
      if (hit(a, p, this.tol)) { this.p.onSelect(i); return true }
    }
    return false
  }

  editVertex(e, p, s) {
    const i = this.p.selected.index
    const rings = s.type === 'polygon' ? s.polygon : [s.points]
    const tol = this.tol
    for (let r = 0; r < rings.length; r++) {
      const ring = rings[r]
      for (let j = 0; j < ring.length; j += 2) {
        if (Math.hypot(ring[j] - p.x, ring[j + 1] - p.y) > tol) continue
        if (e.altKey) { // delete the vertex, unless the ring would be too short
          const min = s.type === 'polygon' ? 6 : 4
          if (ring.length - 2 < min) return true
          this.p.onChange(this.p.shapes.map((a, k) => (k === i ? withRing(s, r, [...ring.slice(0, j), ...ring.slice(j + 2)]) : a)), i)
          return true
        }
        this.drag = { mode: 'vertex', i, r, j, ring: Float64Array.from(ring) }
        return true
      }
    }
    if (e.altKey) return false
    for (let r = 0; r < rings.length; r++) { // an edge: insert a vertex there and drag it
      const ring = rings[r]
      const n = ring.length / 2
      const closed = s.type === 'polygon'
      for (let j = 0; j < (closed ? n : n - 1); j++) {
        const a = j * 2, b = ((j + 1) % n) * 2
        if (segDist(p, ring[a], ring[a + 1], ring[b], ring[b + 1]) > tol) continue
        const next = [...ring.slice(0, a + 2), p.x, p.y, ...ring.slice(a + 2)]
        this.drag = { mode: 'vertex', i, r, j: a + 2, ring: Float64Array.from(next), inserted: true }
        this.drag.shape = withRing(s, r, Array.from(this.drag.ring))
        this.redraw()
        return true
      }
    }
    return false
  }

  editKeypoint(e, p, s) {
    const i = this.p.selected.index
    const j = s.keypoints.findIndex((k) => k.v > 0 && Math.hypot(k.x - p.x, k.y - p.y) <= this.tol)
    if (j < 0) return false
    if (e.altKey) {
      const kps = s.keypoints.map((k, n) => (n === j ? { ...k, v: k.v === 2 ? 1 : 2 } : k))
      this.p.onChange(this.p.shapes.map((a, n) => (n === i ? { ...a, keypoints: kps } : a)), i)
      return true
    }
    this.drag = { mode: e.shiftKey ? 'skeleton' : 'point', i, j, p0: p, orig: s }
    return true
  }

  placeKeypoint(p, v) {
    const names = this.names()
    if (!this.draft) this.draft = { type: 'keypoints', kps: [] }
    const dr = this.draft
    dr.kps.push({ name: names[dr.kps.length] ?? String(dr.kps.length + 1), x: p.x, y: p.y, v })
    if (names.length && dr.kps.length >= names.length) this.finish()
    this.redraw()
    this.p.onDraft?.(this.draftInfo())
    return true
  }

  // skip leaves the next declared point unlabelled (v 0).
  skip() {
    if (this.p.tool !== 'keypoints') return false
    const names = this.names()
    if (!this.draft) this.draft = { type: 'keypoints', kps: [] }
    const dr = this.draft
    if (!names.length) return false
    dr.kps.push({ name: names[dr.kps.length], x: 0, y: 0, v: 0 })
    if (dr.kps.length >= names.length) this.finish()
    this.p.onDraft?.(this.draftInfo())
    this.redraw()
    return true
  }

  // scissorsDown sets an anchor (a double-click's second press sets none:
  // its dblclick closes the outline).
  scissorsDown(e, p) {
    if (e.detail >= 2) return true
    if (this.draft?.type !== 'scissors') this.draft = { type: 'scissors', sc: new Scissors(this.p.frame, () => this.redraw()) }
    const dr = this.draft
    dr.sc.down(p, (5 * this.tol) / 7).then(() => {
      if (this.draft !== dr) return
      this.p.onDraft?.(this.draftInfo())
      const c = this.p.canvas()
      if (c) { c.dataset.wireAnchors = dr.sc.anchors.length; c.dataset.wireMapMs = dr.sc.lastMapMs.toFixed(1) } // for the figures
    },
      (err) => { if (this.draft === dr) { this.draft = null; this.p.onDraft?.('scissors: ' + err.message) } })
    return true
  }

  names() { return this.p.skeletonOf?.(this.p.label)?.keypoints ?? [] }
  draftInfo() {
    const dr = this.draft
    if (dr?.type === 'scissors') return `scissors: ${dr.sc.anchors.length} anchors · double-click or Enter closes`
    if (dr?.type !== 'keypoints') return dr ? `${dr.pts.length / 2} points` : ''
    const names = this.names()
    return names[dr.kps.length] ? `next point: ${names[dr.kps.length]}` : `${dr.kps.length} points`
  }

  move(e, p) {
    const d = this.drag
    if (!d) {
      if (this.draft?.type === 'scissors') { // the live path: the map walked back from the cursor
        const t0 = performance.now()
        this.draft.sc.move(p)
        const c = this.p.canvas()
        if (c) c.dataset.wireMs = (performance.now() - t0).toFixed(2)
        this.redraw()
      } else if (this.draft && this.draft.type !== 'keypoints') { this.hover = p; this.redraw() }
      return false
    }
    if (d.mode === 'freehand') {
      const pts = this.draft.pts
      if (Math.hypot(pts[pts.length - 2] - p.x, pts[pts.length - 1] - p.y) >= this.tol / 2) pts.push(p.x, p.y)
    } else if (d.mode === 'vertex') {
      d.ring[d.j] = p.x
      d.ring[d.j + 1] = p.y
      d.moved = true
      const s = this.p.shapes[d.i]
      d.shape = withRing(s, d.r, d.ring) // a typed array: no copy of the ring per move
    } else if (d.mode === 'point' || d.mode === 'skeleton') {
      const dx = p.x - d.p0.x, dy = p.y - d.p0.y
      d.moved = true
      d.shape = { ...d.orig, keypoints: d.orig.keypoints.map((k, n) => (d.mode === 'skeleton' || n === d.j ? { ...k, x: k.x + dx, y: k.y + dy } : k)) }
    } else if (d.mode === 'paint') {
      this.stroke(d.last, p)
      d.last = p
    } else if (d.mode === 'sbox') d.p1 = p
    this.redraw()
    return true
  }

  up() {
    const d = this.drag
    if (!d) return false
    this.drag = null
    if (d.mode === 'freehand') return true
    if (d.mode === 'paint') { this.endPaint(d); return true }
    if (d.mode === 'sbox') { this.endBox(d); return true }
    if (d.moved || d.inserted) {
      const shape = d.mode === 'vertex' ? withRing(this.p.shapes[d.i], d.r, Array.from(d.ring)) : d.shape
      this.p.onChange(this.p.shapes.map((a, n) => (n === d.i ? shape : a)), d.i)
    }
    this.redraw()
    return true
  }

  // endBox ends the segment tool's gesture: a box of at least 4 screen
  // pixels each way is sent to the model; less is a click on the object
  // (a negative one with the right button).
  endBox(d) {
    const { p0, p1 } = d
    const min = (4 * this.tol) / 7
    if (!d.negative && Math.abs(p1.x - p0.x) >= min && Math.abs(p1.y - p0.y) >= min) {
      this.p.onAssist?.({ kind: 'segment-box', box: [Math.min(p0.x, p1.x), Math.min(p0.y, p1.y), Math.max(p0.x, p1.x), Math.max(p0.y, p1.y)] })
    } else this.p.onAssist?.({ kind: 'segment-point', p: p0, label: d.negative ? 0 : 1 })
    this.redraw()
  }

  // finish ends the draft: a polygon (or a hole of the selected polygon), a
  // polyline or keypoints become a shape of the selected label.
  finish() {
    const dr = this.draft
    if (!dr) return false
    if (dr.type === 'scissors') return this.closeScissors(dr)
    this.draft = null
    this.hover = null
    this.p.onDraft?.('')
    this.redraw()
    const { shapes, label } = this.p
    const base = { key: newKey(), label, attributes: {}, source: 'human' }
    if (dr.type === 'keypoints') {
      const names = this.names()
      const kps = [...dr.kps]
      for (let n = kps.length; n < names.length; n++) kps.push({ name: names[n], x: 0, y: 0, v: 0 })
      if (!kps.some((k) => k.v > 0)) return true
      this.p.onChange([...shapes, { ...base, type: 'keypoints', keypoints: kps }], shapes.length)
      return true
    }
    const pts = dedupe(dr.pts)
    if (dr.type === 'polyline') {
      if (pts.length >= 4) this.p.onChange([...shapes, { ...base, type: 'polyline', points: pts }], shapes.length)
      return true
    }
    if (pts.length < 6) return true
    const s = this.sel
    if (dr.hole && s?.type === 'polygon') {
      const i = this.p.selected.index
      this.p.onChange(shapes.map((a, n) => (n === i ? { ...a, polygon: [...a.polygon, pts] } : a)), i)
    } else this.p.onChange([...shapes, { ...base, type: 'polygon', polygon: [pts] }], shapes.length)
    return true
  }

  // closeScissors closes the outline back to its first anchor and proposes
  // it (the draft stays drawn until the closing path is in).
  closeScissors(dr) {
    if (dr.closing) return true
    dr.closing = true
    dr.sc.close().then((ring) => {
      if (this.draft !== dr) return
      this.draft = null
      this.p.onDraft?.(ring ? '' : 'scissors: at least 3 anchors make a polygon')
      if (ring) this.p.onAssist?.({ kind: 'scissors', polygon: [ring] })
      this.redraw()
    }, (err) => { if (this.draft === dr) { this.draft = null; this.p.onDraft?.('scissors: ' + err.message); this.redraw() } })
    return true
  }

  cancel() {
    if (!this.draft && !this.paintCanvas) return false
    this.draft = null
    this.hover = null
    this.p.onDraft?.('')
    this.redraw()
    return true
  }

  // Painting: a full-resolution canvas of the mask being painted (the
  // selected mask's pixels, or none); each move strokes a round line into
  // it, and the stroke's end reads back only the rectangle the stroke
  // touched (outside it the mask is what it was) and encodes the mask.
  startPaint(p) {
    const { frame } = this.p
    const s = this.sel
    const target = s?.type === 'mask' && s.label === this.p.label ? this.p.selected.index : null
    if (target == null && this.p.tool === 'eraser') return true
    const c = new OffscreenCanvas(frame.width, frame.height)
    const g = c.getContext('2d')
    if (target != null) { g.fillStyle = colorOf(s); g.fill(maskPath(s.mask)) }
    this.paintCanvas = c
    this.drag = { mode: 'paint', target, last: p, rect: [Infinity, Infinity, -Infinity, -Infinity] }
    this.stroke(p, p)
    this.redraw()
    return true
  }

  stroke(a, b) {
    const r = this.drag.rect, m = this.p.brush + 2
    r[0] = Math.min(r[0], a.x - m, b.x - m); r[1] = Math.min(r[1], a.y - m, b.y - m)
    r[2] = Math.max(r[2], a.x + m, b.x + m); r[3] = Math.max(r[3], a.y + m, b.y + m)
    const g = this.paintCanvas.getContext('2d')
    g.globalCompositeOperation = this.p.tool === 'eraser' ? 'destination-out' : 'source-over'
    g.strokeStyle = g.fillStyle = colorOf({ label: this.p.label })
    g.lineWidth = this.p.brush * 2
    g.lineCap = 'round'
    g.beginPath()
    g.moveTo(a.x, a.y)
    g.lineTo(b.x + (a.x === b.x && a.y === b.y ? 0.01 : 0), b.y)
    g.stroke()
  }

  endPaint(d) {
    const t0 = performance.now()
    const { frame, shapes, label } = this.p
    const c = this.paintCanvas
    const W = frame.width, H = frame.height
    const x0 = Math.max(0, Math.floor(d.rect[0])), y0 = Math.max(0, Math.floor(d.rect[1]))
    const rw = Math.max(1, Math.min(W, Math.ceil(d.rect[2])) - x0), rh = Math.max(1, Math.min(H, Math.ceil(d.rect[3])) - y0)
    const data = c.getContext('2d').getImageData(x0, y0, rw, rh).data
    const t1 = performance.now()
    const part = new Uint8Array(rw * rh)
    let any = false
    for (let i = 0; i < part.length; i++) if (data[i * 4 + 3] >= 128) { part[i] = 1; any = true }
    this.paintCanvas = null
    let mask
    if (d.target != null) { // the old mask with the stroke's rectangle replaced
      const bits = maskBits(shapes[d.target].mask)
      for (let y = 0; y < rh; y++) bits.set(part.subarray(y * rw, (y + 1) * rw), (y0 + y) * W + x0)
      any = bits.some((v) => v === 1)
      mask = encodeBits(bits, W, H)
    } else mask = encodeRegion(part, x0, y0, rw, rh, W, H)
    maskPath(mask) // decoded now, so the next frame draws it at once
    const cv = this.p.canvas()
    if (cv) { // for the brush figure: read back, and all to the mask decoded
      cv.dataset.readMs = (t1 - t0).toFixed(1)
      cv.dataset.encodeMs = (performance.now() - t0).toFixed(1)
    }
    if (d.target != null) {
      forgetMask(shapes[d.target].mask)
      if (!any) return this.p.onChange(shapes.filter((_, n) => n !== d.target))
      return this.p.onChange(shapes.map((a, n) => (n === d.target ? { ...a, mask } : a)), d.target)
    }
    if (any) this.p.onChange([...shapes, { key: newKey(), label, attributes: {}, source: 'human', type: 'mask', mask }], shapes.length)
    else this.redraw()
  }
}

const withRing = (s, r, ring) => (s.type === 'polygon'
  ? { ...s, polygon: s.polygon.map((x, n) => (n === r ? ring : x)) }
  : { ...s, points: ring })

const dedupe = (pts) => {
  const out = []
  for (let i = 0; i < pts.length; i += 2) {
    if (out.length && out[out.length - 2] === pts[i] && out[out.length - 1] === pts[i + 1]) continue
    out.push(pts[i], pts[i + 1])
  }
  return out
}

function segDist(p, x0, y0, x1, y1) {
  const dx = x1 - x0, dy = y1 - y0
  const l = dx * dx + dy * dy
  const t = l ? Math.max(0, Math.min(1, ((p.x - x0) * dx + (p.y - y0) * dy) / l)) : 0
  return Math.hypot(p.x - x0 - t * dx, p.y - y0 - t * dy)
}

// inRings is the even-odd test of a point against a polygon's rings.
function inRings(rings, x, y) {
  let inside = false
  for (const r of rings) {
    const n = r.length
    for (let i = 0, j = n - 2; i < n; j = i, i += 2) {
      if ((r[i + 1] > y) !== (r[j + 1] > y) && x < ((r[j] - r[i]) * (y - r[i + 1])) / (r[j + 1] - r[i + 1]) + r[i]) inside = !inside
    }
  }
  return inside
}

// hit says whether image point p is on shape a (within tol for lines and points).
export function hit(a, p, tol) {
  if (a.type === 'polygon') return inRings(a.polygon, p.x, p.y)
  if (a.type === 'polyline') {
    for (let i = 2; i < a.points.length; i += 2) if (segDist(p, a.points[i - 2], a.points[i - 1], a.points[i], a.points[i + 1]) <= tol) return true
    return false
  }
  if (a.type === 'keypoints') return a.keypoints.some((k) => k.v > 0 && Math.hypot(k.x - p.x, k.y - p.y) <= tol)
  if (a.type === 'mask') {
    if (p.x < a.x || p.y < a.y || p.x > a.x + a.width || p.y > a.y + a.height) return false
    try {
      const bits = a._bits ?? (a._bits = maskBits(a.mask))
      return bits[Math.floor(p.y) * a.mask.size[1] + Math.floor(p.x)] === 1
    } catch { return false }
  }
  return false
}
