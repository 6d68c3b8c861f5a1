// The magic wand: a region grown by colour from a clicked pixel, on the
// frame's pixels at full resolution, in the browser (no server, no model).

// wandFill sets in bits (a row-major w×h Uint8Array, 1 = in the region) the
// 4-connected pixels reachable from (sx, sy) whose colour differs from the
// clicked pixel's by at most tol in every channel (0..255), as image
// editors' magic wands do. It answers how many pixels it added. A scanline
// fill: each span of a row is set at once and only its neighbouring rows'
// spans are queued, so a 4K region costs a few passes over its pixels.
export function wandFill(px, sx, sy, tol, bits) {
  const { w, h, data } = px
  sx = Math.min(w - 1, Math.max(0, Math.floor(sx)))
  sy = Math.min(h - 1, Math.max(0, Math.floor(sy)))
  const s = (sy * w + sx) * 4
  const r0 = data[s], g0 = data[s + 1], b0 = data[s + 2]
  const seen = new Uint8Array(w * h)
  const like = (i) => {
    const k = i * 4
    return Math.abs(data[k] - r0) <= tol && Math.abs(data[k + 1] - g0) <= tol && Math.abs(data[k + 2] - b0) <= tol
  }
  let added = 0
  const stack = [sx, sy]
  while (stack.length) {
    const y = stack.pop(), x = stack.pop()
    const row = y * w
    if (seen[row + x] || !like(row + x)) continue
    let l = x, r = x
    while (l > 0 && !seen[row + l - 1] && like(row + l - 1)) l--
    while (r < w - 1 && !seen[row + r + 1] && like(row + r + 1)) r++
    for (let i = l; i <= r; i++) {
      seen[row + i] = 1
      if (!bits[row + i]) { bits[row + i] = 1; added++ }
    }
    for (const ny of [y - 1, y + 1]) {
      if (ny < 0 || ny >= h) continue
      const nrow = ny * w
      let inSpan = false
      for (let i = l; i <= r; i++) {
        const ok = !seen[nrow + i] && like(nrow + i)
        if (ok && !inSpan) stack.push(i, ny)
        inSpan = ok
      }
    }
  }
  return added
}

// wandMask grows every seed ({x, y}) at tolerance tol into one bitmap.
export function wandMask(px, seeds, tol) {
  const bits = new Uint8Array(px.w * px.h)
  for (const p of seeds) wandFill(px, p.x, p.y, tol, bits)
  return bits
}
