import { api } from './api.js'
import { encodeBits, maskBits } from './rle.js'

// The workspace's drawing assists (docs/assists.md, "In the workspace"): the
// server's box-to-mask and mask-to-polygon routes, and what runs in the
// browser on the frame's own pixels: a polygon rasterised to a mask, and a
// shape followed to the next frame by template matching.

// segment asks POST /assist/segment for the masks of a box and clicks on a
// lake image (or a video's frame); model "" is the system default.
export const segment = ({ uniqueName, frame, box, points, model }) => api('/assist/segment', {
  method: 'POST',
  body: { uniqueName, frame, box: box.map((v) => Math.round(v)), points: points.map((p) => ({ x: Math.round(p.x), y: Math.round(p.y), label: p.label })), model_name: model || undefined },
})

// outline asks POST /assist/polygon for a mask's rings simplified to tol pixels.
export const outline = (mask, tol) => api('/assist/polygon', { method: 'POST', body: { mask: { size: mask.size, counts: mask.counts }, tolerance: tol } })

// segmentationModels lists the registered models of the segmentation
// application (the system default first); [] when the key may not list them.
export async function segmentationModels() {
  try {
    const r = await api('/models')
    return r.modelList.filter((m) => m.application === 'segmentation')
      .sort((a, b) => (b.systemDefault ? 1 : 0) - (a.systemDefault ? 1 : 0))
  } catch { return [] }
}

// Frames' decoded pixels, by URL: the wand fills on them and tracking
// matches them. Two are kept (this frame and the next), a 4K frame being 33 MB.
const pixelCache = new Map()
export function framePixels(url, w, h) {
  let p = pixelCache.get(url)
  if (p) return p
  p = (async () => {
    const im = new Image()
    im.src = url
    await im.decode()
    const c = new OffscreenCanvas(w, h)
    const g = c.getContext('2d', { willReadFrequently: true })
    g.drawImage(im, 0, 0, w, h)
    return { w, h, data: g.getImageData(0, 0, w, h).data }
  })()
  p.catch(() => pixelCache.delete(url))
  pixelCache.set(url, p)
  while (pixelCache.size > 2) pixelCache.delete(pixelCache.keys().next().value)
  return p
}

// rasterise fills a polygon's rings even-odd at the frame's resolution; a
// pixel is set when its centre is inside (the fill's coverage >= 1/2).
export function rasterise(polygon, w, h) {
  const c = new OffscreenCanvas(w, h)
  const g = c.getContext('2d', { willReadFrequently: true })
  g.beginPath()
  for (const r of polygon) {
    g.moveTo(r[0], r[1])
    for (let i = 2; i < r.length; i += 2) g.lineTo(r[i], r[i + 1])
    g.closePath()
  }
  g.fillStyle = '#000'
  g.fill('evenodd')
  const data = g.getImageData(0, 0, w, h).data
  const bits = new Uint8Array(w * h)
  for (let i = 0; i < bits.length; i++) bits[i] = data[i * 4 + 3] >= 128 ? 1 : 0
  return encodeBits(bits, w, h)
}

// shapeBox is a polygon's or mask's bounding box in image pixels.
export function shapeBox(s) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity
  if (s.type === 'polygon') {
    for (const r of s.polygon) for (let i = 0; i < r.length; i += 2) {
      x0 = Math.min(x0, r[i]); x1 = Math.max(x1, r[i]); y0 = Math.min(y0, r[i + 1]); y1 = Math.max(y1, r[i + 1])
    }
  } else if (s.type === 'mask') {
    const [h, w] = s.mask.size
    const bits = maskBits(s.mask)
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (bits[y * w + x]) {
      if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y
    }
    x1 += 1; y1 += 1
  }
  return x0 < x1 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null
}

// shifted moves a polygon or mask by (dx, dy) whole pixels, clipped to the frame.
export function shifted(s, dx, dy) {
  if (s.type === 'polygon') return { ...s, polygon: s.polygon.map((r) => r.map((v, i) => (i & 1 ? v + dy : v + dx))) }
  const [h, w] = s.mask.size
  const src = maskBits(s.mask)
  const out = new Uint8Array(w * h)
  for (let y = Math.max(0, dy); y < Math.min(h, h + dy); y++) {
    const from = (y - dy) * w
    for (let x = Math.max(0, dx); x < Math.min(w, w + dx); x++) out[y * w + x] = src[from + x - dx]
  }
  return { ...s, mask: encodeBits(out, w, h) }
}

// greyRect is the grey image of the rectangle [x0, x1) × [y0, y1) of RGBA pixels.
function greyRect(px, x0, y0, x1, y1) {
  const w = x1 - x0, h = y1 - y0
  const out = new Float32Array(w * h)
  const d = px.data
  for (let y = 0; y < h; y++) {
    let k = ((y0 + y) * px.w + x0) * 4
    for (let x = 0; x < w; x++, k += 4) out[y * w + x] = 0.299 * d[k] + 0.587 * d[k + 1] + 0.114 * d[k + 2]
  }
  return { w, h, g: out }
}

// shrink averages f×f blocks of a grey image.
function shrink(im, f) {
  if (f === 1) return im
  const w = Math.floor(im.w / f), h = Math.floor(im.h / f)
  const out = new Float32Array(w * h)
  for (let y = 0; y < h * f; y++) {
    const row = ((y / f) | 0) * w
    for (let x = 0; x < w * f; x++) out[row + ((x / f) | 0)] += im.g[y * im.w + x]
  }
  for (let i = 0; i < out.length; i++) out[i] /= f * f
  return { w, h, g: out }
}

// match finds the shift (within ±r around (cx, cy)) at which the template
// box b of image a best matches image c, by normalised cross-correlation.
function match(a, c, b, r, cx = 0, cy = 0) {
  const { x: bx, y: by, width: bw, height: bh } = b
  let mean = 0
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) mean += a.g[(by + y) * a.w + bx + x]
  mean /= bw * bh
  let tv = 0
  const t = new Float32Array(bw * bh)
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) { const v = a.g[(by + y) * a.w + bx + x] - mean; t[y * bw + x] = v; tv += v * v }
  let best = { dx: cx, dy: cy, score: -2 }
  for (let dy = cy - r; dy <= cy + r; dy++) {
    if (by + dy < 0 || by + dy + bh > c.h) continue
    for (let dx = cx - r; dx <= cx + r; dx++) {
      if (bx + dx < 0 || bx + dx + bw > c.w) continue
      let s = 0, sum = 0, sq = 0
      for (let y = 0; y < bh; y++) {
        const row = (by + dy + y) * c.w + bx + dx
        for (let x = 0; x < bw; x++) { const v = c.g[row + x]; s += t[y * bw + x] * v; sum += v; sq += v * v }
      }
      const n = bw * bh
      const cv = sq - (sum * sum) / n
      const score = tv > 0 && cv > 0 ? s / Math.sqrt(tv * cv) : 0
      if (score > best.score) best = { dx, dy, score }
    }
  }
  return best
}

// plain says whether box b of RGBA pixels px is nearly one grey level
// (standard deviation under 6).
function plain(px, b) {
  const x0 = Math.max(0, Math.floor(b.x)), y0 = Math.max(0, Math.floor(b.y))
  const x1 = Math.min(px.w, Math.ceil(b.x + b.width)), y1 = Math.min(px.h, Math.ceil(b.y + b.height))
  let n = 0, sum = 0, sq = 0
  for (let y = y0; y < y1; y++) for (let x = x0, k = (y * px.w + x0) * 4; x < x1; x++, k += 4) {
    const v = 0.299 * px.data[k] + 0.587 * px.data[k + 1] + 0.114 * px.data[k + 2]
    n++; sum += v; sq += v * v
  }
  return n > 0 && sq / n - (sum / n) ** 2 < 36
}

// trackShift is the motion of box b (image pixels) from frame a's pixels to
// frame c's: template matching of the box's region on grey pixels, coarse
// to fine. The coarsest level shrinks the box to at most 48 px a side and
// searches half the box's size (at least 48 image pixels) each way; each
// finer level, twice the resolution, searches 2 pixels about the last
// answer, down to full resolution. Only the box and its search margin are
// read, so a 4K frame costs what its object does. A plain box (a shape
// drawn exactly on a white square: grey levels within a few of each other)
// has nothing inside to match, so its template takes a margin of ground
// (15% of its side, at least 4 px) and matches the object's edges; a
// textured box takes 2 px (the edges of a shape drawn on its object's
// outline), not more, as a wide margin of still ground would pull the match
// towards no motion.
export function trackShift(a, c, b) {
  {
    const pad = plain(a, b) ? Math.max(4, Math.round(0.15 * Math.max(b.width, b.height))) : 2
    const bx0 = Math.max(0, Math.floor(b.x - pad)), by0 = Math.max(0, Math.floor(b.y - pad))
    b = { x: bx0, y: by0, width: Math.min(a.w, Math.ceil(b.x + b.width + pad)) - bx0, height: Math.min(a.h, Math.ceil(b.y + b.height + pad)) - by0 }
  }
  const side = Math.max(b.width, b.height)
  let f0 = 1
  while (side / f0 > 48) f0 *= 2
  const reach = Math.max(48, Math.ceil(side / 2))
  const m = reach + 2 * f0
  const x0 = Math.max(0, Math.floor(b.x - m)), y0 = Math.max(0, Math.floor(b.y - m))
  const x1 = Math.min(a.w, c.w, Math.ceil(b.x + b.width + m)), y1 = Math.min(a.h, c.h, Math.ceil(b.y + b.height + m))
  const ga = greyRect(a, x0, y0, x1, y1), gc = greyRect(c, x0, y0, x1, y1)
  const tx = Math.round(b.x) - x0, ty = Math.round(b.y) - y0
  let dx = 0, dy = 0, score = 0
  for (let f = f0; f >= 1; f >>= 1) {
    const A = shrink(ga, f), C = shrink(gc, f)
    const x = Math.floor(tx / f), y = Math.floor(ty / f)
    const bb = { x, y, width: Math.max(2, Math.min(A.w - x, Math.ceil(b.width / f))), height: Math.max(2, Math.min(A.h - y, Math.ceil(b.height / f))) }
    const r = f === f0 ? Math.ceil(reach / f) : 2
    const mm = match(A, C, bb, r, Math.round(dx / f), Math.round(dy / f))
    dx = mm.dx * f; dy = mm.dy * f; score = mm.score
  }
  return { dx, dy, score }
}
