// Times the brush and box to mask in Debian's Chromium through
// playwright-core, as BenchmarkAssistUI (cmd/framelake) runs it:
//   BASE, KEY, SECRET  the server and a write key
//   EXPECT  JSON {brush, segment}: tasks of TestWebAppAssists' scene (an
//           ellipse at scene[0]), brush's frames 3840x2160, segment's 1920x1080
//   ROUNDS  boxes segmented (default 5)
//   REF_DIST  a build of the app (vite build --outDir) whose scissors are
//           timed first, in the same run, as a reference (scissorsRef)
//   TRACE   a file for Chromium's trace of the (last) scissors' moves
// It prints one JSON object:
//   brush    a stroke across the 4K frame: frameP50/P99 the time between
//            animation frames while painting, drawP50/P99/Max the editor's
//            redraw per frame, frames, cpuMs the renderer's CPU over the
//            stroke, saveMs mouse-up to the stroke's PUT answered, encodeMs
//            of which the stroke's pixels read back, encoded and decoded for
//            drawing, readMs of that the read-back
//   scissors 120 cursor moves after an anchor on the 4K frame: wireP50/P99/Max
//            the pointermove's own work, drawP50/P99 the redraw, frameP50/P99
//            the time between animation frames, taskMsPerMove the renderer's
//            task time over the moves / moves (CDP TaskDuration: the worker's
//            thread too), longTasks main-thread tasks > 50 ms and
//            longTaskMsPerMove their time / moves, firstMapMs the worker's
//            map of the anchor's window (513²)
//   load     the load average at the end (1, 5, 15 min)
//   segment  shownMs mouse-up to the model's mask drawn, serverMs the route's own time
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET } = process.env
const want = JSON.parse(process.env.EXPECT)
const ROUNDS = +(process.env.ROUNDS || 5)
const { ctx, page, close } = await launch({ viewport: { width: 1500, height: 1000 } })
await ctx.addInitScript(([k, s]) => {
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])
const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return +s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(2) }
const ready = (name) => page.locator(`[data-testid=frame-canvas][data-frame="${name}"][data-ready="1"]`).waitFor({ timeout: 60000 })
async function pxOf(w, h) {
  const r = await page.getByTestId('frame-image').boundingBox()
  return (x, y) => [r.x + (x * r.width) / w, r.y + (y * r.height) / h]
}

// TRACE=file.json writes Chromium's trace of the scissors' moves (the
// DevTools timeline's categories, GC and the canvas's raster) for
// chrome://tracing or Perfetto: what the long tasks are made of.
let traced = []
async function startTrace(cdp) {
  traced = []
  cdp.on('Tracing.dataCollected', (e) => traced.push(...e.value))
  await cdp.send('Tracing.start', { transferMode: 'ReportEvents', traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline',
    'disabled-by-default-devtools.timeline.frame', 'toplevel', 'v8', 'v8.execute', 'disabled-by-default-v8.gc', 'blink', 'blink.canvas', 'cc', 'skia', 'viz', '__metadata'] } })
}
async function endTrace(cdp, file) {
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r))
  await cdp.send('Tracing.end')
  await done
  writeFileSync(file, JSON.stringify({ traceEvents: traced }))
}

try {
  const out = { brush: {}, segment: { shownMs: [], serverMs: [] } }
  // The brush across the 4K frame.
  const br = want.brush
  await page.goto(`${BASE}/tasks/${br.taskId}?frame=0`)
  await ready(br.names[0])
  const at = await pxOf(br.width, br.height)
  await page.keyboard.press('1')
  await page.keyboard.press('m')
  for (let i = 0; i < 4; i++) await page.keyboard.press(']') // a 4K brush: radius about 30 px
  const cdp = await ctx.newCDPSession(page)
  await cdp.send('Performance.enable')
  const cpu = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ProcessTime').value
  await page.evaluate(() => {
    const c = document.querySelector('[data-testid=shape-canvas]')
    window.__draws = []
    new MutationObserver(() => window.__draws.push(+c.dataset.drawMs)).observe(c, { attributes: true, attributeFilter: ['data-draw-ms'] })
    window.__gaps = []
    let last = performance.now()
    const tick = (t) => { window.__gaps.push(t - last); last = t; window.__raf = requestAnimationFrame(tick) }
    window.__raf = requestAnimationFrame(tick)
    addEventListener('pointerup', () => { window.__up = performance.now() }, true)
    const note = document.querySelector('[data-testid=save-state]')
    new MutationObserver(() => { if (note.textContent === 'saved' && window.__up && !window.__saved) window.__saved = performance.now() })
      .observe(note, { childList: true, characterData: true, subtree: true })
  })
  await page.mouse.move(...at(200, 1000))
  await page.mouse.down()
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => { window.__draws = []; window.__gaps = []; r() })))
  const c0 = await cpu()
  for (let i = 1; i <= 120; i++) await page.mouse.move(...at(200 + i * 28, 1000 + 300 * Math.sin(i / 12)))
  const stroke = await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => {
    cancelAnimationFrame(window.__raf)
    r({ draws: [...window.__draws], gaps: window.__gaps.slice(1) })
  })))
  const cpuMs = ((await cpu()) - c0) * 1000
  await page.mouse.up()
  await page.waitForFunction(() => window.__saved, null, { timeout: 60000 })
  const save = await page.evaluate(() => ({ ms: window.__saved - window.__up, encode: +document.querySelector('[data-testid=shape-canvas]').dataset.encodeMs,
    read: +document.querySelector('[data-testid=shape-canvas]').dataset.readMs }))
  out.brush = { frames: stroke.gaps.length, frameP50: pct(stroke.gaps, 0.5), frameP99: pct(stroke.gaps, 0.99), drawP50: pct(stroke.draws, 0.5),
    drawP99: pct(stroke.draws, 0.99), drawMax: pct(stroke.draws, 1), cpuMs: Math.round(cpuMs), saveMs: Math.round(save.ms), encodeMs: save.encode, readMs: save.read }

  // Intelligent scissors on the same 4K frame (the stroke's mask on it): an
  // anchor on the ellipse's left end, then 120 cursor moves along its rim (a
  // quarter of it, past the anchor's first window, so wider maps are asked
  // for on the way). Per move: the page's pointermove work (the map walked
  // back, or a window cut out for the worker) and the redraw; the time
  // between animation frames; the renderer's task time over the moves (the
  // worker's thread included); tasks over 50 ms and their time; the
  // worker's map of the anchor's window. With REF_DIST, the moves run first
  // on that build of the app (a reference: the same figures before a change,
  // in the same run) and then on the one under test.
  const scissors = async () => {
    await page.goto(`${BASE}/tasks/${br.taskId}?frame=0`)
    await ready(br.names[0])
    const at = await pxOf(br.width, br.height)
    const { cx, cy, rx, ry } = br.scene[0]
    const rim = (deg) => at(cx + rx * Math.cos((deg * Math.PI) / 180), cy + ry * Math.sin((deg * Math.PI) / 180))
    await page.keyboard.press('i')
    await page.mouse.click(...rim(180))
    await page.waitForFunction(() => document.querySelector('[data-testid=shape-canvas]').dataset.wireAnchors === '1', null, { timeout: 60000 })
    await page.evaluate(() => {
      const c = document.querySelector('[data-testid=shape-canvas]')
      window.__wire = []
      window.__draws = []
      new MutationObserver((ms) => { for (const m of ms) (m.attributeName === 'data-wire-ms' ? window.__wire : window.__draws).push(+c.getAttribute(m.attributeName)) })
        .observe(c, { attributes: true, attributeFilter: ['data-wire-ms', 'data-draw-ms'] })
      window.__long = 0
      window.__longMs = 0
      new PerformanceObserver((l) => { for (const e of l.getEntries()) { window.__long++; window.__longMs += e.duration } }).observe({ type: 'longtask' })
      window.__gaps = []
      let last = performance.now()
      const tick = (t) => { window.__gaps.push(t - last); last = t; window.__raf = requestAnimationFrame(tick) }
      window.__raf = requestAnimationFrame(tick)
    })
    const task = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value
    const t0 = await task()
    const firstMapMs = +(await page.getByTestId('shape-canvas').getAttribute('data-wire-map-ms'))
    if (process.env.TRACE) await startTrace(cdp)
    const MOVES = 120
    for (let i = 1; i <= MOVES; i++) await page.mouse.move(...rim(180 + (i * 90) / MOVES))
    if (process.env.TRACE) await endTrace(cdp, process.env.TRACE)
    const sc = await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => {
      cancelAnimationFrame(window.__raf)
      r({ wire: [...window.__wire], draws: [...window.__draws], gaps: window.__gaps.slice(1), long: window.__long, longMs: window.__longMs })
    })))
    const taskMs = ((await task()) - t0) * 1000
    await page.keyboard.press('Escape')
    return { moves: MOVES, wireP50: pct(sc.wire, 0.5), wireP99: pct(sc.wire, 0.99), wireMax: pct(sc.wire, 1), drawP50: pct(sc.draws, 0.5),
      drawP99: pct(sc.draws, 0.99), frames: sc.gaps.length, frameP50: pct(sc.gaps, 0.5), frameP99: pct(sc.gaps, 0.99), taskMsPerMove: +(taskMs / MOVES).toFixed(2),
      longTasks: sc.long, longTaskMsPerMove: +(sc.longMs / MOVES).toFixed(2), firstMapMs }
  }
  if (process.env.REF_DIST) {
    const dir = process.env.REF_DIST
    const app = (u) => !/^\/(api|media|thumbs|crops)\//.test(u.pathname)
    const serve = (route) => {
      const p = new URL(route.request().url()).pathname
      const f = p.startsWith('/assets/') && existsSync(join(dir, p)) ? join(dir, p) : join(dir, 'index.html')
      route.fulfill({ body: readFileSync(f), contentType: { js: 'text/javascript', css: 'text/css', html: 'text/html' }[f.split('.').pop()] ?? 'application/octet-stream' })
    }
    await ctx.route(app, serve)
    out.scissorsRef = await scissors()
    await ctx.unroute(app, serve)
  }
  out.scissors = await scissors()
  out.load = loadavg().map((l) => +l.toFixed(1))

  // Box to mask on 1080p, ROUNDS boxes about the ellipse (each a little different).
  const sg = want.segment
  await page.goto(`${BASE}/tasks/${sg.taskId}?frame=0`)
  await ready(sg.names[0])
  const at2 = await pxOf(sg.width, sg.height)
  const { cx, cy, rx, ry } = sg.scene[0]
  await page.keyboard.press('s')
  for (let r = 0; r < ROUNDS; r++) {
    const m = 20 + 4 * r
    await page.mouse.move(...at2(cx - rx - m, cy - ry - m))
    await page.mouse.down()
    await page.mouse.move(...at2(cx + rx + m, cy + ry + m), { steps: 5 })
    await page.evaluate(() => { delete document.querySelector('[data-testid=shape-canvas]').dataset.assistShownMs })
    await page.mouse.up()
    await page.waitForFunction(() => document.querySelector('[data-testid=shape-canvas]').dataset.assistShownMs, null, { timeout: 60000 })
    const shown = +(await page.getByTestId('shape-canvas').getAttribute('data-assist-shown-ms'))
    const text = await page.getByTestId('assist-state').textContent()
    out.segment.shownMs.push(shown)
    out.segment.serverMs.push(+(/server (\d+)/.exec(text)?.[1] ?? NaN))
    await page.keyboard.press('Escape')
  }
  console.log(JSON.stringify(out))
} catch (e) {
  console.error(e)
  process.exitCode = 1
} finally {
  await close()
}
