// What a person sees, page by page (issue 31 items 4, 5, 6, 13, 23, 25, 26), in
// Debian's Chromium through playwright-core. TestWebAppPolish (cmd/framelake)
// sets up the lake and runs this with:
//   BASE                    the server's URL
//   KEY, SECRET             a write key; READ_KEY, READ_SECRET a read key
//   EXPECT                  JSON: crowded (a 500 x 375 image with crowded boxes),
//                           names, taskId, same {voc, coco} (two files named alike),
//                           shapes (a file with a class and a polygon),
//                           datasetId, leakage, failedJob, longModel
// The map's checks are mapfit.mjs.
//   OUT                     folder for screenshots
// It exits non-zero naming the first check that failed.
import { launch } from './chromium.mjs'
import { join } from 'node:path'
import { progressOf } from '../src/progress.js'

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

async function signIn(key, secret) {
  await page.goto(BASE + '/')
  await page.evaluate(() => sessionStorage.clear())
  await page.goto(BASE + '/')
  await byTest('signin-key').fill(key)
  await byTest('signin-secret').fill(secret)
  await byTest('signin-submit').click()
  await byTest('item-count').waitFor()
}
const rest = (path, opts = {}) => page.evaluate(async ([path, opts]) => {
  const r = await fetch('/api/v1' + path, { ...opts, headers: { key: sessionStorage.getItem('framelake.key'), secret: sessionStorage.getItem('framelake.secret'), ...(opts.headers ?? {}) } })
  return r.json()
}, [path, opts])

// labelsApart checks that the labels shown over a picture do not overlap and
// that a hidden one shows when its box is hovered. sel picks the labels.
async function labelsApart(what) {
  const rects = await page.$$eval('[data-testid=box-label]', (ls) => ls.map((l) => {
    const r = l.getBoundingClientRect()
    return { place: l.dataset.place, shown: getComputedStyle(l).display !== 'none', x: r.x, y: r.y, w: r.width, h: r.height, text: l.textContent }
  }))
  const shown = rects.filter((r) => r.shown)
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const a = shown[i], b = shown[j]
      const apart = a.x + a.w <= b.x + 0.5 || b.x + b.w <= a.x + 0.5 || a.y + a.h <= b.y + 0.5 || b.y + b.h <= a.y + 0.5
      check(apart, `${what}: labels ${a.text} and ${b.text} overlap: ${JSON.stringify([a, b])}`)
    }
  }
  const hidden = rects.filter((r) => !r.shown)
  check(shown.length >= 3, `${what}: at least 3 labels shown, got ${shown.length}`)
  check(hidden.length >= 1, `${what}: crowded labels are hidden, got ${JSON.stringify(rects.map((r) => r.place))}`)
  return hidden.length
}

// fitted checks that an image is drawn as large as its pane allows.
async function fitted(imgSel, paneSel, w, h, what) {
  await page.waitForFunction(([imgSel, w]) => { const i = document.querySelector(imgSel); return i && i.complete && i.getBoundingClientRect().width > w }, [imgSel, w], { timeout: 60000 })
    .catch(() => {})
  const g = await page.evaluate(([imgSel, paneSel]) => {
    const i = document.querySelector(imgSel).getBoundingClientRect()
    const p = document.querySelector(paneSel)
    const cs = getComputedStyle(p)
    return { iw: i.width, ih: i.height, pw: p.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight), ph: p.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) }
  }, [imgSel, paneSel])
  const k = Math.min(g.pw / w, g.ph / h)
  check(k > 1.2, `${what}: the pane (${g.pw} x ${g.ph}) is larger than the image`)
  check(Math.abs(g.iw - w * k) <= 2 && Math.abs(g.ih - h * k) <= 2, `${what}: image drawn ${g.iw} x ${g.ih}, want ${w * k} x ${h * k} (fitted to ${g.pw} x ${g.ph})`)
}

// Item 6: what a job's progress reads, for counters as servers have sent them.
for (const [job, pct, count] of [
  [{ status: 'completed', progress: 100, done: 5, total: 6 }, 100, '5 done'], // a count that stopped short
  [{ status: 'completed', progress: 100, done: 4, total: 4 }, 100, '4/4'],
  [{ status: 'running', progress: 100, done: 5, total: 6 }, 83, '5/6'], // never 100% before done
  [{ status: 'running', progress: 40, done: 6, total: 6 }, 100, '6/6'],
  [{ status: 'failed', progress: 50, done: 1, total: 2 }, 50, '1/2'],
  [{ status: 'running', progress: 100, done: 0, total: 0 }, 99, ''],
]) {
  const p = progressOf(job)
  check(p.pct === pct && p.count === count, `progress of ${JSON.stringify(job)}: ${JSON.stringify(p)}, want ${pct}% ${JSON.stringify(count)}`)
}

// Each section checks one finding; one that fails is named, shot and the next runs, so a run
// lists everything that is wrong (the previous bundle, UI_DIST, fails each of them).
const failed = []
async function section(name, run) {
  try {
    await run()
  } catch (e) {
    failed.push(`${name}: ${e.message.split('\n')[0]}`)
    console.log(`FAILED ${name}: ${e.message}`)
    await shot('failed-' + failed.length).catch(() => {})
  }
}
// Waits are for a state, never for a time: the timeout only catches a hang, as make test runs this
// beside seven other streams on two cores.
page.setDefaultTimeout(60000)

try {
  await signIn(process.env.KEY, process.env.SECRET)

  await section('Item 23: the item view fits a 500 x 375 image to its pane; labels do not overlap.', async () => {
    await page.goto(`${BASE}/items/${encodeURIComponent(want.crowded)}`)
    await byTest('item-image').waitFor()
    await fitted('[data-testid=item-image]', '.stage', 500, 375, 'item view')
    await labelsApart('item view')
    await shot('01-item-fitted')
    // Hover a box whose label is hidden, at a point where it is the box on top.
    const spot = await page.evaluate(() => {
      for (const b of document.querySelectorAll('[data-testid=item-box]')) {
        if (b.querySelector('[data-place=hidden]') == null) continue
        const r = b.getBoundingClientRect()
        for (let y = r.top + 1; y < r.bottom; y += 3) for (let x = r.left + 1; x < r.right; x += 3) {
          if (document.elementFromPoint(x, y) === b) return { x, y, label: b.dataset.label }
        }
      }
      return null
    })
    check(spot, 'a box with a hidden label can be hovered somewhere')
    await page.mouse.move(spot.x, spot.y)
    await page.waitForFunction(({ x, y }) => {
      const l = document.elementFromPoint(x, y)?.closest('[data-testid=item-box]')?.querySelector('[data-testid=box-label]')
      return l && getComputedStyle(l).display !== 'none'
    }, spot).catch(() => {})
    const hoverShown = await page.evaluate(({ x, y }) => {
      const b = document.elementFromPoint(x, y).closest('[data-testid=item-box]')
      const l = b.querySelector('[data-testid=box-label]')
      return l.dataset.place === 'hidden' && getComputedStyle(l).display !== 'none'
    }, spot)
    check(hoverShown, 'a hidden label shows while its box is hovered')
    await shot('02-item-hover')
    // Zoom stays where the user sets it: a wheel zoom is a transform over the fit.
    await page.mouse.move(10, 10)
    await page.keyboard.press('+')
    await page.waitForFunction(() => /scale\(1\.25\)/.test(document.querySelector('.stage .frame')?.style.transform)).catch(() => {})
    const zoomed = await page.$eval('.stage .frame', (f) => f.style.transform)
    check(/scale\(1\.25\)/.test(zoomed), `+ zooms over the fit: ${zoomed}`)
  })

  await section('Item 23: the workspace too.', async () => {
    await page.goto(`${BASE}/tasks/${want.taskId}?frame=0`)
    await page.locator('[data-testid=frame-canvas][data-ready="1"]').waitFor()
    await fitted('[data-testid=frame-image]', '.ws-stage', 500, 375, 'workspace')
    await labelsApart('workspace')
    const hints = await byTest('ws-hints').textContent()
    check(/drag on the image to draw/.test(hints), 'a write key sees the drawing hints')
    await shot('03-workspace-fitted')
  })

  await section('Issue 32: a class is a chip, not a frame-sized box; a polygon is drawn as its box.', async () => {
    await page.goto(`${BASE}/items/${encodeURIComponent(want.shapes)}`)
    await byTest('item-image').waitFor()
    await byTest('item-classes').waitFor()
    const drawn = await page.evaluate(() => ({
      chips: [...document.querySelectorAll('[data-testid=item-classes] .class-chip')].map((c) => c.textContent),
      boxes: [...document.querySelectorAll('[data-testid=item-box]')].map((b) => b.dataset.label),
    }))
    check(drawn.chips.join() === 'night', `class chips: ${drawn.chips}`)
    check(drawn.boxes.join() === 'kite', `boxes drawn: ${drawn.boxes} (the class is no box)`)
    await shot('03b-class-chip')
  })

  await section('Item 26: model dropdowns are as wide as their longest name.', async () => {
    await page.goto(BASE + '/')
    await byTest('grid-item').first().waitFor()
    await byTest('grid-item').first().click({ modifiers: ['Control'] })
    await page.locator('[data-testid=selection-action][data-action=model]').click()
    await page.locator('[data-testid=selection-model] option', { hasText: want.longModel }).waitFor({ state: 'attached' })
    const cut = await page.$eval('[data-testid=selection-model]', (s) => {
      const c = document.createElement('canvas').getContext('2d')
      c.font = getComputedStyle(s).font
      const widest = Math.max(...[...s.options].map((o) => c.measureText(o.text).width))
      return { widest, box: s.clientWidth, texts: [...s.options].map((o) => o.text) }
    })
    check(cut.widest + 16 <= cut.box, `the model dropdown (${cut.box} px) fits its longest name (${cut.widest} px): ${cut.texts}`)
    await shot('04-model-dropdown')
    await page.keyboard.press('Escape')
  })

  await section('Item 26: two files named alike tell apart by their collections.', async () => {
    await page.goto(BASE + '/?q=' + encodeURIComponent('name = "2011_000025.jpg"'))
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=cell-name][data-collections]').length === 2, null, { timeout: 60000 })
      .catch(() => {})
    const caps = await byTest('cell-name').evaluateAll((els) => els.map((e) => ({ text: e.textContent, title: e.title, cols: e.dataset.collections })))
    check(caps.length === 2 && caps[0].text !== caps[1].text, `the captions differ: ${JSON.stringify(caps)}`)
    check(caps.some((c) => /voc/.test(c.text) && /in voc/.test(c.title)) && caps.some((c) => /coco/.test(c.text) && /in coco/.test(c.title)),
      `the captions and their hover name the collections: ${JSON.stringify(caps)}`)
    await shot('05-same-names')
  })

  await section('Item 4: the sidebar says which clause its label counts ignore.', async () => {
    await page.goto(BASE + '/?q=' + encodeURIComponent('annotation.label IN (car, person)'))
    const note = page.locator('[data-testid=facet-note][data-field="annotation.label"]')
    await note.waitFor({ timeout: 60000 })
    check(/annotation\.label IN \(car, person\)/.test(await note.textContent()), `the label section's note: ${await note.textContent()}`)
    await shot('06-facet-note')
  })

  await section('Item 25: a parse error keeps the last counts, greyed, with the error shown.', async () => {
    await page.goto(BASE + '/?q=' + encodeURIComponent('annotation.label = car'))
    await page.waitForFunction(() => /^\d+ item/.test(document.querySelector('[data-testid=item-count]')?.textContent))
    await page.locator('[data-testid=facet-value]').first().waitFor()
    const before = { count: await byTest('item-count').textContent(), facets: await byTest('facet-value').count(), width: (await byTest('facets').boundingBox()).width,
      top: (await byTest('facets').boundingBox()).y }
    await byTest('query-input').fill('annotation.label = car AND (')
    await byTest('query-input').press('Enter')
    await byTest('query-error').waitFor()
    await page.waitForFunction(() => document.querySelector('[data-testid=item-count]')?.dataset.stale === 'true' &&
      document.querySelector('[data-testid=facets]')?.dataset.stale === 'true').catch(() => {})
    const after = { count: await byTest('item-count').textContent(), stale: await byTest('item-count').getAttribute('data-stale'),
      facets: await byTest('facet-value').count(), facetsStale: await byTest('facets').getAttribute('data-stale'), width: (await byTest('facets').boundingBox()).width,
      top: (await byTest('facets').boundingBox()).y }
    check(after.top === before.top, `the layout does not move under the error: ${JSON.stringify([before, after])}`)
    check(after.count === before.count && after.stale === 'true', `the count stays, greyed: ${JSON.stringify([before, after])}`)
    check(after.facets === before.facets && after.facetsStale === 'true' && after.width === before.width, `the sidebar stays, greyed: ${JSON.stringify([before, after])}`)
    await shot('07-query-error')
  })

  await section('Item 26: review crops show label and confidence; bulk relabel and reject.', async () => {
    await page.goto(BASE + '/review?label=truck')
    await byTest('patch').first().waitFor()
    const cap = await byTest('patch-caption').first().textContent()
    check(/truck\s+0\.90/.test(cap), `a machine crop shows its label and confidence: ${cap}`)
    await page.goto(BASE + '/review?label=dog')
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=patch]').length === 2)
    await byTest('patch').nth(0).click({ modifiers: ['Control'] })
    await byTest('review-new-label').fill('cat')
    await byTest('review-relabel').click()
    await page.locator('[data-testid=review-done][data-changed="1"]').waitFor()
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=patch]').length === 1)
    await shot('10-review-relabelled')
    await byTest('patch').nth(0).click({ modifiers: ['Control'] })
    await byTest('review-reject').click()
    await page.locator('[data-testid=review-done][data-changed="1"]').waitFor()
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=patch]').length === 0)
  })

  await section('Item 26: label next lists one entry per embedding model and shows thumbnails.', async () => {
    await page.goto(BASE + '/label-next')
    await byTest('select-strategy').selectOption('diversity')
    const opts = await page.locator('[data-testid=select-model] option').evaluateAll((os) => os.map((o) => o.textContent))
    check(opts.length === 1 && opts[0] === 'lens', `one embedding entry per model: ${opts}`)
    await byTest('select-budget').fill('3')
    await byTest('select-start').click()
    await byTest('select-result').waitFor({ timeout: 120000 })
    await page.waitForFunction(() => { const is = [...document.querySelectorAll('[data-testid=select-thumb]')]; return is.length === 3 && is.every((i) => i.complete && i.naturalWidth > 0) }, null, { timeout: 60000 })
    const row = await page.locator('.eval-job [data-testid=job-progress]').evaluate((td) => ({ pct: td.dataset.pct, text: td.textContent }))
    check(row.pct === '100' && !/(\d+)\/(?!\1\b)\d+/.test(row.text), `a completed selection reads 100% with a matching count: ${row.text}`)
    await shot('11-label-next')
  })

  await section('Items 6, 13: jobs read done/total consistently; a failed job has Retry.', async () => {
    await page.goto(BASE + '/jobs')
    await byTest('job-row').first().waitFor()
    const rows = await byTest('job-row').evaluateAll((rs) => rs.map((r) => ({ status: r.dataset.status, pct: r.querySelector('[data-testid=job-progress]').dataset.pct,
      count: r.querySelector('[data-testid=job-count]')?.textContent.trim() ?? '' })))
    for (const r of rows) {
      const m = /^(\d+)\/(\d+)$/.exec(r.count)
      if (r.status === 'completed') check(r.pct === '100' && (!m || m[1] === m[2]), `a completed job reads 100% and no unfinished pair: ${JSON.stringify(r)}`)
      if (m && r.pct === '100') check(m[1] === m[2] || r.status === 'completed', `100% only when done: ${JSON.stringify(r)}`)
    }
    const failedRow = page.locator(`[data-testid=job-row][data-job-id="${want.failedJob}"]`)
    await failedRow.locator('[data-testid=job-retry]').waitFor()
    await shot('12-jobs')
    const ended = await failedRow.getAttribute('data-finished')
    await page.evaluate(() => { window.beforeRetry = true })
    await failedRow.locator('[data-testid=job-retry]').click()
    // The row is fetched again in place, without a reload: the job runs again (here it fails again on the
    // same input, so its status comes back to failed with a later end).
    const moved = await page.waitForFunction(([id, ended]) => {
      const r = document.querySelector(`[data-testid=job-row][data-job-id="${id}"]`)
      return r && (r.dataset.status === 'queued' || r.dataset.status === 'running' || r.dataset.finished !== ended)
    }, [want.failedJob, ended], { timeout: 60000 }).then(() => true, () => false)
    const retried = await failedRow.evaluate((r) => ({ status: r.dataset.status, finished: r.dataset.finished, error: r.querySelector('.error')?.textContent ?? '' }))
    check(moved, `Retry runs the job again and the row follows it: ${JSON.stringify({ ended, retried })}`)
    check(await page.evaluate(() => window.beforeRetry === true), 'the page was not reloaded')
    await shot('13-jobs-retried')
  })

  await section('Item 5: the dataset page shows leakage.', async () => {
    await page.goto(BASE + '/datasets/' + want.datasetId)
    if (want.leakage) {
      const l = byTest('dataset-leakage')
      await l.waitFor()
      check(+(await l.getAttribute('data-crossing')) === want.leakage.crossing, `the page's leakage is the API's: ${await l.textContent()}`)
    }
    await shot('14-dataset')
  })

  await section("Item 26: a read key's workspace has no drawing hints.", async () => {
    await signIn(process.env.READ_KEY, process.env.READ_SECRET)
    await page.goto(`${BASE}/tasks/${want.taskId}?frame=0`)
    await page.locator('[data-testid=frame-canvas][data-ready="1"]').waitFor()
    const readHints = await byTest('ws-hints').textContent()
    check(!/draw|resize|Del /.test(readHints), `a read key sees no drawing hints: ${readHints}`)
    await shot('15-read-workspace')
    await page.goto(BASE + '/jobs')
    await byTest('job-row').first().waitFor()
    check((await byTest('job-retry').count()) === 0, 'a read key has no Retry')
    await shot('16-read-jobs')
  })

  check(!failed.length, `${failed.length} sections failed:\n${failed.join('\n')}`)
  check(errors.length === 0, `no page errors: ${errors.join(' | ')}`)
  console.log('polish checks passed')
} finally {
  await close()
}
