// Waits on the lake grid for bench.mjs and profile.mjs. Each checks its
// condition in the page when the DOM changes or an image loads, not on every
// animation frame: a poll per frame makes Chromium render a frame for it,
// about 120 ms of its CPU per second of waiting on this machine, which the
// figures would count as the page's own work.

// inPage resolves once pred(arg) holds in the page.
export const inPage = (page, pred, arg) => page.evaluate(([src, arg]) => new Promise((resolve, reject) => {
  const ok = (0, eval)(src)
  const stop = () => { mo.disconnect(); document.removeEventListener('load', check, true); document.removeEventListener('error', check, true); clearTimeout(timer) }
  const check = () => { if (ok(arg)) { stop(); resolve() } }
  const mo = new MutationObserver(check)
  mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true })
  // an image's load does not bubble, but the document sees it while capturing (the window never does)
  document.addEventListener('load', check, true)
  document.addEventListener('error', check, true)
  const timer = setTimeout(() => { stop(); reject(new Error('timed out: ' + src)) }, 60000)
  check()
}), [pred.toString(), arg])

// thumbsLoaded: every grid cell in the viewport (or the one with index i)
// has its thumbnail decoded, and the grid shows the listing asked for (not
// the last one, kept on screen while the new one loads: aria-busy).
export const thumbsLoaded = (page, i) => inPage(page, (i) => {
  if (document.querySelector('[aria-busy=true]')) return false
  const sel = i == null ? '[data-testid=grid-item]' : `[data-testid=grid-item][data-index="${i}"]`
  const cells = [...document.querySelectorAll(sel)].filter((c) => {
    const r = c.getBoundingClientRect()
    return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth
  })
  return cells.length > 0 && cells.every((c) => { const img = c.querySelector('img'); return img && img.complete && img.naturalWidth > 0 })
}, i ?? null)

// countChanges: the item count shows a number other than from.
export const countChanges = (page, from) => inPage(page, (from) => {
  const t = document.querySelector('[data-testid=item-count]')?.textContent
  return t && t !== from && t !== '…'
}, from)
