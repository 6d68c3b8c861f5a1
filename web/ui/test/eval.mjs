// The evaluation pages and Label next, driven in Debian's Chromium through
// playwright-core. The Go test TestWebAppEval (cmd/framelake) starts the
// server, fills the lake and runs this with:
//   BASE          the server's URL
//   KEY, SECRET   a write key
//   EXPECT        JSON {run: the model run's id, images: files in the lake, bikeFP: files with a spurious bike}
//   OUT           folder for screenshots
// It exits non-zero naming the first check that failed.
import { launch } from './chromium.mjs'
import { join } from 'node:path'

const { BASE, OUT, KEY, SECRET } = process.env
const want = JSON.parse(process.env.EXPECT)
const { page, close } = await launch()
const shot = (name) => page.screenshot({ path: join(OUT, 'eval-' + name + '.png'), fullPage: true })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id) => page.getByTestId(id)
const count = (n) => page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === n.toLocaleString('en') + (n === 1 ? ' item' : ' items'), n)
const call = async (name, params) => {
  const r = await fetch(BASE + '/api/v1/client/' + name, { method: 'POST', headers: { key: KEY, secret: SECRET, 'content-type': 'application/json' }, body: JSON.stringify(params) })
  check(r.ok, `${name}: ${r.status}`)
  return r.json()
}
const fig = (v) => (v < 0 ? '–' : v.toFixed(3))

try {
  await page.goto(BASE + '/')
  await byTest('signin-key').fill(KEY)
  await byTest('signin-secret').fill(SECRET)
  await byTest('signin-submit').click()
  await count(want.images)

  // Run an evaluation from the form; its job row shows it to completion.
  await page.getByRole('link', { name: 'Evaluations' }).click()
  await byTest('eval-form').waitFor()
  await page.locator(`[data-testid=eval-run] option[value="${want.run}"]`).waitFor({ state: 'attached' })
  await byTest('eval-run').selectOption(want.run)
  await byTest('eval-key').fill('fixed-1')
  await shot('1-form')
  await byTest('eval-start').click()
  await page.locator('[data-testid=job-row][data-status=completed]').waitFor({ timeout: 60000 })
  await page.locator('[data-testid=eval-row][data-key=fixed-1][data-status=completed]').waitFor()
  await shot('2-done')
  await byTest('eval-open').click()

  // The figures are the server's; the confusion matrix has its background row and column.
  const ev = await call('get_evaluation', { key: 'fixed-1' })
  await byTest('eval-map').waitFor()
  const shown = await byTest('eval-map').locator('b').textContent()
  check(shown === fig(ev.mAP) && ev.mAP > 0, `mAP shown ${shown}, server ${ev.mAP}`)
  check(JSON.stringify(ev.confusion.labels) === '["bike","car","truck","background"]', 'confusion labels ' + ev.confusion.labels)
  const cell = (row, col) => page.locator(`[data-testid=confusion-cell][data-row="${row}"][data-col="${col}"]`)
  for (const [row, col, n] of [['truck', 'truck', 2], ['car', 'truck', 1], ['truck', 'background', 1], ['background', 'bike', 3], ['bike', 'bike', 1]]) {
    const got = await cell(row, col).getAttribute('data-count')
    check(+got === n, `confusion ${row} → ${col}: ${got}, want ${n}`)
  }
  check(/more files than\s+the cell counts/.test(await byTest('confusion-note').textContent()), 'the page says a cell opens files, maybe more than it counts')
  check(await byTest('pr-curve').count() === 3, 'a PR curve per label')
  check(+(await page.locator('[data-testid=pr-curve][data-label=truck]').getAttribute('data-points')) > 0, 'the truck curve has points')
  const bikeRow = page.locator('[data-testid=eval-label-row][data-label=bike]')
  check(await bikeRow.getByTestId('eval-fp').textContent() === String(ev.labels.bike.fp), 'bike fp in the table')
  await shot('3-evaluation')
  await byTest('confusion-note').scrollIntoViewIfNeeded()
  await shot('3b-confusion')

  // A false-positive cell opens the grid on the files with a spurious bike.
  await cell('background', 'bike').locator('button').click()
  await count(want.bikeFP)
  const q = await byTest('query-input').inputValue()
  check(q.startsWith('eval.fixed-1.fp > 0 AND annotation(label = "bike"'), 'grid query ' + q)
  await shot('4-grid-fp')
  await page.goBack()
  await byTest('eval-map').waitFor()
  await bikeRow.getByTestId('eval-fp').click()
  await count(want.bikeFP)

  // A stricter second evaluation, compared with the first.
  const second = await call('evaluate_detections', { pred_run_id: want.run, key: 'fixed-strict', iou: 0.95, query: 'name != ev-0.jpg' })
  for (let i = 0; ; i++) {
    const r = await fetch(BASE + '/api/v1/jobs/' + second.jobId, { headers: { key: KEY, secret: SECRET } }).then((r) => r.json())
    if (r.status === 'completed') break
    check(i < 120 && r.status !== 'failed', 'second evaluation: ' + r.status)
    await new Promise((ok) => setTimeout(ok, 500))
  }
  await page.getByRole('link', { name: 'Evaluations' }).click()
  await page.locator('[data-testid=eval-row][data-key=fixed-strict] [data-testid=eval-pick]').check()
  await page.locator('[data-testid=eval-row][data-key=fixed-1] [data-testid=eval-pick]').check()
  await byTest('eval-compare').click()
  await page.locator('[data-testid=compare-row][data-label=bike]').waitFor()
  const cmp = await call('compare_evaluations', { key_a: 'fixed-strict', key_b: 'fixed-1' })
  for (const l of cmp.labels) {
    const better = await page.locator(`[data-testid=compare-row][data-label="${l.label}"]`).getAttribute('data-better')
    check(better === l.better, `compare ${l.label}: ${better}, server ${l.better}`)
  }
  await shot('5-compare')

  // Label next: the two least sure files, tagged, open in the grid.
  await page.getByRole('link', { name: 'Label next' }).click()
  await page.locator(`[data-testid=select-run] option[value="${want.run}"]`).waitFor({ state: 'attached' })
  await byTest('select-budget').fill('2')
  await byTest('select-tag').fill('label-me')
  await byTest('select-start').click()
  await page.locator('[data-testid=select-result][data-count="2"]').waitFor({ timeout: 60000 })
  await shot('6-label-next')
  await byTest('select-open').click()
  await count(2)
  check(await byTest('query-input').inputValue() === 'tags = "label-me"', 'the tagged grid')
  await shot('7-grid-tagged')
  console.log('eval pages: all checks passed')
} catch (e) {
  await shot('failed').catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await close()
}
