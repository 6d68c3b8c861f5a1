// Times the embedding map in Debian's headless Chromium (BenchmarkMapDraw100k
// in cmd/framelake runs it): BASE, KEY, SECRET a read key, MODEL, POINTS the
// number of points the map has, OUT a folder for a screenshot. It prints JSON:
// open-ms (from navigation to the points drawn: fetch, parse and draw),
// load-ms and draw-ms as the page measured them, and the same coloured by label.
import { join } from 'node:path'
import { launch, mapDrawn } from './chromium.mjs'

const { BASE, KEY, SECRET, MODEL, POINTS, OUT } = process.env
const { page, close } = await launch()
const out = {}
try {
  await page.goto(`${BASE}/`)
  await page.getByTestId('signin-key').fill(KEY)
  await page.getByTestId('signin-secret').fill(SECRET)
  await page.getByTestId('signin-submit').click()
  await page.getByTestId('item-count').waitFor()
  for (const [name, color] of [['', ''], ['label-', 'label']]) {
    const t0 = Date.now()
    await page.goto(`${BASE}/map?model=${MODEL}${color ? '&color=' + color : ''}`)
    await mapDrawn(page, +POINTS, 120000)
    out[name + 'open-ms'] = Date.now() - t0
    const c = page.getByTestId('map-canvas')
    out[name + 'load-ms'] = +(await c.getAttribute('data-load-ms'))
    out[name + 'draw-ms'] = +(await c.getAttribute('data-draw-ms'))
    await page.screenshot({ path: join(OUT, `map-100k${color ? '-' + color : ''}.png`) })
  }
  console.log(JSON.stringify(out))
} catch (e) {
  console.error(e)
  process.exitCode = 1
} finally {
  await close()
}
