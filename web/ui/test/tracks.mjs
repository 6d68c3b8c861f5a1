// Drives the video workspace and its timeline in Debian's Chromium through
// playwright-core, for TestWebAppTracks (cmd/framelake), which runs it with:
//   BASE, KEY, SECRET  the server and a write key
//   EXPECT  JSON {video, long, frames, fps, square: {x0, y0, dx, dy, size}}: on video a white
//           square of size px is at (x0 + dx·n, y0 + dy·n) on frame n; long has 18,000
//           frames and 200 tracks of operation "bench"
//   OUT     folder for screenshots
// It prints its figures as "figure: ..." lines and exits non-zero naming the
// first check that failed.
import { join } from 'node:path'
import { loadavg } from 'node:os'
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const sq = want.square
const OP = 'label:web'
const { ctx, page, close } = await launch({ viewport: { width: 1400, height: 1000 } })
await ctx.addInitScript(([k, s]) => {
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id) => page.getByTestId(id)
const rest = async (path) => {
  const r = await fetch(BASE + '/api/v1' + path, { headers: { key: KEY, secret: SECRET } })
  const body = await r.json()
  check(r.ok, `${path}: ${r.status} ${JSON.stringify(body)}`)
  return body
}
const tracksPath = `/lake/files/${encodeURIComponent(want.video)}/tracks`
const apiTracks = async () => (await rest(`${tracksPath}?operation=${OP}`)).tracks
async function until(fn, what, ms = 10000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out: ' + what)
    await new Promise((r) => setTimeout(r, 100))
  }
}
const saved = async (what) => {
  await until(async () => /^saved$|split|merged/.test(await byTest('save-state').textContent()), what)
}
const onFrame = (n) => page.locator(`[data-testid=video-workspace][data-frame="${n}"][data-ready="1"]`).waitFor()
const truth = (n) => ({ x: sq.x0 + sq.dx * n, y: sq.y0 + sq.dy * n, width: sq.size, height: sq.size })
function iou(a, b) {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)
  if (w <= 0 || h <= 0) return 0
  return (w * h) / (a.width * a.height + b.width * b.height - w * h)
}
// drawBox drags a box over the image pixels of b on the shown frame.
async function drawBox(b) {
  const r = await byTest('frame-image').boundingBox()
  const W = 320, H = 240
  const at = (x, y) => [r.x + (x * r.width) / W, r.y + (y * r.height) / H]
  await page.mouse.move(...at(b.x, b.y))
  await page.mouse.down()
  await page.mouse.move(...at(b.x + b.width / 2, b.y + b.height / 2), { steps: 3 })
  await page.mouse.move(...at(b.x + b.width, b.y + b.height), { steps: 3 })
  await page.mouse.up()
}
const key = async (k, times = 1) => { for (let i = 0; i < times; i++) await page.keyboard.press(k) }
// timeline gives page coordinates of a frame on a track's row.
async function timelineAt(frame, number) {
  const tl = byTest('timeline')
  const r = await tl.boundingBox()
  const [x, y] = await tl.evaluate((c, [f, n]) => [c.xOf(f), c.yOf(n)], [frame, number])
  return [r.x + x, r.y + y]
}

try {
  // The item view of the video opens its workspace.
  await page.goto(`${BASE}/items/${encodeURIComponent(want.video)}`)
  await byTest('label-tracks').click()
  await page.waitForURL(/\/videos\/.+\/label/)
  await onFrame(0)
  check((await byTest('video-workspace').getAttribute('data-op')) === OP, 'a video without tracks is labelled as ' + OP)

  // Two keyframes of one track: a box on frame 0 starts it, one on frame 10
  // (where the track is not) adds its second keyframe.
  await drawBox(truth(0))
  await saved('the first box')
  await key('Shift+Period')
  await onFrame(10)
  await drawBox(truth(10))
  await saved('the second keyframe')
  let ts = await apiTracks()
  check(ts.length === 1 && ts[0].keyframes.map((k) => k.frame).join() === '0,10', 'one track with keyframes 0 and 10: ' + JSON.stringify(ts))
  const mid = (await rest(`${tracksPath}?frame=5&operation=${OP}`)).shapes
  const t5 = truth(5)
  check(mid.length === 1 && mid[0].interpolated && ['x', 'y', 'width', 'height'].every((f) => Math.abs(mid[0][f] - t5[f]) <= 1.5),
    `frame 5 is interpolated at the square ${JSON.stringify(t5)}: ${JSON.stringify(mid)}`)
  await key('Comma', 5)
  await onFrame(5)
  check(await page.locator('.box.interpolated').count() === 1, 'frame 5 shows its box dashed (interpolated)')
  await shot('1-interpolated')

  // Drag the keyframe of frame 10 to frame 20 on the timeline.
  const from = await timelineAt(10, 1), to = await timelineAt(20, 1)
  await page.mouse.move(...from)
  await page.mouse.down()
  await page.mouse.move(from[0] + (to[0] - from[0]) / 2, from[1], { steps: 4 })
  await page.mouse.move(...to, { steps: 4 })
  await page.mouse.up()
  await saved('the dragged keyframe')
  ts = await apiTracks()
  check(ts[0].keyframes.map((k) => k.frame).join() === '0,20', 'the keyframe moved to frame 20: ' + JSON.stringify(ts[0].keyframes))
  await shot('2-dragged')

  // Propagation: a box on the square on frame 30 starts track 2; Track
  // forward follows it to the video's end; every frame it covers overlaps
  // the square by IoU >= 0.8 (keyframes and the frames between them).
  await page.goto(`${BASE}/videos/${encodeURIComponent(want.video)}/label?frame=30&op=${OP}`)
  await onFrame(30)
  // The box takes the square's edge, a pixel round it, as a person's box
  // does: a box of flat white alone has no pattern to correlate (the tracker
  // stops at once, low_score).
  const b30 = truth(30)
  await drawBox({ x: b30.x - 1, y: b30.y - 1, width: b30.width + 2, height: b30.height + 2 })
  await saved('the box on frame 30')
  ts = await apiTracks()
  check(ts.length === 2 && ts[1].number === 2 && ts[1].keyframes.length === 1, 'frame 30 starts track 2: ' + JSON.stringify(ts.map((t) => t.number)))
  await byTest('track-every').fill('5')
  await byTest('track-forward').click()
  await page.locator('[data-testid=propagate-job][data-status=completed]').waitFor({ timeout: 60000 })
  const job = byTest('propagate-job')
  const stopped = +(await job.getAttribute('data-stopped-at'))
  check(stopped === want.frames - 1 && (await job.getAttribute('data-reason')) === 'video_end', `tracked to the video's end: ${stopped} ${await job.getAttribute('data-reason')}`)
  // The new keyframes appear without a reload.
  await until(async () => +(await page.locator('[data-testid=track-row][data-number="2"]').getAttribute('data-keyframes')) > 1, 'track 2 shows its new keyframes')
  ts = await apiTracks()
  const ious = []
  for (let n = 31; n <= stopped; n++) {
    const s = (await rest(`${tracksPath}?frame=${n}&operation=${OP}`)).shapes.find((x) => x.number === 2)
    check(s, `track 2 is on frame ${n}`)
    ious.push(iou(s, truth(n)))
  }
  const worst = Math.min(...ious)
  console.log(`figure: propagation over frames 31-${stopped}: ${ts[1].keyframes.length - 1} keyframes written, IoU min ${worst.toFixed(3)}, mean ${(ious.reduce((a, b) => a + b, 0) / ious.length).toFixed(3)}`)
  check(worst >= 0.8, `every propagated frame overlaps the square by IoU >= 0.8: ${ious.map((v) => v.toFixed(2)).join(' ')}`)
  // The ended propagation is track 2's news: its line goes while track 1 is selected and comes back with track 2.
  await page.locator('[data-testid=track-row][data-number="1"]').click()
  await until(async () => (await byTest('propagate-job').count()) === 0, "track 2's propagation line goes with track 1 selected")
  await page.locator('[data-testid=track-row][data-number="2"]').click()
  await page.locator('[data-testid=propagate-job][data-number="2"][data-status=completed]').waitFor()
  await key('Shift+Period')
  await onFrame(40)
  await shot('3-propagated')

  // Split track 2 at frame 45, then merge the parts again.
  await key('Period', 5)
  await onFrame(45)
  await byTest('track-split').click()
  await saved('the split')
  ts = await apiTracks()
  check(ts.length === 3 && ts[1].lastFrame === 44 && ts[2].number === 3 && ts[2].firstFrame === 45, 'split at 45: ' + JSON.stringify(ts.map((t) => [t.number, t.firstFrame, t.lastFrame])))
  await page.locator('[data-testid=track-row][data-number="2"]').click()
  await page.locator('[data-testid=track-row][data-number="3"]').click({ modifiers: ['Control'] })
  await byTest('track-merge').click()
  await saved('the merge')
  ts = await until(async () => { const x = await apiTracks(); return x.length === 2 && x }, 'two tracks after the merge')
  check(ts[1].number === 2 && ts[1].firstFrame === 30 && ts[1].lastFrame === stopped, 'merged: ' + JSON.stringify(ts.map((t) => [t.number, t.firstFrame, t.lastFrame])))

  // Out of view from frame 47 (not a keyframe) on, until the next keyframe.
  await page.locator('[data-testid=track-row][data-number="2"]').click()
  await key('Period', 2)
  await onFrame(47)
  await key('o')
  await saved('outside')
  ts = await apiTracks()
  check(ts[1].outside.includes(47), 'track 2 is out of view from frame 47: ' + JSON.stringify(ts[1].outside))
  check(await page.locator('[data-testid=box]').count() === 0, 'no box on frame 47')
  await shot('4-outside')

  // A polygon track: a quadrilateral clicked on frame 47 (Esc first: the next
  // shape starts a track), another on frame 51; frame 49 is interpolated
  // between them by the server's polygon rule and drawn from its answer.
  await key('Escape')
  await key('p')
  const clickAt = async (pts) => {
    const r = await byTest('frame-image').boundingBox()
    for (const [x, y] of pts) await page.mouse.click(r.x + (x * r.width) / 320, r.y + (y * r.height) / 240)
    await key('Enter')
  }
  await clickAt([[20, 20], [80, 20], [80, 60], [20, 60]])
  await saved('the first polygon')
  await key('Period', 4)
  await onFrame(51)
  await clickAt([[60, 100], [120, 100], [120, 140], [60, 140]])
  await saved('the second polygon keyframe')
  ts = await apiTracks()
  const poly = ts.find((t) => t.type === 'polygon')
  check(poly && poly.keyframes.map((k) => k.frame).join() === '47,51', 'a polygon track keyed on 47 and 51: ' + JSON.stringify(ts.map((t) => [t.number, t.type])))
  check(Math.abs(poly.keyframes[0].polygon[0].length - 8) === 0, 'four vertices: ' + JSON.stringify(poly.keyframes[0].polygon))
  const p49 = (await rest(`${tracksPath}?frame=49&operation=${OP}`)).shapes.find((x) => x.number === poly.number)
  check(p49?.interpolated && Math.abs(p49.x - 40) <= 1.5 && Math.abs(p49.y - 60) <= 1.5, 'frame 49 is the polygon halfway: ' + JSON.stringify(p49))
  await key('Comma', 2)
  await onFrame(49)
  await until(async () => +(await byTest('shape-canvas').getAttribute('data-shapes')) === 1, 'the interpolated polygon is drawn on frame 49')
  await shot('4b-polygon-interpolated')
  await key('b')

  // Play from frame 0 for two seconds at the video's 10 fps.
  await page.goto(`${BASE}/videos/${encodeURIComponent(want.video)}/label?frame=0&op=${OP}`)
  await onFrame(0)
  const t0 = Date.now()
  await key('Space')
  await page.waitForTimeout(2000)
  await key('Space')
  const played = +(await byTest('video-workspace').getAttribute('data-frame'))
  const secs = (Date.now() - t0) / 1000
  console.log(`figure: play: ${played} frames in ${secs.toFixed(2)} s (${(played / secs).toFixed(1)} frames/s; the video is ${want.fps} fps; load ${loadavg()[0].toFixed(1)})`)
  // Its rate is the machine's (at load 25 on 2 cores the page gets a small
  // share of a core): the check is that it plays, not how fast.
  check(played >= 2, `play advanced ${played} frames in 2 s`)

  // Tracking metrics on the evaluations page: a tracker's copy of the
  // tracks, shifted 6 px, scored against them; every figure is the API's.
  const mine = await apiTracks()
  const shifted = mine.map((t) => ({ number: t.number + 100, label: t.label, outside: t.outside,
    keyframes: t.keyframes.map((k) => ({ frame: k.frame, x: k.x + 6, y: k.y, width: k.width, height: k.height })) }))
  const put = await fetch(`${BASE}/api/v1${tracksPath}`, { method: 'PUT', headers: { key: KEY, secret: SECRET, 'content-type': 'application/json' },
    body: JSON.stringify({ operation: 'run:tracker', tracks: shifted }) })
  check(put.ok, 'PUT the tracker tracks: ' + put.status)
  const m = await rest(`${tracksPath}/metrics?truth=${OP}&predicted=run:tracker`)
  await page.goto(`${BASE}/evaluations`)
  await byTest('tm-video').waitFor()
  await byTest('tm-video').selectOption(want.video)
  await byTest('tm-truth').selectOption(OP)
  await byTest('tm-predicted').selectOption('run:tracker')
  const all = page.locator('[data-testid=tm-row][data-label=""]')
  await all.waitFor()
  for (const f of ['mota', 'motp', 'idf1', 'hota']) {
    check(+(await all.getAttribute('data-' + f)) === m.labels[''][f], `${f} on the page is the API's ${m.labels[''][f]}`)
  }
  console.log(`figure: metrics shown: MOTA ${m.labels[''].mota.toFixed(3)} MOTP ${m.labels[''].motp.toFixed(3)} IDF1 ${m.labels[''].idf1.toFixed(3)} HOTA ${m.labels[''].hota.toFixed(3)}`)
  await byTest('track-metrics').scrollIntoViewIfNeeded()
  await shot('5-track-metrics')

  // The grid's video tiles show their track count (every operation's).
  const count = (await rest(tracksPath)).tracks.length
  await page.goto(`${BASE}/?type=video`)
  const badge = page.locator(`[data-testid=grid-item][data-unique-name="${want.video}"] [data-testid=track-badge]`)
  await badge.waitFor()
  check(+(await badge.getAttribute('data-count')) === count, `the tile shows ${count} tracks: ${await badge.getAttribute('data-count')}`)
  check(+(await page.locator(`[data-testid=grid-item][data-unique-name="${want.long}"] [data-testid=track-badge]`).getAttribute('data-count')) === 200, 'the long video shows 200 tracks')
  await shot('6-grid-badges')

  // The timeline of 200 tracks over 18,000 frames.
  await page.goto(`${BASE}/videos/${encodeURIComponent(want.long)}/label?frame=9000&op=bench`)
  await page.locator('[data-testid=timeline][data-tracks="200"]').waitFor({ timeout: 30000 })
  const draws = []
  for (let i = 0; i < 10; i++) {
    await key('Period')
    await page.locator(`[data-testid=timeline][data-frame="${9001 + i}"]`).waitFor()
    draws.push(+(await byTest('timeline').getAttribute('data-draw-ms')))
  }
  // The draw above is the script's time; a forced draw read back (one
  // pixel) waits for the canvas's rasterisation too.
  for (let i = 0; i < 5; i++) {
    draws.push(await byTest('timeline').evaluate((c) => {
      const t0 = performance.now()
      c.drawNow()
      c.getContext('2d').getImageData(0, 0, 1, 1)
      return performance.now() - t0
    }))
  }
  const flushed = draws.splice(10).sort((a, b) => a - b)
  console.log(`figure: timeline draw read back: median ${flushed[2].toFixed(2)} ms, max ${flushed[4].toFixed(2)} ms (5 draws)`)
  // Medians: on a loaded machine (the suite runs beside others) one draw in
  // ten can be descheduled for longer than the draw itself.
  check(flushed[2] < 100, 'the timeline draws and rasterises in < 100 ms: ' + flushed.join(' '))
  draws.sort((a, b) => a - b)
  console.log(`figure: timeline of 200 tracks x 18,000 frames: draw median ${draws[5].toFixed(2)} ms, max ${draws[9].toFixed(2)} ms (10 draws)`)
  check(draws[5] < 100, 'the timeline draws in < 100 ms: ' + draws.join(' '))
  await shot('7-timeline-200')
  console.log('tracks: all checks passed')
} catch (e) {
  await shot('failure').catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await close()
}
