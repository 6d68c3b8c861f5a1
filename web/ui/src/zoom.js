import { useEffect, useRef, useState } from 'preact/hooks'

// useZoom gives an element wheel zoom about the cursor, drag to pan, and the
// keys + - 0; reset is called when the shown item changes. The transform
// moves the element and its boxes together.
export function useZoom(resetKey) {
  const ref = useRef()
  const drag = useRef(null)
  const [z, setZ] = useState({ s: 1, x: 0, y: 0 })
  useEffect(() => setZ({ s: 1, x: 0, y: 0 }), [resetKey])

  const zoomAt = (factor, cx, cy) => {
    const el = ref.current
    if (!el) return
    const r = el.getBoundingClientRect()
    if (cx === undefined) [cx, cy] = [r.left + r.width / 2, r.top + r.height / 2]
    setZ((z) => {
      const s = Math.min(40, Math.max(1, z.s * factor))
      if (s === 1) return { s: 1, x: 0, y: 0 }
      // Keep the image point under the cursor where it is.
      const u = (cx - r.left) / z.s
      const v = (cy - r.top) / z.s
      return { s, x: z.x + (cx - u * s - r.left), y: z.y + (cy - v * s - r.top) }
    })
  }

  useEffect(() => {
    const el = ref.current
    if (!el) return
    const wheel = (e) => {
      e.preventDefault()
      zoomAt(Math.exp(-e.deltaY / 300), e.clientX, e.clientY)
    }
    const down = (e) => {
      drag.current = { x: e.clientX, y: e.clientY }
      el.setPointerCapture(e.pointerId)
    }
    const move = (e) => {
      const d = drag.current
      if (!d) return
      const dx = e.clientX - d.x
      const dy = e.clientY - d.y
      drag.current = { x: e.clientX, y: e.clientY }
      setZ((z) => (z.s === 1 ? z : { ...z, x: z.x + dx, y: z.y + dy }))
    }
    const up = () => (drag.current = null)
    const key = (e) => {
      if (/INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName)) return
      if (e.key === '+' || e.key === '=') zoomAt(1.25)
      else if (e.key === '-') zoomAt(0.8)
      else if (e.key === '0') setZ({ s: 1, x: 0, y: 0 })
    }
    el.addEventListener('wheel', wheel, { passive: false })
    el.addEventListener('pointerdown', down)
    el.addEventListener('pointermove', move)
    el.addEventListener('pointerup', up)
    addEventListener('keydown', key)
    return () => {
      el.removeEventListener('wheel', wheel)
      el.removeEventListener('pointerdown', down)
      el.removeEventListener('pointermove', move)
      el.removeEventListener('pointerup', up)
      removeEventListener('keydown', key)
    }
  })

  // Zoomed in, the image's pixels show as squares (pixelated), not blurred,
  // so a mask's edge can be painted pixel by pixel.
  const style = { transform: `translate(${z.x}px, ${z.y}px) scale(${z.s})`, transformOrigin: '0 0', cursor: z.s > 1 ? 'grab' : 'zoom-in',
    imageRendering: z.s >= 2 ? 'pixelated' : undefined }
  return { ref, style, scale: z.s }
}
