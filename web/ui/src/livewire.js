// Live-wire (intelligent scissors, Mortensen and Barrett 1995): the
// cheapest 8-connected path from an anchor to every pixel of a window, where
// a step is cheap along strong image edges and dear across flat ground or
// across an edge's direction. Pure functions over typed arrays, so the Web
// Worker (scissors.worker.js) runs them off the main thread and the page
// only follows the answer back from the cursor (traceWire).

// The 8 moves: even k are axis steps, odd k diagonals.
export const DX = [1, 1, 0, -1, -1, -1, 0, 1]
export const DY = [0, 1, 1, 1, 0, -1, -1, -1]
const LEN = DX.map((_, k) => (k & 1 ? Math.SQRT2 : 1))

// Weights of the local cost of stepping onto pixel v, per unit of length:
// 1 + G·(1 - |∇I(v)|/norm) + D·strength(v)·|step · ∇I(v)/|∇I(v)||. The
// first term is the gradient-magnitude cost (0 on the strongest edges); the
// second the direction cost: on an edge, a step along it (perpendicular to
// the gradient) costs nothing more, a step across it costs D. Costs are
// integers (x SCALE) so Dial's bucket queue orders them in O(1).
const G = 40, D = 20, SCALE = 4
const MAXC = Math.ceil(SCALE * Math.SQRT2 * (1 + G + D)) + 1

// gradients answers the Sobel gradient of a w×h RGBA window's grey image:
// per pixel the magnitude relative to the window's edges (0..1) and the unit
// gradient (ux, uy). Border pixels have none.
export function gradients(rgba, w, h) {
  const n = w * h
  const grey = new Float32Array(n)
  for (let i = 0, k = 0; i < n; i++, k += 4) grey[i] = 0.299 * rgba[k] + 0.587 * rgba[k + 1] + 0.114 * rgba[k + 2]
  const mag = new Float32Array(n), ux = new Float32Array(n), uy = new Float32Array(n)
  let max = 0
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1, i = y * w + 1; x < w - 1; x++, i++) {
      const a = grey[i - w - 1], b = grey[i - w], c = grey[i - w + 1], d = grey[i - 1], f = grey[i + 1], g = grey[i + w - 1], hh = grey[i + w], k = grey[i + w + 1]
      const gx = c + 2 * f + k - a - 2 * d - g
      const gy = g + 2 * hh + k - a - 2 * b - c
      const m = Math.sqrt(gx * gx + gy * gy)
      mag[i] = m
      if (m > 0) { ux[i] = gx / m; uy[i] = gy / m }
      if (m > max) max = m
    }
  }
  // Relative to 70% of the window's strongest edge: the edges an annotator
  // follows all count as strong, a lone brighter spike does not flatten them.
  const norm = Math.max(1, 0.7 * max)
  for (let i = 0; i < n; i++) mag[i] = Math.min(1, mag[i] / norm)
  return { mag, ux, uy }
}

// wireMap runs Dijkstra from (ax, ay) over the whole w×h window (Dial's
// algorithm: integer step costs, a ring of buckets) and answers, per pixel,
// the move k (0..7) that reached it (255 at the anchor and where nothing
// reached), from which traceWire walks back.
export function wireMap(rgba, w, h, ax, ay) {
  const { mag, ux, uy } = gradients(rgba, w, h)
  const n = w * h
  const base = new Float32Array(n), dirw = new Float32Array(n)
  for (let i = 0; i < n; i++) { base[i] = SCALE * (1 + G * (1 - mag[i])); dirw[i] = SCALE * D * mag[i] }
  const dist = new Int32Array(n).fill(0x7fffffff)
  const dir = new Uint8Array(n).fill(255)
  const done = new Uint8Array(n)
  const NB = MAXC + 1
  const buckets = Array.from({ length: NB }, () => [])
  const s = ay * w + ax
  dist[s] = 0
  buckets[0].push(s)
  let pending = 1
  for (let cur = 0; pending > 0; cur++) {
    const b = buckets[cur % NB]
    while (b.length) {
      const u = b.pop()
      pending--
      if (done[u] || dist[u] !== cur) continue
      done[u] = 1
      const x = u % w, y = (u - x) / w
      for (let k = 0; k < 8; k++) {
        const vx = x + DX[k], vy = y + DY[k]
        if (vx < 0 || vy < 0 || vx >= w || vy >= h) continue
        const v = u + DY[k] * w + DX[k]
        if (done[v]) continue
        const l = LEN[k]
        const along = Math.abs((DX[k] * ux[v] + DY[k] * uy[v]) / l)
        const nd = cur + Math.max(1, Math.round(l * (base[v] + dirw[v] * along)))
        if (nd < dist[v]) {
          dist[v] = nd
          dir[v] = k
          buckets[nd % NB].push(v)
          pending++
        }
      }
    }
  }
  return dir
}

// traceWire walks the map back from window pixel (x, y) to the anchor and
// answers the path as flat [x, y, ...] window pixels, anchor first; null
// when the pixel is outside the window or was not reached.
export function traceWire(dir, w, h, x, y) {
  if (x < 0 || y < 0 || x >= w || y >= h) return null
  const rev = []
  let v = y * w + x
  for (let guard = w * h; guard > 0; guard--) {
    rev.push(v)
    const k = dir[v]
    if (k === 255) break
    v -= DY[k] * w + DX[k]
  }
  const out = new Array(rev.length * 2)
  for (let i = rev.length - 1, j = 0; i >= 0; i--, j += 2) { out[j] = rev[i] % w; out[j + 1] = (rev[i] - out[j]) / w }
  return out
}

// simplify is Douglas–Peucker over a flat open path (its ends kept): a
// pixel staircase becomes the few vertices within tol pixels of it.
export function simplify(pts, tol) {
  const n = pts.length / 2
  if (n <= 2) return pts.slice()
  const keep = new Uint8Array(n)
  keep[0] = keep[n - 1] = 1
  const stack = [0, n - 1]
  while (stack.length) {
    const b = stack.pop(), a = stack.pop()
    const ax = pts[2 * a], ay = pts[2 * a + 1], bx = pts[2 * b], by = pts[2 * b + 1]
    const dx = bx - ax, dy = by - ay, l = Math.hypot(dx, dy) || 1
    let far = -1, fd = tol
    for (let i = a + 1; i < b; i++) {
      const d = Math.abs(dy * (pts[2 * i] - ax) - dx * (pts[2 * i + 1] - ay)) / l
      if (d > fd) { fd = d; far = i }
    }
    if (far >= 0) { keep[far] = 1; stack.push(a, far, far, b) }
  }
  const out = []
  for (let i = 0; i < n; i++) if (keep[i]) out.push(pts[2 * i], pts[2 * i + 1])
  return out
}
