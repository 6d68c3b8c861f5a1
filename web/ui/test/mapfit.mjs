// The embedding map fills its canvas and its legend counts the selection
// (issue 31 item 24), in Debian's Chromium through playwright-core.
// TestWebAppMapFit (cmd/framelake) stores vectors that lie along a line and
// runs this with BASE, KEY, SECRET (a read key), EXPECT (JSON {points}) and
// OUT (screenshots). It exits non-zero naming the first check that failed.
import { launch } from './chromium.mjs'
import { join } from 'node:path'

const { BASE, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { page, close } = await launch({ viewport: { width: 1440, height: 900 } })
const byTest = (id) => page.getByTestId(id)
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const errors = []
page.on('pageerror', (e) => errors.push(e.message))
page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()))

try {
  await page.goto(BASE + '/')
  await byTest('signin-key').fill(process.env.KEY)
  await byTest('signin-secret').fill(process.env.SECRET)
  await byTest('signin-submit').click()
  await byTest('item-count').waitFor()

  // The map fills its canvas, and the legend counts the selection.
  await page.goto(BASE + '/map?model=lens&color=label')
  const drawn = await page.waitForFunction((n) => { const c = document.querySelector('[data-testid=map-canvas]'); return c && +c.dataset.points === n && c.dataset.drawMs !== '' }, want.points, { timeout: 30000 })
    .then(() => true, () => false)
  if (!drawn) await shot('08-map-failed')
  check(drawn, `the map draws ${want.points} points: ${await page.evaluate(() => { const c = document.querySelector('[data-testid=map-canvas]'); return c ? JSON.stringify(c.dataset) : document.querySelector('main').textContent })} ${errors.join(' | ')}`)
  await page.waitForTimeout(300)
  const cb = await byTest('map-canvas').boundingBox()
  const pts = await page.evaluate((n) => { const c = document.querySelector('[data-testid=map-canvas]'); return [...Array(n).keys()].map((i) => c.pointAt(i)) }, want.points)
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1])
  const span = [(Math.max(...xs) - Math.min(...xs)) / cb.width, (Math.max(...ys) - Math.min(...ys)) / cb.height]
  check(span[0] > 0.75 && span[1] > 0.75, `the points span the canvas on both axes: ${span}`)
  check(Math.min(...xs) >= 8 && Math.min(...ys) >= 8 && Math.max(...xs) <= cb.width - 8 && Math.max(...ys) <= cb.height - 8,
    `every point is inside the canvas with a margin: x ${Math.min(...xs)}..${Math.max(...xs)} of ${cb.width}, y ${Math.min(...ys)}..${Math.max(...ys)} of ${cb.height}`)
  await shot('08-map')
  const split = (Math.min(...xs) + Math.max(...xs)) / 2
  const caught = xs.filter((x) => x < split).length
  await page.keyboard.down('Shift')
  await page.mouse.move(cb.x + 3, cb.y + 3)
  await page.mouse.down()
  for (const [x, y] of [[split, 3], [split, cb.height - 3], [3, cb.height - 3], [3, 6]]) await page.mouse.move(cb.x + x, cb.y + y, { steps: 12 })
  await page.mouse.up()
  await page.keyboard.up('Shift')
  await page.waitForFunction((k) => +document.querySelector('[data-testid=map-selected]').dataset.count === k, caught, { timeout: 10000 })
  await page.locator('[data-testid=map-legend][data-of=selection]').waitFor()
  const legend = await byTest('map-legend-row').evaluateAll((ls) => ls.map((l) => +l.dataset.count))
  check(legend.reduce((a, b) => a + b, 0) === caught, `the legend counts the ${caught} selected points: ${legend}`)
  await shot('09-map-selection')

  check(errors.length === 0, `no page errors: ${errors.join(' | ')}`)
  console.log('map checks passed')
} finally {
  await close()
}
