// Times the annotation workspace and the review grid in Debian's Chromium
// through playwright-core, as BenchmarkAnnotateUI (cmd/framelake) runs it:
//   BASE, KEY, SECRET  the server and a write key
//   EXPECT  JSON {bench: {taskId, names}: two 1920x1080 frames with 200 boxes each,
//                 review: {taskId, label, boxes}: a task whose frames hold that many boxes of label}
//   ROUNDS  rounds of each frame-open figure (default 7)
// It prints one JSON object:
//   deepLinkMs  navigation to /tasks/<id>?frame=N until the frame is drawn: its image decoded,
//               its 200 boxes in the DOM, two animation frames later (painted); ms from navigation start
//   nextFrameMs the next/previous-frame key until the same, as the annotator steps
//   nextFrameCpuMs  the renderer process's CPU time over each of those steps
//   scroll      the review grid scrolled one view at a time over every box: per step the blank
//               patches in view 500 ms after the scroll (blankAt500), the ms until none is blank
//               (fillMs); crops shown again (cropAgain) and of those the ones fetched over the
//               network again (cropRefetch; 0 when the browser's cache answers them all)
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET } = process.env
const want = JSON.parse(process.env.EXPECT)
const ROUNDS = +(process.env.ROUNDS || 7)
const { ctx, page, close } = await launch()
await ctx.addInitScript(([k, s]) => {
  performance.setResourceTimingBufferSize(100000) // every crop of the review, not the first 250
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])

// drawn is true once frame `to` is on the canvas with its image decoded and its 200 boxes.
const drawn = (to) => {
  const c = document.querySelector('[data-testid=frame-canvas]')
  const img = document.querySelector('[data-testid=frame-image]')
  return !!c && c.dataset.frame === to && c.dataset.ready === '1' && img.complete && img.naturalWidth > 0 &&
    document.querySelectorAll('[data-testid=box][data-source=human]').length === 200
}

try {
  const { taskId, names } = want.bench
  const out = { deepLinkMs: [], nextFrameMs: [], nextFrameCpuMs: [], scroll: {} }
  for (let i = 0; i < ROUNDS; i++) {
    const to = names[i % 2]
    await page.goto(`${BASE}/tasks/${taskId}?frame=${i % 2}`)
    const h = await page.waitForFunction(new Function('to', `const drawn = ${drawn}; return drawn(to) &&
      new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))`), to,
    { polling: 'raf', timeout: 60000 })
    out.deepLinkMs.push(Math.round(await h.jsonValue()))
  }
  // Stepping with the arrow keys, as an annotator does: timed in the page
  // from the key's event until the next frame is drawn and painted, and the
  // page's renderer process's CPU time for it (which other processes on a
  // shared machine do not inflate as they do the wall time).
  const cdp = await ctx.newCDPSession(page)
  await cdp.send('Performance.enable')
  const cpu = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ProcessTime').value
  for (let i = 0; i < ROUNDS; i++) {
    const c0 = await cpu()
    const cur = await page.locator('[data-testid=frame-canvas]').getAttribute('data-frame')
    const to = names[(names.indexOf(cur) + 1) % 2]
    const key = names.indexOf(cur) === 0 ? 'ArrowRight' : 'ArrowLeft'
    out.nextFrameMs.push(await page.evaluate(new Function('a', `const drawn = ${drawn}; return new Promise((resolve) => {
      const t0 = performance.now()
      const obs = new MutationObserver(() => {
        if (!drawn(a.to)) return
        obs.disconnect()
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(Math.round(performance.now() - t0))))
      })
      obs.observe(document.body, { subtree: true, attributes: true, childList: true })
      dispatchEvent(new KeyboardEvent('keydown', { key: a.key }))
    })`), { key, to }))
    out.nextFrameCpuMs.push(Math.round((await cpu() - c0) * 1000))
    await new Promise((r) => setTimeout(r, 300))
  }

  // The review grid, one view height a step from top to bottom.
  const { review } = want
  await page.goto(`${BASE}/review?label=${review.label}&taskId=${review.taskId}`)
  await page.getByTestId('patch').first().waitFor({ timeout: 60000 })
  const count = +(await page.getByTestId('patch-count').textContent()).replace(/\D/g, '')
  if (count !== review.boxes) throw new Error(`the review counts ${count} boxes, want ${review.boxes}`)
  const blankAt500 = []
  const fillMs = []
  for (;;) {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('.review-scroll')
      const y = el.scrollTop + el.clientHeight
      if (y >= el.scrollHeight - 1) return null
      el.scrollTop = y
      const box = el.getBoundingClientRect()
      const blanks = () => {
        let n = 0
        let seen = 0
        for (const e of el.querySelectorAll('.patch')) {
          const b = e.getBoundingClientRect()
          if (b.bottom <= box.top || b.top >= box.bottom) continue
          seen++
          const img = e.querySelector('img')
          if (!img || !img.complete || img.naturalWidth === 0) n++
        }
        return seen === 0 ? -1 : n
      }
      const t0 = performance.now()
      let at500 = null
      let full = null
      while (performance.now() - t0 < 10000 && (at500 === null || full === null)) {
        await new Promise((r) => requestAnimationFrame(r))
        const n = blanks()
        const t = performance.now() - t0
        if (full === null && n === 0) full = Math.round(t)
        if (at500 === null && t >= 500) at500 = n
      }
      return { at500, full }
    })
    if (!r) break
    blankAt500.push(r.at500)
    fillMs.push(r.full ?? 10000)
  }
  // Back to the top: every crop there was fetched once; a second sight of a
  // patch comes from the browser's cache (immutable, ETag).
  await page.locator('.review-scroll').evaluate((el) => { el.scrollTop = 0 })
  await new Promise((r) => setTimeout(r, 1000))
  const crops = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.includes('/crops/'))
    .map((e) => ({ url: e.name, bytes: e.transferSize })))
  const seen = new Set()
  let cropAgain = 0
  let cropRefetch = 0
  for (const c of crops) {
    if (seen.has(c.url)) {
      cropAgain++
      if (c.bytes > 0) cropRefetch++ // 0: the browser's cache answered
    }
    seen.add(c.url)
  }
  out.scroll = { boxes: count, steps: blankAt500.length, blankAt500, fillMs, cropRequests: crops.length, cropAgain, cropRefetch }
  console.log(JSON.stringify(out))
} finally {
  await close()
}
