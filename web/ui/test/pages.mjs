// Drives the embedding map, the video player and the models page in Debian's
// Chromium through playwright-core, against a running framelake. The Go test
// TestWebAppPages (cmd/framelake) fills the lake and runs this with:
//   BASE, KEY, SECRET  the server's URL and a read key
//   EXPECT  JSON {images: uniqueNames (0-2 labelled car, 3-5 person), video, fps, frames,
//           boxes: {frame: {label, x, y, width, height}}, run, job}
//   OUT     folder for screenshots
// It exits non-zero naming the first check that failed.
import { join } from 'node:path'
import { launch, mapDrawn } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { page, close } = await launch()
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id) => page.getByTestId(id)
const n = want.images.length

try {
  // The map's deep link opens after sign-in; the first visit starts the projection job.
  await page.goto(`${BASE}/map`)
  await byTest('signin-key').fill(KEY)
  await byTest('signin-secret').fill(SECRET)
  await byTest('signin-submit').click()
  await mapDrawn(page, n)
  check((await byTest('map-status').getAttribute('data-status')) === 'current', 'the map is current once drawn')
  const canvas = byTest('map-canvas')
  const cb = await canvas.boundingBox()
  // Where each point is (CSS pixels in the page) and which file it is.
  const points = await canvas.evaluate((c, n) => [...Array(n).keys()].map((i) => ({ at: c.pointAt(i), name: c.uniqueNameAt(i) })), n)
  check(new Set(points.map((p) => p.name)).size === n && points.every((p) => want.images.includes(p.name)), 'every embedded image is a point')
  const onPage = (p) => ({ x: cb.x + p.at[0], y: cb.y + p.at[1] })
  // Points are drawn: the canvas has coloured pixels where the points are.
  const colourAt = (ps) => canvas.evaluate((c, ps) => {
    const k = c.width / c.getBoundingClientRect().width
    const g = c.getContext('2d')
    return ps.map((p) => [...g.getImageData(Math.round(p.at[0] * k), Math.round(p.at[1] * k), 1, 1).data])
  }, ps)
  const background = [12, 13, 15]
  const far = (a, b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) > 40
  check((await colourAt(points)).every((c) => far(c, background)), 'each point is drawn on the canvas')
  await shot('1-map')

  // Colour by label: the car points share one colour, the person points another.
  await byTest('map-color').selectOption('label')
  await page.waitForFunction(() => document.querySelectorAll('.legend li').length === 2)
  await page.waitForTimeout(300)
  const coloured = await colourAt(points)
  const label = (name) => (want.images.indexOf(name) < 3 ? 'car' : 'person')
  const byLabel = {}
  points.forEach((p, i) => (byLabel[label(p.name)] ??= []).push(coloured[i]))
  check(!far(byLabel.car[0], byLabel.car[1]) && !far(byLabel.person[0], byLabel.person[1]) && far(byLabel.car[0], byLabel.person[0]),
    `points coloured by label: ${JSON.stringify(byLabel)}`)
  await shot('2-map-by-label')

  // Hovering a point shows its thumbnail.
  await page.mouse.move(onPage(points[0]).x, onPage(points[0]).y)
  const hover = byTest('map-hover')
  await hover.waitFor()
  check((await hover.getAttribute('data-unique-name')) === points[0].name, 'the hover names the point under the mouse')
  await page.waitForFunction(() => { const i = document.querySelector('[data-testid=map-hover] img'); return i && i.complete && i.naturalWidth > 0 })
  await shot('3-map-hover')

  // A shift-drag lasso around the points left of a gap selects them; the grid then shows just those.
  const xs = points.map((p) => p.at[0]).sort((a, b) => a - b)
  let cut = -1
  for (let i = 1; i < xs.length - 1; i++) if (xs[i + 1] - xs[i] > 8 && (cut < 0 || Math.abs(i + 1 - n / 2) < Math.abs(cut - n / 2))) cut = i + 1
  check(cut > 0, `the points leave a gap to lasso across: ${xs}`)
  const split = (xs[cut - 1] + xs[cut]) / 2
  const caught = points.filter((p) => p.at[0] < split).map((p) => p.name).sort()
  const corners = [[3, 3], [split, 3], [split, cb.height - 3], [3, cb.height - 3], [3, 6]]
  await page.mouse.move(10, 10)
  await page.keyboard.down('Shift')
  await page.mouse.move(cb.x + 3, cb.y + 3)
  await page.mouse.down()
  for (let i = 1; i < corners.length; i++) {
    await page.mouse.move(cb.x + corners[i][0], cb.y + corners[i][1], { steps: 12 })
  }
  await page.mouse.up()
  await page.keyboard.up('Shift')
  await page.waitForFunction((k) => +document.querySelector('[data-testid=map-selected]').dataset.count === k, caught.length)
  await shot('4-map-lasso')
  await byTest('map-open-grid').click()
  await byTest('picked-banner').waitFor()
  await page.waitForFunction((k) => document.querySelectorAll('[data-testid=grid-item]').length === k, caught.length)
  const gridNames = (await byTest('grid-item').evaluateAll((els) => els.map((e) => e.dataset.uniqueName))).sort()
  check(JSON.stringify(gridNames) === JSON.stringify(caught), `the grid shows the lassoed files: ${gridNames} vs ${caught}`)
  check((await byTest('item-count').textContent()).startsWith(String(caught.length)), 'the count is the lassoed files')
  await shot('5-grid-of-lasso')

  // The video steps frame by frame (, and .) and shows the boxes of the frame on screen.
  await page.goto(`${BASE}/items/${encodeURIComponent(want.video)}`)
  const video = byTest('item-video')
  await page.waitForFunction(() => document.querySelector('[data-testid=item-video]')?.readyState >= 2)
  const frameNo = async () => +(await byTest('video-frame').getAttribute('data-frame'))
  const waitFrame = (f) => page.waitForFunction((f) => {
    const v = document.querySelector('[data-testid=item-video]')
    return +document.querySelector('[data-testid=video-frame]').dataset.frame === f && !v.seeking && v.readyState >= 2
  }, f)
  // Frame n is a flat grey of luma 12n: the pixel on screen tells the frame shown.
  const shownFrame = () => video.evaluate((v) => {
    const c = document.createElement('canvas')
    c.width = v.videoWidth
    c.height = v.videoHeight
    const g = c.getContext('2d')
    g.drawImage(v, 0, 0)
    const grey = g.getImageData(c.width >> 1, c.height >> 1, 1, 1).data[0]
    let best = 0
    for (let f = 0; f < 21; f++) if (Math.abs((12 * f - 16) * 1.164 - grey) < Math.abs((12 * best - 16) * 1.164 - grey)) best = f
    return best
  })
  const boxAt = async (f) => {
    const b = want.boxes[f]
    const boxes = byTest('item-box')
    check((await boxes.count()) === 1 && (await boxes.getAttribute('data-label')) === b.label, `frame ${f} shows its one box, ${b.label}`)
    const vb = await video.boundingBox()
    const bb = await boxes.boundingBox()
    const k = vb.width / 160
    const off = Math.max(Math.abs(bb.x - (vb.x + b.x * k)), Math.abs(bb.y - (vb.y + b.y * k)), Math.abs(bb.width - b.width * k))
    check(off <= 2 * k, `frame ${f}: box at ${JSON.stringify(bb)} is where the annotation says (off by ${off.toFixed(1)} px)`)
  }
  check((await frameNo()) === 0, 'the player starts at frame 0')
  for (let i = 0; i < 3; i++) await page.keyboard.press('.')
  await waitFrame(3)
  check((await shownFrame()) === 3, `after three steps the video shows frame 3, not ${await shownFrame()}`)
  await boxAt(3)
  await shot('6-video-frame-3')
  await page.keyboard.press('.')
  await waitFrame(4)
  check((await shownFrame()) === 4, 'one more step shows frame 4')
  await boxAt(4)
  await page.keyboard.press(',')
  await page.keyboard.press(',')
  await waitFrame(2)
  check((await shownFrame()) === 2 && (await byTest('item-box').count()) === 0, 'two steps back: frame 2, which has no boxes')
  await byTest('video-frame-input').fill('12')
  await byTest('video-frame-input').press('Enter')
  await waitFrame(12)
  check((await shownFrame()) === 12, 'seeking to frame 12 shows frame 12')
  await page.locator('body').click({ position: { x: 5, y: 300 } })
  await page.keyboard.press(',')
  await waitFrame(11)
  check((await shownFrame()) === 11, 'a step back from 12 shows 11')
  await byTest('video-frame-input').fill('4')
  await byTest('video-frame-input').press('Enter')
  await waitFrame(4)
  await boxAt(4)
  await shot('7-video-frame-4')

  // Models and runs: the default embedding model with its dimension, its run with the files it did, linked to the job.
  await page.goto(`${BASE}/models`)
  const model = page.locator('[data-testid=model-row][data-model-name="default-embedding"]')
  await model.waitFor()
  check(/\d+ \(cosine\)/.test(await model.textContent()), `the model row shows the dimension: ${await model.textContent()}`)
  const run = page.locator(`[data-testid=run-row][data-run-id="${want.run}"]`)
  check((await run.getAttribute('data-status')) === 'completed', 'the run is completed')
  check((await run.getByTestId('run-done').textContent()) === String(n), `the run did ${n} files`)
  await shot('8-models')
  await run.getByRole('link', { name: want.job }).click()
  await page.locator(`[data-testid=job-row][data-job-id="${want.job}"]`).waitFor()
  check(new URL(page.url()).pathname === '/jobs/' + want.job, 'the run links to its job')
  console.log('all page checks passed')
} catch (e) {
  await shot('failure').catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await close()
}
