// The histogram of a quality score, in Debian's Chromium through
// playwright-core. The Go test TestWebAppQualityHistogram (cmd/framelake)
// starts the server, uploads images (scored at ingest) and runs this with:
//   BASE         the server's URL
//   KEY, SECRET  a read key
//   EXPECT       JSON {count: files}
//   OUT          folder for screenshots
// It exits non-zero naming the first check that failed.
import { launch } from './chromium.mjs'
import { join } from 'node:path'

const { BASE, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { page, close } = await launch()
const byTest = (id) => page.getByTestId(id)
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}

try {
  await page.goto(BASE + '/')
  await byTest('signin-key').fill(process.env.KEY)
  await byTest('signin-secret').fill(process.env.SECRET)
  await byTest('signin-submit').click()
  await byTest('item-count').waitFor()
  const fields = await byTest('histogram-field').locator('option').evaluateAll((os) => os.map((o) => o.value))
  for (const f of ['sharpness', 'brightness', 'contrast', 'entropy', 'aspect']) check(fields.includes('quality.' + f), 'histogram offers quality.' + f + ': ' + fields)
  await byTest('histogram-field').selectOption('quality.brightness')
  // Wait for the new field's bars (more than one, their counts adding up),
  // and name what was drawn if none come.
  const counts = () => page.locator('[data-testid=histogram-bin]').evaluateAll((bs) => bs.map((b) => +b.dataset.count))
  const drawn = await page.waitForFunction((n) => {
    const bs = [...document.querySelectorAll('[data-testid=histogram-bin]')]
    return bs.length > 1 && bs.reduce((a, b) => a + +b.dataset.count, 0) === n
  }, want.count, { timeout: 10000 }).then(() => true, () => false)
  if (!drawn) await page.screenshot({ path: join(OUT, 'quality-histogram-failed.png') })
  check(drawn, `brightness bins count ${await counts()} files, want ${want.count} in more than one bin`)
  // A drag over the first bars writes bounds on quality.brightness into the query.
  const box = await byTest('histogram-bars').boundingBox()
  await page.mouse.move(box.x + 2, box.y + box.height / 2)
  await page.mouse.down()
  await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2)
  await page.mouse.up()
  await page.waitForFunction(() => /quality\.brightness >= [0-9.]+ AND quality\.brightness </.test(document.querySelector('[data-testid=query-input]')?.value))
  await page.screenshot({ path: join(OUT, 'quality-histogram.png') })
  console.log('quality checks passed')
} finally {
  await close()
}
