// Curating in the grid, driven in Debian's Chromium through playwright-core:
// query completion, label facets, the histogram's brush, selection and its
// actions. The Go test TestWebAppCurate (cmd/framelake) starts the server,
// fills the lake and runs this with:
//   BASE                      the server's URL
//   KEY, SECRET               a read key; WRITE_KEY, WRITE_SECRET a write key
//   EXPECT  JSON {count: files, small: files 32 px wide, labels: {label: files}, model: an auto tagging model}
//   OUT                       folder for screenshots
// It exits non-zero naming the first check that failed.
import { launch } from './chromium.mjs'
import { join } from 'node:path'

const { BASE, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { page, close } = await launch()
const shot = (name) => page.screenshot({ path: join(OUT, 'curate-' + name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id) => page.getByTestId(id)
const count = (n) => page.waitForFunction((n) => document.querySelector('[data-testid=item-count]')?.textContent === n.toLocaleString('en') + (n === 1 ? ' item' : ' items'), n)
const query = () => byTest('query-input').inputValue()
const facet = (field, value) => page.locator(`[data-testid=facet-value][data-field="${field}"][data-value="${value}"]`)
// api asks the server as the write key, to check what the page stored.
const api = async (path) => {
  const r = await fetch(BASE + '/api/v1' + path, { headers: { key: process.env.WRITE_KEY, secret: process.env.WRITE_SECRET } })
  check(r.ok, `GET ${path}: ${r.status}`)
  return r.json()
}
const namesOf = async (q) => (await api('/lake/items?' + new URLSearchParams({ query: q, pageSize: '1000' }))).items.map((i) => i.uniqueName).sort()
async function signIn(key, secret) {
  await page.goto(BASE + '/')
  await byTest('signin-key').fill(key)
  await byTest('signin-secret').fill(secret)
  await byTest('signin-submit').click()
  await count(want.count)
}

try {
  // A read key sees the sidebar's counts but no selection and none of its buttons.
  await signIn(process.env.KEY, process.env.SECRET)
  await facet('annotation.label', 'car').waitFor()
  check((await byTest('selection-bar').count()) === 0 && (await byTest('select-all').count()) === 0, 'a read key sees no selection bar')
  await byTest('grid-item').first().click({ modifiers: ['Control'] })
  await byTest('item-view').waitFor() // a ctrl-click only opens the item
  await page.getByText('Sign out').click()
  await signIn(process.env.WRITE_KEY, process.env.WRITE_SECRET)

  // Completion: a partial field, then a value of that field, each accepted from the keyboard.
  const input = byTest('query-input')
  await input.click()
  await input.pressSequentially('annotation.la')
  await page.locator('[data-testid=completion][data-value="annotation.label"]').waitFor()
  await shot('1-complete-field')
  await input.press('Tab')
  check((await query()) === 'annotation.label ', `Tab accepted the field: ${JSON.stringify(await query())}`)
  await input.pressSequentially('= p')
  await page.locator('[data-testid=completion][data-value="person"]').waitFor()
  check((await page.locator('[data-testid=completion][data-value="car"]').count()) === 0, 'values are those starting with p')
  await shot('2-complete-value')
  await input.press('Enter') // accepts the completion, does not run the query
  check((await query()) === 'annotation.label = person ', `Enter accepted the value: ${JSON.stringify(await query())}`)
  await input.press('Escape')
  await input.press('Enter')
  await count(want.labels.person)
  check(new URL(page.url()).searchParams.get('q') === 'annotation.label = person', 'the completed query ran')
  // A list made for other text takes no key: text replaced while a list is
  // open (a paste, a fast typist) runs as it reads when Enter comes before
  // the next list. Once, the list of the text before wrote a field over it.
  await input.fill('')
  await input.pressSequentially('annotation.la')
  await page.locator('[data-testid=completion][data-value="annotation.label"]').waitFor()
  await input.fill('annotation.label = car')
  await input.press('Enter')
  await count(want.labels.car)
  check((await query()) === 'annotation.label = car', `the replaced text ran as typed: ${JSON.stringify(await query())}`)

  // A label facet: its count, the query it writes, the grid's count; a second label makes an IN list.
  await page.goto(BASE + '/')
  await count(want.count)
  const car = facet('annotation.label', 'car')
  await page.waitForFunction((n) => document.querySelector('[data-testid=facet-value][data-field="annotation.label"][data-value=car] [data-testid=facet-count]')?.textContent === String(n), want.labels.car)
  await car.click()
  await count(want.labels.car)
  check((await query()) === 'annotation.label = car', `the facet wrote ${JSON.stringify(await query())}`)
  await page.waitForFunction(() => document.querySelector('[data-testid=facet-value][data-field="annotation.label"][data-value=car]')?.classList.contains('on'))
  await facet('annotation.label', 'person').click()
  await count(want.labels.car + want.labels.person - want.labels.both)
  check((await query()) === 'annotation.label IN (car, person)', `two labels: ${JSON.stringify(await query())}`)
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=grid-item] img')].every((i) => i.complete && i.naturalWidth > 0))
  await shot('3-label-facets')
  // Typing the query moves the sidebar too: it reads the query's text.
  await input.fill('annotation.label = person')
  await input.press('Escape')
  await input.press('Enter')
  await count(want.labels.person)
  await page.waitForFunction(() => document.querySelector('[data-testid=facet-value][data-field="annotation.label"][data-value=person]')?.classList.contains('on') &&
    !document.querySelector('[data-testid=facet-value][data-field="annotation.label"][data-value=car]')?.classList.contains('on'))

  // The histogram of widths: a drag across the narrow files' bars writes the bounds.
  await page.goto(BASE + '/')
  await count(want.count)
  await byTest('histogram-field').selectOption('width')
  const bars = byTest('histogram-bars')
  await page.locator('[data-testid=histogram-bin]').first().waitFor()
  await bars.scrollIntoViewIfNeeded()
  const bb = await bars.boundingBox()
  await page.mouse.move(bb.x + 1, bb.y + bb.height / 2)
  await page.mouse.down()
  await page.mouse.move(bb.x + bb.width * 0.1, bb.y + bb.height / 2, { steps: 4 })
  await page.mouse.up()
  await count(want.small)
  check(/^width >= 32 AND width < \d+$/.test(await query()), `the brush wrote ${JSON.stringify(await query())}`)
  await byTest('histogram-range').waitFor()
  await shot('4-histogram')
  await byTest('histogram-clear').click()
  await count(want.count)

  // The day pickers: a year typed digit by digit passes through valid days
  // (0002, 0020, 0200); the query is written once, on Enter or on leaving.
  // The keys make 2000-01-01 and 2099-01-01 whether the locale puts the
  // month or the day first.
  const from = byTest('date-from')
  await from.scrollIntoViewIfNeeded()
  await from.click({ position: { x: 8, y: 8 } })
  await page.keyboard.type('01012000', { delay: 30 })
  check(await from.inputValue() === '2000-01-01', `typed day: ${await from.inputValue()}`)
  check((await query()) === '', `typing wrote the query: ${JSON.stringify(await query())}`)
  await page.keyboard.press('Enter')
  await page.waitForFunction(() => document.querySelector('[data-testid=query-input]')?.value === 'createdAt >= 2000-01-01')
  const to = byTest('date-to')
  await to.click({ position: { x: 8, y: 8 } })
  await page.keyboard.type('01012099', { delay: 30 })
  check((await query()) === 'createdAt >= 2000-01-01', `typing the end wrote the query: ${JSON.stringify(await query())}`)
  await page.locator('.dates h4').click() // leaves the field
  await page.waitForFunction(() => document.querySelector('[data-testid=query-input]')?.value === 'createdAt >= 2000-01-01 AND createdAt <= 2099-01-01')
  await count(want.count)
  await shot('4b-dates')

  // Selection: ctrl-click one item, shift-click two further: three picked; tag them.
  await page.goto(BASE + '/?q=' + encodeURIComponent('width < 100'))
  await count(want.small)
  const item = (i) => page.locator(`[data-testid=grid-item][data-index="${i}"]`)
  await item(2).waitFor()
  const picked = [await item(0).getAttribute('data-unique-name'), await item(1).getAttribute('data-unique-name'),
    await item(2).getAttribute('data-unique-name')].sort()
  await item(0).click({ modifiers: ['Control'] })
  await item(2).click({ modifiers: ['Shift'] })
  await page.waitForFunction(() => document.querySelector('[data-testid=selection-count]')?.dataset.count === '3')
  check((await page.locator('[data-testid=grid-item][data-selected=true]').count()) === 3, 'three cells marked')
  await page.locator('[data-testid=selection-action][data-action=tag]').click()
  await byTest('selection-tags').fill('picked, keep')
  await byTest('selection-apply').click()
  await page.waitForFunction(() => /Tagged 3 files/.test(document.querySelector('[data-testid=selection-message]')?.textContent))
  check(JSON.stringify(await namesOf('Tags = picked AND Tags = keep')) === JSON.stringify(picked), 'the three picked files carry both tags')
  await page.waitForFunction(() => document.querySelector('[data-testid=facet-value][data-field=Tags][data-value=picked]')?.textContent.endsWith('3'))
  await shot('5-tagged')
  // A click once something is picked toggles instead of opening; Clear empties the selection.
  await item(1).click()
  await page.waitForFunction(() => document.querySelector('[data-testid=selection-count]')?.dataset.count === '2')
  await byTest('select-clear').click()

  // Select all matching sends the query: every car image goes to a collection, loaded or not.
  await page.goto(BASE + '/?q=' + encodeURIComponent('annotation.label = car'))
  await count(want.labels.car)
  // The boxes over the thumbnails: human and machine drawn apart, the label on hover, the slider hides doubtful machine boxes.
  const boxes = (source) => page.locator(`[data-testid=grid-item] [data-testid=item-box][data-source=${source}]`)
  await boxes('machine').first().waitFor()
  const look = (l) => l.first().evaluate((el) => { const s = getComputedStyle(el); return s.borderTopStyle + ' ' + s.borderTopColor })
  check(await look(boxes('human')) !== await look(boxes('machine')), 'human and machine boxes look different')
  const human = boxes('human').first()
  check(!(await human.locator('.box-label').isVisible()), 'a label is hidden until hovered')
  await human.hover()
  check(await human.locator('.box-label').isVisible(), 'hovering a box shows its label')
  const machines = await boxes('machine').count()
  await byTest('confidence-slider').fill('0.5')
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=grid-item] [data-testid=item-box][data-source=machine]').length === n / 2, machines)
  check((await page.locator('[data-testid=grid-item] [data-testid=item-box][data-label=bike]').count()) === 0, 'the doubtful bike boxes are hidden')
  await byTest('confidence-slider').fill('0')
  await byTest('select-all').click()
  await page.waitForFunction((n) => document.querySelector('[data-testid=selection-count]')?.dataset.count === String(n), want.labels.car)
  check((await page.locator('[data-testid=grid-item][data-selected=false]').count()) === 0, 'every cell marked')
  await page.locator('[data-testid=selection-action][data-action=collect]').click()
  await byTest('selection-collection').fill('cars')
  await byTest('selection-apply').click()
  await page.waitForFunction((n) => document.querySelector('[data-testid=selection-message]')?.textContent === `Added ${n} files to cars`, want.labels.car)
  check(JSON.stringify(await namesOf('collection = cars')) === JSON.stringify(await namesOf('annotation.label = car')), 'the collection holds the car images')
  await facet('collection', 'cars').waitFor()
  await shot('6-collected')

  // A model run as a job from the selection, seen on the jobs page.
  await page.locator('[data-testid=selection-action][data-action=model]').click()
  await byTest('selection-app').selectOption('auto_tagging')
  await page.locator(`[data-testid=selection-model] option[value="${want.model}"]`).waitFor({ state: 'attached' })
  await byTest('selection-model').selectOption(want.model)
  await shot('7-model-form')
  await byTest('selection-apply').click()
  const link = byTest('selection-job')
  await link.waitFor()
  const jobId = (await link.getAttribute('href')).split('/').pop()
  await link.click()
  await page.locator(`[data-testid=job-row][data-job-id="${jobId}"][data-status=completed]`).waitFor({ timeout: 60000 })
  await page.goto(BASE + '/jobs')
  await page.locator(`[data-testid=job-row][data-job-id="${jobId}"]`).waitFor()
  await shot('8-jobs')
  const runs = await api('/runs?modelName=' + want.model)
  const run = Object.values(runs).find(Array.isArray).find((r) => r.jobId === jobId)
  check(run?.params.query === 'annotation.label = car' && run.counts.items === want.labels.car,
    `the run tagged the grid's query: ${JSON.stringify(run)}`)
  // A dataset of the selection: its labels offered from the selection's boxes.
  await page.goto(BASE + '/?q=' + encodeURIComponent('annotation.label = car'))
  await count(want.labels.car)
  await byTest('select-all').click()
  await page.locator('[data-testid=selection-action][data-action=dataset]').click()
  await page.waitForFunction(() => document.querySelector('[data-testid=selection-dataset-labels]')?.value.split(', ').includes('car'))
  await byTest('selection-dataset-name').fill('car-set')
  // The split set first is kept while the labels are typed (each keystroke renders the form).
  await page.locator('.selection-form [name=train]').fill('60')
  await page.locator('.selection-form [name=test]').fill('30')
  await byTest('selection-dataset-labels').fill('')
  await byTest('selection-dataset-labels').pressSequentially('car, person')
  await shot('9-dataset-form')
  await byTest('selection-apply').click()
  const dsLink = byTest('selection-dataset')
  await dsLink.waitFor()
  const datasetId = (await dsLink.getAttribute('href')).split('/').pop()
  check((await api('/datasets')).some((g) => g.id === datasetId && g.name === 'car-set'), `dataset ${datasetId} is listed`)
  const built = JSON.stringify(await api('/datasets/' + datasetId))
  check(built.includes('"splitInfo":{"train":60,"test":30,"validation":10}'), `the split typed is the dataset's: ${built.slice(0, 600)}`)
  await dsLink.click()
  await page.locator('[data-testid=dataset-version]').first().waitFor()
  console.log('curate checks passed; screenshots in ' + OUT)
} catch (e) {
  await shot('failure').catch(() => {})
  console.error(e.message)
  process.exitCode = 1
} finally {
  await close()
}
