import { useLayoutEffect, useState } from 'preact/hooks'

// useFit sizes an image to the pane it is shown in (ref goes on the pane):
// the largest size of the image's aspect that fits the pane (inside its padding), scaled up
// as well as down, so a 500 x 375 image fills an 1100 x 800 pane instead of
// sitting in its middle at 1:1. Zoom (zoom.js) is a transform on top of it,
// so the fit follows the pane's size while the zoom stays as the user set it.
export function useFit(w, h) {
  const [el, ref] = useState(null) // the pane, by a callback ref: it comes and goes with the item shown
  const [box, setBox] = useState(null)
  useLayoutEffect(() => {
    if (!el) return
    const measure = () => {
      const cs = getComputedStyle(el)
      const bw = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)
      const bh = el.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom)
      setBox((b) => (b && b[0] === bw && b[1] === bh ? b : [bw, bh]))
    }
    measure()
    const watch = new ResizeObserver(measure)
    watch.observe(el)
    return () => watch.disconnect()
  }, [el])
  if (!box || !w || !h || box[0] <= 0 || box[1] <= 0) return { ref, fit: null }
  const k = Math.min(box[0] / w, box[1] / h)
  return { ref, fit: { width: Math.floor(w * k), height: Math.floor(h * k) } }
}

// fitStyle is the image's style for a fit (none until the pane is measured:
// then the stylesheet's max sizes hold).
export const fitStyle = (fit) => (fit ? { width: fit.width + 'px', height: fit.height + 'px', maxWidth: 'none', maxHeight: 'none' } : undefined)

const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif'
const LINE = 16 // a label's height in CSS pixels (11 px at line-height 1.4, rounded up)
let ctx

// textWidth is a label's width in CSS pixels, padding included.
function textWidth(s) {
  ctx ??= document.createElement('canvas').getContext('2d')
  ctx.font = FONT
  return Math.ceil(ctx.measureText(s).width) + 8
}

// placeLabels decides where each box's label goes when the image is drawn
// at fit (its CSS size) so that no two shown labels overlap: above the box,
// else inside its top, else below it; a label with no free place is hidden
// and shows while the box is hovered. Boxes come in image pixels of an
// image of size w x h; texts[i] is box i's label text. Labels are placed in
// order of rank (lower first): the selected box, human boxes, the surer
// machine boxes, then larger ones. The answer is one of 'above', 'inside',
// 'below' or 'hidden' per box.
export function placeLabels(boxes, texts, w, h, fit, rank = () => 0) {
  if (!fit || !w || !h) return boxes.map(() => 'above')
  const kx = fit.width / w
  const ky = fit.height / h
  const order = boxes.map((_, i) => i).sort((a, b) => rank(a) - rank(b) ||
    (boxes[b].confidence ?? 1) - (boxes[a].confidence ?? 1) || boxes[b].width * boxes[b].height - boxes[a].width * boxes[a].height)
  const placed = []
  const out = new Array(boxes.length).fill('hidden')
  const free = (r) => placed.every((p) => r.x + r.w <= p.x || p.x + p.w <= r.x || r.y + r.h <= p.y || p.y + p.h <= r.y)
  for (const i of order) {
    const b = boxes[i]
    const x = b.x * kx
    const y = b.y * ky
    const bh = b.height * ky
    const lw = textWidth(texts[i])
    const tries = [['above', y - LINE], ['inside', y], ['below', y + bh]]
    for (const [where, ly] of tries) {
      if (ly < 0 || ly + LINE > fit.height) continue
      if (where === 'inside' && bh < LINE * 1.5) continue // it would cover the box it names
      const r = { x: x - 2, y: ly, w: lw, h: LINE }
      if (!free(r)) continue
      placed.push(r)
      out[i] = where
      break
    }
  }
  return out
}
