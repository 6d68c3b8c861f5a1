// Drives the annotation workspace in Debian's Chromium through playwright-core,
// against a running framelake. The Go test TestWebAppAnnotate (cmd/framelake)
// starts the server, stores three photos in the lake, makes a 1080p frame
// task with 200 boxes a frame, and runs this with:
//   BASE          the server's URL
//   KEY, SECRET   a write key
//   EXPECT        JSON {names: the three photos' uniqueNames, sizes: their [width, height],
//                 bench: {taskId, projectId}: the 1080p task}
//   OUT           folder for screenshots
// It prints the figures as JSON lines and exits non-zero naming the first
// check that failed.
import { join } from 'node:path'
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { ctx, page, close } = await launch({ viewport: { width: 1500, height: 1000 } })
const shot = (name, p = page) => p.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id, p = page) => p.getByTestId(id)
const rest = async (path, init = {}) => {
  const r = await fetch(BASE + '/api/v1' + path, { ...init, headers: { key: KEY, secret: SECRET, 'content-type': 'application/json' } })
  const body = await r.json()
  check(r.ok, `${path}: ${r.status} ${JSON.stringify(body)}`)
  return body
}
const frameOf = (pid, name) => rest(`/projects/${pid}/frames/${encodeURIComponent(name)}/annotations`)

async function signIn(p, path) {
  await p.goto(BASE + path)
  await byTest('signin-key', p).fill(KEY)
  await byTest('signin-secret', p).fill(SECRET)
  await byTest('signin-submit', p).click()
}

// ready waits until the canvas shows frame i of the task with its boxes.
async function ready(p, name) {
  await p.locator(`[data-testid=frame-canvas][data-frame="${name}"][data-ready="1"]`).waitFor()
}

// until polls fn until it answers something truthy.
async function until(fn, what, ms = 5000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out: ' + what)
    await new Promise((r) => setTimeout(r, 100))
  }
}

// drag moves the mouse from (x0, y0) to (x1, y1) in steps, as a hand does.
async function drag(p, x0, y0, x1, y1) {
  await p.mouse.move(x0, y0)
  await p.mouse.down()
  await p.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, { steps: 4 })
  await p.mouse.move(x1, y1, { steps: 4 })
  await p.mouse.up()
}

try {
  // Sign in on the projects page and make a project.
  await signIn(page, '/projects')
  await byTest('project-form').waitFor()
  await byTest('project-name').fill('streets-ui')
  await byTest('project-labels').fill('dog, person, truck, bicycle, horse, car')
  await byTest('project-create').click()
  let proj = page.locator('[data-testid=project-row][data-name="streets-ui"]')
  await proj.waitFor()
  const pid = await proj.getAttribute('data-project-id')
  await shot('a0-project')

  // A task of the three photos, made from a selection in the lake grid:
  // picked out of order, its frames come in the grid's order.
  const second = (await rest('/projects', { method: 'POST', body: JSON.stringify({ projectName: 'second look', contentType: 2,
    labels: [{ labelName: 'dog' }] }) })).projectId
  await page.goto(`${BASE}/?q=${encodeURIComponent('collection = "photos"')}&sort=date_created&order=ASC`)
  const cell = (i) => page.locator(`[data-testid=grid-item][data-index="${i}"]`)
  await cell(2).waitFor()
  for (const i of [2, 0, 1]) await cell(i).click({ modifiers: ['Control'] })
  check((await page.locator('[data-testid=grid-item][data-selected=true]').count()) === 3, 'three cells selected')
  const gridOrder = await Promise.all([0, 1, 2].map((i) => cell(i).getAttribute('data-unique-name')))
  check(JSON.stringify(gridOrder) === JSON.stringify(want.names), `grid order ${gridOrder} is the upload order`)
  await page.locator('[data-testid=selection-action][data-action=task]').click()
  await byTest('selection-project').selectOption(pid)
  await byTest('selection-task-name').fill('three photos')
  await shot('a1-grid-create-task')
  await byTest('selection-apply').click()
  const made = byTest('selection-task')
  await made.waitFor()
  const taskId = await made.getAttribute('data-task-id')
  const ws = await rest(`/tasks/${taskId}/frames`)
  check(ws.task.taskName === 'three photos' && JSON.stringify(ws.frames.map((f) => f.uniqueName)) === JSON.stringify(want.names),
    `the task's frames are the selection in grid order: ${JSON.stringify(ws.frames.map((f) => f.uniqueName))}`)
  await shot('a1-grid-task-made')
  // "Select all matching" makes the same files a task of another project too.
  await byTest('select-clear').click()
  await byTest('select-all').click()
  await page.locator('[data-testid=selection-action][data-action=task]').click()
  await byTest('selection-project').selectOption(second)
  await byTest('selection-task-name').fill('second look at three')
  await byTest('selection-apply').click()
  await page.locator(`[data-testid=selection-task]:not([data-task-id="${taskId}"])`).waitFor()
  const ws2 = await rest(`/tasks/${await byTest('selection-task').getAttribute('data-task-id')}/frames`)
  check(ws2.projectId === second && JSON.stringify(ws2.frames.map((f) => f.uniqueName)) === JSON.stringify(want.names),
    `all matching, in grid order, in the second project: ${JSON.stringify(ws2.frames.map((f) => f.uniqueName))}`)

  // The projects page lists it, not started.
  await page.goto(BASE + '/projects')
  proj = page.locator('[data-testid=project-row][data-name="streets-ui"]')
  const row = proj.locator(`[data-testid=task-row][data-task-id="${taskId}"]`)
  await row.waitFor()
  check((await row.getAttribute('data-status')) === '0', 'a new task is not started')
  await shot('a1-projects')

  // The task opens on its first frame.
  await row.locator('a').first().click()
  await page.waitForURL(/\/tasks\//)
  await ready(page, want.names[0])
  const [w0, h0] = want.sizes[0]
  const img = byTest('frame-image')
  let ib = await img.boundingBox()
  const k = w0 / ib.width
  // Draw a box by mouse and find it stored where the drag went, in image pixels.
  await byTest('label-option').first().click()
  await drag(page, ib.x + 100, ib.y + 80, ib.x + 300, ib.y + 240)
  const drawn = { x: 100 * k, y: 80 * k, width: 200 * k, height: 160 * k }
  let st = await until(async () => {
    const f = await frameOf(pid, want.names[0])
    return f.annotations.length === 1 && f
  }, 'the drawn box is stored')
  let b = st.annotations[0]
  const off = Math.max(...['x', 'y', 'width', 'height'].map((f) => Math.abs(b[f] - drawn[f])))
  check(off <= 2 && b.label === 'dog' && b.source === 'human', `stored box ${JSON.stringify(b)} vs drag ${JSON.stringify(drawn)} (off ${off.toFixed(2)} px)`)
  check(h0 > 0, 'sizes given')
  let task = await rest('/tasks/' + taskId)
  check(task.status === 1, `first edit starts the task, status ${task.status}`)
  await shot('a2-drawn')

  // Move it by dragging its middle.
  const box = page.locator('[data-testid=box][data-source=human]').first()
  const bb = await box.boundingBox()
  await drag(page, bb.x + bb.width / 2, bb.y + bb.height / 2, bb.x + bb.width / 2 + 40, bb.y + bb.height / 2 + 30)
  st = await until(async () => {
    const f = await frameOf(pid, want.names[0])
    return Math.abs(f.annotations[0].x - (b.x + 40 * k)) <= 2 && f
  }, 'the moved box is stored')
  check(Math.abs(st.annotations[0].y - (b.y + 30 * k)) <= 2, `moved box y ${st.annotations[0].y}, want ${b.y + 30 * k}`)
  // The label by hotkey (2 = person), then undo brings dog back.
  await page.keyboard.press('2')
  await until(async () => (await frameOf(pid, want.names[0])).annotations[0].label === 'person', 'label changed by hotkey')
  check((await page.locator('[data-testid=box][data-source=human]').first().getAttribute('data-label')) === 'person', 'box shows person')
  await shot('a3-relabelled')
  await page.keyboard.press('Control+z')
  await until(async () => (await frameOf(pid, want.names[0])).annotations[0].label === 'dog', 'undo restored dog')

  // Frame 2 has no objects.
  await byTest('frame-next').click()
  await ready(page, want.names[1])
  await byTest('frame-empty').click()
  await until(async () => (await frameOf(pid, want.names[1])).annotated, 'frame 2 marked empty')
  check((await frameOf(pid, want.names[1])).annotations.length === 0, 'an empty frame has no boxes')

  // Frame 3: the default detector's boxes come as suggestions; accept one.
  await page.keyboard.press('ArrowRight')
  await ready(page, want.names[2])
  await byTest('model-detect').click()
  await page.locator('[data-testid=model-job][data-status=completed]').waitFor({ timeout: 240000 })
  await byTest('suggestion').first().waitFor()
  const sug = byTest('suggestion').first()
  const sugLabel = await sug.getAttribute('data-label')
  const sugCount = await byTest('suggestion').count()
  const shown = await page.evaluate(() => [...document.querySelectorAll('[data-testid=suggestion]')].filter((e) => +e.dataset.confidence >= 0.5).length)
  check((await page.locator('[data-testid=box][data-source=machine]').count()) === shown, 'suggestions at least 0.5 sure drawn as machine boxes')
  await shot('a4-suggestions')
  await sug.getByTestId('suggestion-accept').click()
  st = await until(async () => {
    const f = await frameOf(pid, want.names[2])
    return f.annotations.length === 1 && f
  }, 'the accepted suggestion is stored')
  check(st.annotations[0].label === sugLabel && st.annotations[0].source === 'human' && st.suggestions.length === sugCount - 1,
    `accepted suggestion stored as human: ${JSON.stringify(st.annotations)}, ${st.suggestions.length} left`)
  await until(async () => (await page.locator('[data-testid=box][data-source=human]').count()) === 1, 'accepted box drawn as human')
  await shot('a5-accepted')

  // Done: status 2 in Get Task List, the boxes in Download Annotations.
  await byTest('task-complete').click()
  await page.locator('[data-testid=task-status][data-status="2"]').waitFor()
  const list = await rest('/tasks?projectId=' + pid)
  check(list.taskList[0].status === 2, `Get Task List status ${list.taskList[0].status}`)
  const dl = await rest(`/projects/${pid}/annotations?taskList=${taskId}`)
  const frames = dl.data[0].frames
  check(frames.length === 3 && frames[0].annotations.length === 1 && frames[0].annotations[0].label === 'dog' &&
    frames[1].annotations.length === 0 && frames[2].annotations[0].label === sugLabel, `download: ${JSON.stringify(frames.map((f) => f.annotations))}`)
  await shot('a6-completed')

  // A stale tab: B opens frame 1, A changes it, B's edit is refused and shown.
  const pageB = await ctx.newPage()
  await signIn(pageB, `/tasks/${taskId}?frame=0`)
  await ready(pageB, want.names[0])
  await page.bringToFront()
  await byTest('frame-prev').click()
  await byTest('frame-prev').click()
  await ready(page, want.names[0])
  await page.locator('[data-testid=box][data-source=human]').first().click()
  await page.keyboard.press('Delete')
  await until(async () => (await frameOf(pid, want.names[0])).annotations.length === 0, 'tab A deleted the box')
  await pageB.bringToFront()
  const ibB = await byTest('frame-image', pageB).boundingBox()
  await drag(pageB, ibB.x + 20, ibB.y + 20, ibB.x + 90, ibB.y + 90)
  await byTest('conflict', pageB).waitFor()
  const msg = await byTest('conflict', pageB).textContent()
  check(/changed this frame/.test(msg) && /0 boxes/.test(msg), 'conflict names the current boxes: ' + msg)
  check((await frameOf(pid, want.names[0])).annotations.length === 0, "the stale tab's edit was not written")
  await shot('a7-conflict', pageB)
  await byTest('conflict-load', pageB).click()
  check((await pageB.locator('[data-testid=box][data-source=human]').count()) === 0, 'the stale tab shows the current boxes')
  await pageB.close()

  // Review: the task's dog boxes as crops; a click opens the frame in the workspace.
  await page.goto(`${BASE}/review?label=dog&taskId=${taskId}`)
  await byTest('patch').first().waitFor()
  const dogs = (await rest(`/lake/patches?label=dog&taskId=${taskId}`)).patchCount
  check(dogs > 0 && (await byTest('patch-count').textContent()).startsWith(dogs + ' '), `the task's ${dogs} dog boxes counted`)
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=patch] img')].every((i) => i.complete && i.naturalWidth > 0))
  await shot('a8-review')
  const patchOf = await byTest('patch').first().getAttribute('data-unique-name')
  await byTest('patch').first().click()
  await ready(page, patchOf)

  // Scrolling the bench's 200 car patches: no cell of the view is still loading a frame later.
  await page.goto(`${BASE}/review?label=car&taskId=${want.bench.taskId}`)
  await byTest('patch').first().waitFor()
  let gaps = 0
  for (let y = 0; y < 3000; y += 400) {
    await page.locator('.review-scroll').evaluate((el, y) => { el.scrollTop = y }, y)
    gaps += await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => {
      const box = document.querySelector('.review-scroll').getBoundingClientRect()
      r([...document.querySelectorAll('.patch.loading')].filter((e) => {
        const b = e.getBoundingClientRect()
        return b.bottom > box.top && b.top < box.bottom
      }).length)
    })))
  }
  // The figure is how many cells were still loading a frame after a scroll
  // (0 on a quiet machine); beside other suites a crop can be a frame late,
  // so the check is that every cell in view loads.
  console.log(JSON.stringify({ figure: 'review patches still loading a frame after a scroll', loading: gaps }))
  await page.waitForFunction(() => {
    const box = document.querySelector('.review-scroll').getBoundingClientRect()
    return ![...document.querySelectorAll('.patch.loading')].some((e) => {
      const b = e.getBoundingClientRect()
      return b.bottom > box.top && b.top < box.bottom
    })
  }, null, { timeout: 15000 }).catch(() => check(false, `${gaps} patches in view were loading after a scroll, and some still are 15 s later`))

  // Figures: open a 1080p frame with 200 boxes (from the next-frame key and by deep link).
  const bench = want.bench
  await page.goto(`${BASE}/tasks/${bench.taskId}?frame=0`)
  await ready(page, bench.names[0])
  // Timed in the page, from the key's event to the second animation frame
  // after the image is decoded and its 200 boxes are in place (painted).
  const opens = []
  for (let i = 0; i < 8; i++) {
    const to = bench.names[(i + 1) % 2]
    opens.push(await page.evaluate(({ key, to }) => new Promise((resolve) => {
      const done = () => {
        const c = document.querySelector('[data-testid=frame-canvas]')
        return c && c.dataset.frame === to && c.dataset.ready === '1' &&
          document.querySelectorAll('[data-testid=box][data-source=human]').length === 200
      }
      const t0 = performance.now()
      const obs = new MutationObserver(() => {
        if (!done()) return
        obs.disconnect()
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(Math.round(performance.now() - t0))))
      })
      obs.observe(document.body, { subtree: true, attributes: true, childList: true })
      dispatchEvent(new KeyboardEvent('keydown', { key }))
    }), { key: i % 2 === 0 ? 'ArrowRight' : 'ArrowLeft', to }))
    await new Promise((r) => setTimeout(r, 300))
  }
  const t0 = Date.now()
  await page.goto(`${BASE}/tasks/${bench.taskId}?frame=1`)
  await ready(page, bench.names[1])
  const deep = Date.now() - t0
  await shot('a9-1080p-200-boxes')
  console.log(JSON.stringify({ figure: 'frame open, 1080p, 200 boxes', nextFrameMs: opens, deepLinkMs: deep }))
  // The target is 300 ms, read from the line above on a quiet machine.
  // make test runs this beside other suites (in CI at load 10 and more), so
  // the check only catches a hang.
  const median = [...opens].sort((a, b) => a - b)[opens.length >> 1]
  check(median < 15000, `frame open median ${median} ms`)
} catch (e) {
  await shot('failure').catch(() => {})
  console.error(e.message)
  process.exitCode = 1
} finally {
  await close()
}
