// Drives the web app in Debian's Chromium through playwright-core, against a
// running framelake. The Go test TestWebAppInBrowser (cmd/framelake) starts
// the server, fills the lake and runs this with:
//   BASE      the server's URL
//   KEY, SECRET  a read key; WRITE_KEY, WRITE_SECRET a write key
//   UPLOAD_JPEG  an image file to upload
//   EXPECT    JSON {count, uniqueName, box: {label, x, y, width, height}, width, height, datasetId,
//             similar: the uniqueNames nearest to uniqueName, in order}
//   OUT       folder for screenshots
// It exits non-zero naming the first check that failed.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { page, close } = await launch()
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id) => page.getByTestId(id)

try {
  // A deep link opens sign-in first, and only sign-in.
  await page.goto(`${BASE}/items/${encodeURIComponent(want.uniqueName)}`)
  await byTest('signin-key').waitFor()
  check((await byTest('grid-item').count()) === 0 && (await byTest('item-view').count()) === 0, 'nothing but sign-in without a key')
  await byTest('signin-key').fill(KEY)
  await byTest('signin-secret').fill('wrong-secret')
  await byTest('signin-submit').click()
  const bad = await byTest('signin-error').textContent()
  check(/secret|key/i.test(bad), `sign-in error shows the server's message, got ${JSON.stringify(bad)}`)
  await shot('1-signin-error')

  // Signing in opens the deep link: the item view with its box where the annotation says.
  await byTest('signin-secret').fill(SECRET)
  await byTest('signin-submit').click()
  await byTest('item-view').waitFor()
  const img = byTest('item-image')
  await img.evaluate((el) => el.decode())
  const box = page.locator(`[data-testid=item-box][data-label="${want.box.label}"][data-source=human]`)
  // The box sits where the annotation says on the image as shown, and stays there when zoomed.
  const boxOnImage = async (when) => {
    const ib = await img.boundingBox()
    const bb = await box.boundingBox()
    const k = ib.width / want.width
    const exp = { x: ib.x + want.box.x * k, y: ib.y + want.box.y * k, w: want.box.width * k, h: want.box.height * k }
    const off = Math.max(Math.abs(bb.x - exp.x), Math.abs(bb.y - exp.y), Math.abs(bb.width - exp.w), Math.abs(bb.height - exp.h))
    check(off <= 1.5 * Math.max(1, k), `${when}: box at ${JSON.stringify(bb)}, annotation says ${JSON.stringify(exp)} (off by ${off.toFixed(2)} px)`)
    check(Math.abs(ib.height / ib.width - want.height / want.width) < 0.01, `${when}: image keeps its aspect ratio`)
    return ib
  }
  const before = await boxOnImage('item view')
  await shot('2-item-view')
  await page.keyboard.press('+')
  await page.keyboard.press('+')
  await page.waitForFunction((w) => document.querySelector('[data-testid=item-image]').getBoundingClientRect().width > w * 1.5, before.width)
  await boxOnImage('zoomed')
  await shot('2b-item-zoomed')
  await page.keyboard.press('0')

  // Esc returns to the grid: every item counted, only the rows in view in the DOM.
  const allThumbs = () => page.waitForFunction(() => {
    const imgs = [...document.querySelectorAll('[data-testid=grid-item] img')]
    return imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth > 0)
  })
  // A 20,000 px cap on the grid's height (10M by default) makes these 2,003 files take the
  // proportional scrolling that a million files need.
  await page.evaluate(() => sessionStorage.setItem('framelake.maxScroll', '20000'))
  let t0 = Date.now()
  await page.keyboard.press('Escape')
  await allThumbs()
  const firstGrid = Date.now() - t0
  await byTest('grid-item').first().waitFor()
  const total = want.count.toLocaleString('en')
  await page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === n + ' items', total)
  check(await page.evaluate(() => document.querySelector('.spacer').offsetHeight === 20000), 'the grid scrolls proportionally past its cap')
  check((await byTest('upload-button').count()) === 0, 'a read key sees no upload button')
  const inDom = await byTest('grid-item').count()
  check(inDom > 0 && inDom < 200, `the grid keeps only visible rows in the DOM, has ${inDom} of ${want.count}`)
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=grid-item] img')].every((i) => i.complete && i.naturalWidth > 0))
  await shot('3-grid')

  // Go to item N fetches the page holding N and nothing in between.
  const pages = []
  page.on('request', (r) => r.url().includes('/api/v1/lake/items') && pages.push(new URL(r.url()).searchParams.get('pageIndex')))
  const n = want.count - 10
  await byTest('goto-input').fill(String(n))
  t0 = Date.now()
  await byTest('goto-input').press('Enter')
  const target = page.locator(`[data-testid=grid-item][data-index="${n - 1}"]`)
  await target.waitFor()
  await allThumbs()
  const jumped = Date.now() - t0
  // The page holding N, and the next one only when the rows in view reach into it.
  const holding = Math.floor((n - 1) / 250)
  check(pages.includes(String(holding)) && pages.every((p) => +p === holding || +p === holding + 1) && pages.length <= 2,
    `go to ${n} fetched pages ${JSON.stringify(pages)}, want ${holding} (and ${holding + 1} at most)`)
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=grid-item] img')].every((i) => i.complete && i.naturalWidth > 0))
  // The oldest files, last in the default order, are the labelled ones.
  check((await page.locator('[data-testid=grid-item] [data-testid=item-box][data-source=human]').count()) >= 2, 'boxes drawn on thumbnails')
  // Machine boxes look different from human ones, and the confidence slider hides the doubtful.
  const machine = page.locator('[data-testid=grid-item] [data-testid=item-box][data-source=machine]')
  const styleOf = (l) => l.first().evaluate((el) => { const s = getComputedStyle(el); return s.borderTopStyle + ' ' + s.borderTopColor })
  const [human, mach] = [await styleOf(page.locator('[data-testid=grid-item] [data-testid=item-box][data-source=human]')), await styleOf(machine)]
  check(human !== mach, `human (${human}) and machine (${mach}) boxes look different`)
  const allMachine = await machine.count()
  await shot('4-goto')
  await byTest('confidence-slider').fill('0.5')
  const sure = await machine.count()
  check(allMachine >= 6 && sure === allMachine / 2 && (await page.locator('[data-testid=item-box][data-label=bike]').count()) === 0,
    `confidence 0.5 leaves ${sure} of ${allMachine} machine boxes`)
  await byTest('confidence-slider').fill('0')

  // The item view steps with the arrows through the grid's order; Esc returns to the same place.
  const next = await page.locator(`[data-testid=grid-item][data-index="${n}"]`).getAttribute('data-unique-name')
  await target.click()
  await byTest('item-view').waitFor()
  await page.keyboard.press('ArrowRight')
  await page.waitForURL((u) => u.pathname === '/items/' + encodeURIComponent(next))
  await page.locator(`[data-testid=item-view][data-unique-name="${next}"]`).waitFor()
  await page.keyboard.press('Escape')
  await page.locator(`[data-testid=grid-item][data-index="${n}"]`).waitFor()

  // The grid is driven by keys too: the cursor is on the item last viewed; arrows move it, Enter opens.
  const focused = (i) => page.waitForFunction((i) => document.activeElement?.dataset.index === String(i), i)
  await focused(n)
  await page.keyboard.press('ArrowLeft')
  await page.keyboard.press('ArrowLeft')
  await focused(n - 2)
  const picked = await page.evaluate(() => document.activeElement.dataset.uniqueName)
  await page.keyboard.press('Enter')
  await page.waitForURL((u) => u.pathname === '/items/' + encodeURIComponent(picked))
  await page.locator(`[data-testid=item-view][data-unique-name="${picked}"]`).waitFor()
  await page.keyboard.press('Escape')
  await focused(n - 2)

  // The sidebar counts by annotation source; a click writes the query and narrows the grid, a second undoes it.
  const facet = (field, value) => page.locator(`[data-testid=facet-value][data-field="${field}"][data-value="${value}"]`)
  await page.waitForFunction(() => document.querySelector('[data-testid=facet-value][data-value=raw]')?.textContent.includes('2,000'))
  check(/^human\s*2$/.test(await facet('annotation.source', 'human').textContent()), 'two files have human boxes')
  await facet('annotation.source', 'human').click()
  await page.waitForFunction(() => document.querySelector('[data-testid=item-count]')?.textContent === '2 items')
  check((await byTest('query-input').inputValue()) === 'annotation.source = human', 'the facet wrote the query')
  await allThumbs()
  await shot('4b-facet')
  await facet('annotation.source', 'human').click()
  await page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === n + ' items', total)
  check((await byTest('query-input').inputValue()) === '', 'a second click took the clause out')

  // A bad query shows the parser's error at its line:column under the text.
  await byTest('query-input').fill('width > 10 and\n  annotation.label = ')
  await byTest('query-input').press('Enter')
  const err = await byTest('query-error').textContent()
  check(/query 2:21: /.test(err), `query error placed at 2:21, got ${JSON.stringify(err)}`)
  check(new URL(page.url()).searchParams.get('q') === 'width > 10 and\n  annotation.label =', 'the query is in the address')
  await shot('5-query-error')

  // A good query narrows the grid and its count.
  await byTest('query-input').fill(`annotation.label = "${want.box.label}"`)
  await byTest('query-input').press('Enter')
  await page.waitForFunction(() => document.querySelector('[data-testid=item-count]')?.textContent.startsWith('1 item'))
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=grid-item]').length === 1)
  check((await byTest('grid-item').getAttribute('data-unique-name')) === want.uniqueName, 'the query leaves the car')
  await shot('6-query')
  // Find similar from an item: the grid of its neighbours (itself left out) by the embedding model, nearest first.
  await page.goto(`${BASE}/items/${encodeURIComponent(want.uniqueName)}`)
  await byTest('similar-button').click()
  await page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === `${n} items`, want.similar.length)
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=grid-item]').length === n, want.similar.length)
  const order = await byTest('grid-item').evaluateAll((els) => els.map((e) => e.dataset.uniqueName))
  check(JSON.stringify(order) === JSON.stringify(want.similar), `similar in order ${JSON.stringify(order)}, want ${JSON.stringify(want.similar)}`)
  check(new URL(page.url()).searchParams.get('similar') === want.uniqueName, 'the similarity search is in the address')
  await allThumbs()
  await shot('6a-similar')

  // Videos are listed by type, with a poster frame for a thumbnail.
  await page.goto(`${BASE}/`)
  await byTest('type-select').selectOption('video')
  await page.waitForFunction(() => document.querySelector('[data-testid=item-count]')?.textContent === '1 item')
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=grid-item]').length === 1)
  await allThumbs()
  check(new URL(page.url()).searchParams.get('type') === 'video', 'the type is in the address')
  await shot('6b-videos')

  // The jobs page shows the dataset job finish; a read key gets no cancel button.
  await page.goto(`${BASE}/jobs`)
  await page.locator('[data-testid=job-row][data-status=completed]').first().waitFor({ timeout: 30000 })
  check((await byTest('job-cancel').count()) === 0, 'a read key sees no cancel button')
  await shot('7-jobs')
  const jobId = await byTest('job-row').first().getAttribute('data-job-id')
  await page.locator(`[data-testid=job-row] a`).first().click()
  await page.waitForURL((u) => u.pathname === '/jobs/' + jobId)
  await page.locator(`[data-testid=job-row][data-job-id="${jobId}"][data-status=completed]`).waitFor()
  // The dataset page shows the built version's statistics and downloads a format.
  await page.goto(`${BASE}/datasets/${want.datasetId}`)
  await page.locator('[data-testid=dataset-version][data-status=ready]').waitFor({ timeout: 30000 })
  const [dl] = await Promise.all([page.waitForEvent('download'), byTest('dataset-download').first().click()])
  check((await dl.suggestedFilename()).endsWith('.zip'), `dataset download named ${await dl.suggestedFilename()}`)
  await shot('8-dataset')
  // A write key uploads: progress per file, a refused file listed with its reason, the count updated.
  await page.getByText('Sign out').click()
  await byTest('signin-key').fill(process.env.WRITE_KEY)
  await byTest('signin-secret').fill(process.env.WRITE_SECRET)
  await byTest('signin-submit').click()
  // The key is kept once the server has accepted it: leave the page only then.
  await page.getByText('Sign out').waitFor()
  await page.goto(`${BASE}/`)
  await page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === n + ' items', total)
  await byTest('upload-button').click()
  await byTest('upload-collection').fill('dropped')
  await byTest('upload-input').setInputFiles([
    { name: 'fresh.jpg', mimeType: 'image/jpeg', buffer: readFileSync(process.env.UPLOAD_JPEG) },
    { name: 'notes.jpg', mimeType: 'image/jpeg', buffer: Buffer.from('not an image at all') },
  ])
  await page.locator('[data-testid=upload-row][data-name="fresh.jpg"][data-state=stored]').waitFor()
  const refused = page.locator('[data-testid=upload-row][data-name="notes.jpg"][data-state=rejected]')
  await refused.waitFor()
  check((await refused.textContent()).includes('notes.jpg'), `the refused file's reason is shown: ${await refused.textContent()}`)
  const more = (want.count + 1).toLocaleString('en')
  await page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === n + ' items', more)
  await page.waitForFunction(() => document.querySelector('[data-testid=facet-value][data-value=image]')?.textContent.includes('2,004'))
  await shot('9-upload')
  console.log(`figures (${want.count} files, cold thumbnails): grid with thumbnails ${firstGrid} ms after Esc; go to item ${n} ${jumped} ms`)
  console.log('browser checks passed; screenshots in ' + OUT)
} catch (e) {
  await shot('failure').catch(() => {})
  console.error(e.message)
  process.exitCode = 1
} finally {
  await close()
}
