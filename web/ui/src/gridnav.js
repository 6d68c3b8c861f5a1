import { useEffect, useLayoutEffect, useState } from 'preact/hooks'
import { itemAt } from './lake.js'

const GAP = 6
const NAME_H = 18
const MAX_SCROLL = 10_000_000

// layout places n cells of size cell in the scroller's view: the columns,
// row height, and the range of items [from, to) in or next to the view.
// Browsers cap an element's height (Chromium near 33.5M px, 160k rows of a
// million files), so past maxScroll the scrollbar maps onto the rows
// proportionally: vtop is the virtual scroll position in row pixels.
export function layout(view, cell, n) {
  const cols = Math.max(1, Math.floor((view.width + GAP) / (cell + GAP)))
  const rowH = cell + GAP + NAME_H
  const rows = Math.ceil(n / cols)
  const total = rows * rowH
  const maxScroll = +sessionStorage.getItem('framelake.maxScroll') || MAX_SCROLL
  const scale = total > maxScroll ? (total - view.height) / (maxScroll - view.height) : 1
  const vtop = view.top * scale
  const left = Math.max(0, Math.floor((view.width - (cols * (cell + GAP) - GAP)) / 2))
  const firstRow = Math.max(0, Math.floor(vtop / rowH) - 1)
  const lastRow = Math.min(rows, Math.ceil((vtop + view.height) / rowH) + 1)
  return {
    cols, rowH, scale, vtop, n,
    height: Math.min(total, maxScroll),
    from: firstRow * cols,
    to: Math.min(n, lastRow * cols),
    perPage: Math.max(1, Math.floor(view.height / rowH)) * cols,
    // cellAt is where item i is drawn inside the scroller's content, the
    // columns centred in the width they leave.
    cellAt: (i) => [left + (i % cols) * (cell + GAP), Math.floor(i / cols) * rowH - vtop + view.top],
  }
}

// useView follows the scroller's scroll position and size, restoring the
// list's last position when the grid comes back.
export function useView(list, scroller) {
  const [view, setView] = useState({ top: 0, width: 0, height: 0 })
  useLayoutEffect(() => {
    const el = scroller.current
    const cs = getComputedStyle(el)
    const pad = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight)
    const update = () => {
      // width is what the cells may fill, inside the scroller's padding.
      setView({ top: el.scrollTop, width: el.clientWidth - pad, height: el.clientHeight })
      list.scrollTop = el.scrollTop
    }
    el.scrollTop = list.scrollTop
    update()
    const ro = new ResizeObserver(update)
    ro.observe(el)
    el.addEventListener('scroll', update, { passive: true })
    return () => {
      ro.disconnect()
      el.removeEventListener('scroll', update)
    }
  }, [list])
  return view
}

// useCursor is the keyboard's place in the grid: arrows, Page Up/Down, Home
// and End move it (scrolling only as far as needed), Enter opens the focused
// cell; jump scrolls item i to the top.
export function useCursor(list, scroller, L, viewWidth) {
  const [cursor, setCursor] = useState(list.cursor)
  const scrollTo = (px) => (scroller.current.scrollTop = px / L.scale)
  const place = (i) => {
    list.cursor = i
    setCursor(i)
  }
  const move = (to) => {
    if (L.n === 0) return
    const i = Math.min(Math.max(0, to), L.n - 1)
    const el = scroller.current
    const top = Math.floor(i / L.cols) * L.rowH
    const at = el.scrollTop * L.scale
    if (top < at) scrollTo(top)
    else if (top + L.rowH > at + el.clientHeight) scrollTo(top + L.rowH - el.clientHeight)
    place(i)
  }
  const jump = (i) => {
    const idx = Math.min(Math.max(0, i), L.n - 1)
    scrollTo(Math.floor(idx / L.cols) * L.rowH)
    place(idx)
  }
  const onKey = (e) => {
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: L.cols, ArrowUp: -L.cols, PageDown: L.perPage, PageUp: -L.perPage }[e.key]
    if (step !== undefined) move(cursor < 0 ? 0 : cursor + step)
    else if (e.key === 'Home') move(0)
    else if (e.key === 'End') move(L.n - 1)
    else return
    e.preventDefault()
  }
  useEffect(() => setCursor(list.cursor), [list])
  // Back from the item view, whose arrows may have moved the cursor far.
  useEffect(() => {
    if (viewWidth > 0 && list.cursor >= 0) move(list.cursor)
  }, [list, viewWidth > 0])
  useEffect(() => {
    const a = document.activeElement
    if (cursor < 0 || (a && a !== document.body && !scroller.current.contains(a))) return // typing elsewhere
    scroller.current.querySelector(`[data-index="${cursor}"]`)?.focus({ preventScroll: true })
  }, [cursor, L.from, L.to, itemAt(list, cursor)])
  return { onKey, jump, place }
}

// useSlashFocus makes "/" focus the query bar, as in many web apps.
export function useSlashFocus() {
  useEffect(() => {
    const focus = (e) => {
      if (e.key === '/' && !/INPUT|TEXTAREA/.test(document.activeElement?.tagName)) {
        e.preventDefault()
        document.querySelector('[data-testid=query-input]')?.focus()
      }
    }
    addEventListener('keydown', focus)
    return () => removeEventListener('keydown', focus)
  }, [])
}
