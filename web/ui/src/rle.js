// COCO's run-length encoding of masks (docs/shapes.md: `{"size": [h, w],
// "counts": "..."}`), as pycocotools' maskApi.c writes it: runs of 0s and 1s
// alternating (0s first) over the pixels in column-major order, each run after
// the second stored as its difference from the run two before, in 5-bit
// groups offset by 48 with a continuation bit. The server decodes with the
// same codec (lake/shape), so what the brush paints round-trips exactly.

// decodeCounts reads COCO's counts string into run lengths.
export function decodeCounts(s) {
  const out = []
  let p = 0
  while (p < s.length) {
    let x = 0
    let k = 0
    let more = true
    while (more) {
      if (p >= s.length) throw new Error('mask counts end inside a number')
      const c = s.charCodeAt(p) - 48
      x += (c & 0x1f) * 2 ** (5 * k)
      more = (c & 0x20) !== 0
      p++
      k++
      if (!more && c & 0x10) x -= 2 ** (5 * k) // sign-extend
    }
    if (out.length > 2) x += out[out.length - 2]
    out.push(x)
  }
  return out
}

// encodeCounts writes run lengths as COCO's counts string.
export function encodeCounts(cnts) {
  let s = ''
  for (let i = 0; i < cnts.length; i++) {
    let x = cnts[i]
    if (i > 2) x -= cnts[i - 2]
    let more = true
    while (more) {
      let c = ((x % 32) + 32) % 32 // the low 5 bits of x in two's complement
      x = Math.floor(x / 32)
      more = c & 0x10 ? x !== -1 : x !== 0
      if (more) c |= 0x20
      s += String.fromCharCode(c + 48)
    }
  }
  return s
}

// maskBits decodes a mask into a row-major Uint8Array of w×h (1 = set).
export function maskBits(mask) {
  const [h, w] = mask.size
  const bits = new Uint8Array(w * h)
  const cnts = decodeCounts(mask.counts)
  let i = 0 // column-major index
  for (let r = 0; r < cnts.length; r++) {
    const n = cnts[r]
    if (r & 1) {
      for (let j = i; j < i + n; j++) {
        const x = (j / h) | 0
        bits[(j - x * h) * w + x] = 1
      }
    }
    i += n
  }
  if (i !== w * h) throw new Error(`mask counts sum to ${i}, not ${h} × ${w}`)
  return bits
}

// encodeBits encodes a row-major w×h bitmap (non-zero = set) as a mask.
export function encodeBits(bits, w, h) {
  const cnts = []
  let cur = 0
  let run = 0
  for (let x = 0; x < w; x++) {
    for (let y = 0; y < h; y++) {
      const v = bits[y * w + x] ? 1 : 0
      if (v !== cur) {
        cnts.push(run)
        run = 0
        cur = v
      }
      run++
    }
  }
  cnts.push(run)
  return { size: [h, w], counts: encodeCounts(cnts) }
}

// encodeRegion encodes a w×h mask whose set pixels all lie in the
// rectangle (x0, y0, rw, rh), given as its row-major rw×rh bitmap: the rest
// of the frame is counted as runs of 0s without being read, so a brush
// stroke on a 4K frame encodes in the time of the pixels it covers.
export function encodeRegion(part, x0, y0, rw, rh, w, h) {
  const cnts = []
  let cur = 0
  let run = x0 * h + y0 // the columns left of it, and the rows above in its first column
  for (let x = 0; x < rw; x++) {
    if (x > 0 && rh < h) { if (cur) { cnts.push(run); run = 0; cur = 0 } run += h - rh } // below in this column, above in the next
    for (let y = 0; y < rh; y++) {
      const v = part[y * rw + x]
      if (v !== cur) { cnts.push(run); run = 0; cur = v }
      run++
    }
  }
  const tail = h - y0 - rh + (w - x0 - rw) * h // below it in its last column, and the columns right of it
  if (cur && tail) { cnts.push(run); run = 0 }
  cnts.push(run + tail)
  return { size: [h, w], counts: encodeCounts(cnts) }
}

// maskArea counts a mask's set pixels without decoding it to a bitmap.
export function maskArea(mask) {
  let a = 0
  decodeCounts(mask.counts).forEach((n, i) => { if (i & 1) a += n })
  return a
}
