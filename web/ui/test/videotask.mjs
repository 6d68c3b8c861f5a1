// A task made from a lake video, for TestWebAppVideoTask (cmd/framelake),
// which runs it with:
//   BASE, KEY, SECRET  the server and an admin key
//   EXPECT  JSON {video, project, fps, square: {x0, y0, dx, dy, size}}: on video a white square of
//           size px is at (x0 + dx·n, y0 + dy·n) on frame n; project is a video project whose
//           member ana (password "correct horse battery") annotates
//   OUT     folder for screenshots
// It prints the measured play rate as a "figure:" line and exits non-zero
// naming the first check that failed.
import { join } from 'node:path'
import { cpus, loadavg } from 'node:os'
import { launchBrowser } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const sq = want.square
const { newContext, close } = await launchBrowser({ viewport: { width: 1400, height: 1000 } })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const rest = async (path, init = {}) => {
  const r = await fetch(BASE + '/api/v1' + path, { ...init, headers: { key: KEY, secret: SECRET, 'content-type': 'application/json' } })
  const body = await r.json()
  check(r.ok, `${path}: ${r.status} ${JSON.stringify(body)}`)
  return body
}
async function until(fn, what, ms = 10000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out: ' + what)
    await new Promise((r) => setTimeout(r, 100))
  }
}
const truth = (n) => ({ x: sq.x0 + sq.dx * n, y: sq.y0 + sq.dy * n, width: sq.size, height: sq.size })
const video = encodeURIComponent(want.video)

try {
  // The curator (an admin key) makes the task from the video's workspace.
  const cctx = await newContext()
  await cctx.addInitScript(([k, s]) => {
    sessionStorage.setItem('framelake.key', k)
    sessionStorage.setItem('framelake.secret', s)
  }, [KEY, SECRET])
  const C = await cctx.newPage()
  C.on('pageerror', (e) => console.log(`[curator] page error: ${e.message}`))
  await C.goto(`${BASE}/videos/${video}/label`)
  await C.getByTestId('vws-make-task').click()
  await C.getByTestId('video-task-form').waitFor()
  await C.getByTestId('vt-project').selectOption(want.project)
  await C.getByTestId('vt-name').fill('square 0-39')
  await C.getByTestId('vt-last').fill('999')
  await C.getByTestId('vt-create').click()
  const refused = await C.getByTestId('vt-error').textContent()
  check(/lastFrame 999/.test(refused), 'a range past the video is refused naming lastFrame: ' + refused)
  await C.getByTestId('vt-last').fill('39')
  await C.getByTestId('vt-create').click()
  await C.waitForURL(/\/tasks\/[^/]+\/jobs$/)
  const taskId = decodeURIComponent(new URL(C.url()).pathname.split('/')[2])
  await C.getByTestId('jobs-size').fill('20')
  await C.getByTestId('jobs-assignees').fill('ana')
  await C.getByTestId('jobs-create').click()
  await C.locator('[data-testid=label-job-row][data-number="2"]').waitFor()
  const ws = await rest(`/tasks/${taskId}/frames`)
  check(ws.video?.uniqueName === want.video && ws.frames.length === 40 && ws.frames[39].frame === 39, 'the task is frames 0-39 of the video: ' + JSON.stringify(ws.video))
  await C.screenshot({ path: join(OUT, 'v01-jobs.png') })

  // The annotator signs in and opens job 1 (frames 0-19) in the video workspace.
  const actx = await newContext()
  const A = await actx.newPage()
  A.on('pageerror', (e) => console.log(`[ana] page error: ${e.message}`))
  await A.goto(BASE + '/')
  await A.getByTestId('signin-name').fill('ana')
  await A.getByTestId('signin-password').fill('correct horse battery')
  await A.getByTestId('signin-password-submit').click()
  await A.locator('[data-testid=who][data-name="ana"]').waitFor()
  await A.goto(`${BASE}/tasks/${encodeURIComponent(taskId)}/jobs/1`)
  const onFrame = (n) => A.locator(`[data-testid=video-workspace][data-frame="${n}"][data-ready="1"]`).waitFor({ timeout: 20000 })
  await onFrame(0)
  await A.locator('[data-testid=job-bar][data-state="annotation"][data-role="annotator"]').waitFor()
  const saved = (what) => until(async () => /^saved$/.test(await A.getByTestId('save-state').textContent()), what)
  async function drawBox(b) {
    const r = await A.getByTestId('frame-image').boundingBox()
    const at = (x, y) => [r.x + (x * r.width) / 320, r.y + (y * r.height) / 240]
    await A.mouse.move(...at(b.x, b.y))
    await A.mouse.down()
    await A.mouse.move(...at(b.x + b.width / 2, b.y + b.height / 2), { steps: 3 })
    await A.mouse.move(...at(b.x + b.width, b.y + b.height), { steps: 3 })
    await A.mouse.up()
  }
  await drawBox(truth(0))
  await saved('the keyframe on frame 0')
  await A.keyboard.press('Shift+Period')
  await onFrame(10)
  await drawBox(truth(10))
  await saved('the keyframe on frame 10')
  const tracks = (await rest(`/projects/${want.project}/videos/${video}/tracks`)).tracks
  check(tracks.length === 1 && tracks[0].operation === want.project && tracks[0].keyframes.map((k) => k.frame).join() === '0,10',
    'one track of the project with keyframes 0 and 10: ' + JSON.stringify(tracks))
  const mid = (await rest(`/projects/${want.project}/videos/${video}/tracks?frame=5`)).shapes
  const t5 = truth(5)
  check(mid.length === 1 && mid[0].interpolated && ['x', 'y', 'width', 'height'].every((f) => Math.abs(mid[0][f] - t5[f]) <= 1.5),
    `frame 5 is interpolated at the square ${JSON.stringify(t5)}: ${JSON.stringify(mid)}`)
  // The frame's history: the keyframe drawn, then removed; restoring the
  // first version brings it back (a track edit is a change of its frame).
  const keyframes = async () => (await rest(`/projects/${want.project}/videos/${video}/tracks`)).tracks[0]?.keyframes.map((k) => k.frame).join()
  await A.keyboard.press('Delete')
  await until(async () => (await keyframes()) === '0', 'frame 10\'s keyframe removed')
  await A.locator('[data-testid=history] summary').click()
  await until(async () => (await A.getByTestId('history-change').count()) === 2, 'frame 10\'s history lists the keyframe drawn and removed')
  check(await A.locator('[data-testid=history-change][data-who="ana"]').count() === 2, 'both changes are the annotator\'s')
  await A.locator('[data-testid=history-change]').nth(1).locator('button.link').click()
  await A.getByTestId('history-restore').click()
  await until(async () => (await keyframes()) === '0,10', 'restoring frame 10\'s first version brings its keyframe back')
  await until(async () => (await A.getByTestId('history-change').count()) === 3, 'the restore is a third change')
  await A.screenshot({ path: join(OUT, 'v02b-history.png') })
  // The box track's hint says why it cannot be tracked from a frame only
  // while that is so: not beside its tracked draft on frame 11 (Enter would
  // make it the keyframe), and again once the draft is dropped.
  await A.locator('[data-testid=track-row][data-number="1"]').click()
  await A.locator('[data-testid=track-tools][data-number="1"]').waitFor()
  check(await A.getByTestId('track-hint').count() === 0, 'no hint on frame 10, a keyframe of the box track')
  // Track forward in task mode: the page polls the propagation through the
  // project's route (the annotator may not read the lake's jobs) and shows
  // its frames done of its total as they come, without a reload; while the
  // tab is hidden it asks nothing, and it picks up when shown. The keyframe
  // it writes is then deleted, so the job's frames stay as the rest expects.
  const setVisible = (state) => A.evaluate((v) => {
    Object.defineProperty(document, 'visibilityState', { value: v, configurable: true })
    document.dispatchEvent(new Event('visibilitychange'))
  }, state)
  await setVisible('hidden')
  await A.getByTestId('track-forward').click()
  const pj = A.getByTestId('propagate-job')
  await until(async () => (await pj.getAttribute('data-job-id')) !== '', 'the propagation is queued')
  await A.waitForTimeout(1500) // a visible page asks within 0.4 s
  check(await pj.getAttribute('data-polls') === '0' && await pj.getAttribute('data-status') === 'queued',
    `a hidden page does not poll the propagation: ${await pj.getAttribute('data-polls')} polls, ${await pj.getAttribute('data-status')}`)
  await setVisible('visible')
  await A.locator('[data-testid=propagate-job][data-status=completed]').waitFor({ timeout: 60000 })
  const [done, total, stoppedAt, reason] = await Promise.all(['data-done', 'data-total', 'data-stopped-at', 'data-reason'].map((k) => pj.getAttribute(k)))
  const counted = await A.getByTestId('propagate-count').textContent()
  console.log(`check: the propagation read through the project's route: ${done}/${total} frames, stopped at ${stoppedAt} (${reason}), shown "${counted.trim()}"`)
  check(+total === 9 && +done >= 1 && counted.includes(done), `frames 11-19 of the job counted and shown: ${done}/${total}, "${counted}"`)
  if (+stoppedAt > 10) {
    for (let f = 10; f < +stoppedAt; f++) await A.keyboard.press('Period')
    await onFrame(+stoppedAt)
    await until(async () => (await keyframes()) === '0,10,' + stoppedAt, 'the propagated keyframe is stored')
    await A.getByTestId('track-remove-key').click()
    await until(async () => (await keyframes()) === '0,10', 'the propagated keyframe deleted')
    for (let f = +stoppedAt; f > 10; f--) await A.keyboard.press('Comma')
    await onFrame(10)
  }
  await A.keyboard.press('t')
  await onFrame(11)
  await A.locator('[data-testid=assist-state][data-kind="track"][data-ready="1"]').waitFor()
  const beside = await A.getByTestId('track-tools').textContent()
  check(!/frame 11 is not/.test(beside), 'no "not a keyframe" hint beside the box track\'s draft on frame 11: ' + beside)
  await A.keyboard.press('Escape')
  await A.getByTestId('assist-state').waitFor({ state: 'detached' })
  check(/frame 11 is not one of #1/.test(await A.getByTestId('track-hint').textContent()), 'the hint is back once the draft is dropped')
  await A.keyboard.press('Comma')
  await onFrame(10)
  for (let i = 0; i < 5; i++) await A.keyboard.press('Comma')
  await onFrame(5)
  check(await A.locator('.box.interpolated').count() === 1, 'frame 5 shows its box dashed (interpolated)')
  // The job ends at frame 19: stepping stops there.
  await A.keyboard.press('Shift+Period')
  await A.keyboard.press('Shift+Period')
  await onFrame(19)
  await A.screenshot({ path: join(OUT, 'v02-annotator.png') })
  // Track a shape to the next frame (t): a polygon drawn round the square on
  // frame 17 is proposed on 18 moved by the square's motion, and Enter makes
  // it the track's keyframe there.
  await A.keyboard.press('Comma')
  await A.keyboard.press('Comma')
  await onFrame(17)
  await A.keyboard.press('Escape')
  await A.keyboard.press('p')
  const r17 = await A.getByTestId('frame-image').boundingBox()
  const at17 = (x, y) => [r17.x + (x * r17.width) / 320, r17.y + (y * r17.height) / 240]
  const s17 = truth(17)
  for (const [x, y] of [[0, 0], [1, 0], [1, 1], [0, 1]]) await A.mouse.click(...at17(s17.x + x * s17.width, s17.y + y * s17.height))
  await A.keyboard.press('Enter')
  await saved('the polygon on frame 17')
  await A.keyboard.press('t')
  await onFrame(18)
  await A.locator('[data-testid=assist-state][data-kind="track"][data-ready="1"]').waitFor()
  await A.screenshot({ path: join(OUT, 'v02c-tracked.png') })
  await A.keyboard.press('Enter')
  const poly = await until(async () => {
    const t = (await rest(`/projects/${want.project}/videos/${video}/tracks`)).tracks.find((x) => x.type === 'polygon')
    return t?.keyframes.length === 2 && t
  }, 'the tracked polygon is its track\'s keyframe on frame 18')
  const [k17, k18] = poly.keyframes
  const gx = k18.polygon[0][0] - k17.polygon[0][0], gy = k18.polygon[0][1] - k17.polygon[0][1]
  console.log(`check: the polygon tracked from frame 17 to 18 moved (${gx}, ${gy}), the square (${sq.dx}, ${sq.dy})`)
  check(k17.frame === 17 && k18.frame === 18 && Math.abs(gx - sq.dx) <= 1 && Math.abs(gy - sq.dy) <= 1, `tracked by (${gx}, ${gy}), the square moved (${sq.dx}, ${sq.dy})`)

  // Intelligent scissors (i) on frame 19: three clicks a pixel off the
  // square's corners and a double-click at the fourth close an outline
  // that follows its edges; Enter saves it as the polygon track's keyframe.
  await A.keyboard.press('Period')
  await onFrame(19)
  await A.keyboard.press('i')
  const r19 = await A.getByTestId('frame-image').boundingBox()
  const at19 = (x, y) => [r19.x + (x * r19.width) / 320, r19.y + (y * r19.height) / 240]
  const s19 = truth(19)
  const corner = ([x, y]) => at19(s19.x + x * s19.width + (x ? 1 : -1), s19.y + y * s19.height + (y ? -1 : 1))
  for (const c of [[0, 0], [1, 0], [1, 1]]) await A.mouse.click(...corner(c))
  await A.mouse.dblclick(...corner([0, 1]))
  const cut = A.locator('[data-testid=assist-state][data-kind="scissors"][data-ready="1"]')
  await cut.waitFor()
  const shown = +(await cut.getAttribute('data-vertices'))
  await A.screenshot({ path: join(OUT, 'v02d-scissors.png') })
  await A.keyboard.press('Enter')
  const k19 = (await until(async () => {
    const t = (await rest(`/projects/${want.project}/videos/${video}/tracks`)).tracks.find((x) => x.type === 'polygon')
    return t?.keyframes.length === 3 && t
  }, 'the scissors\' polygon is the polygon track\'s keyframe on frame 19')).keyframes[2]
  await saved('the scissors\' keyframe')
  const inPoly = (ring, x, y) => {
    let inside = false
    for (let i = 0, j = ring.length - 2; i < ring.length; j = i, i += 2) {
      if ((ring[i + 1] > y) !== (ring[j + 1] > y) && x < ((ring[j] - ring[i]) * (y - ring[i + 1])) / (ring[j + 1] - ring[i + 1]) + ring[i]) inside = !inside
    }
    return inside
  }
  let both = 0, either = 0
  for (let y = 0; y < 240; y++) {
    for (let x = 0; x < 320; x++) {
      const a = inPoly(k19.polygon[0], x + 0.5, y + 0.5), b = x >= s19.x && x < s19.x + s19.width && y >= s19.y && y < s19.y + s19.height
      both += a && b; either += a || b
    }
  }
  console.log(`check: the scissors' polygon on frame 19: ${k19.polygon[0].length / 2} vertices (${shown} shown), IoU ${(both / either).toFixed(3)} with the square`)
  check(k19.frame === 19 && k19.polygon[0].length / 2 === shown && both / either >= 0.85, `the scissors' keyframe on frame 19 covers the square: IoU ${(both / either).toFixed(3)}`)

  // Play from frame 0 to the job's end (2 s at 10 fps): the page measures the rate.
  await A.keyboard.press('Shift+Comma')
  await A.keyboard.press('Shift+Comma')
  await onFrame(0)
  await A.keyboard.press('Space')
  await A.locator('[data-testid=vws-play][data-playing="1"]').waitFor()
  await A.locator('[data-testid=vws-play][data-playing="0"]').waitFor({ timeout: 30000 })
  await onFrame(19)
  const rate = +(await A.getByTestId('vws-rate').getAttribute('data-rate'))
  // The same play in the lake's workspace (the curator's page), right after:
  // on a machine loaded past its cores the page gets a share of a core, and
  // what task mode must keep is the rate the lake's workspace has there.
  await C.goto(`${BASE}/videos/${video}/label?frame=40`)
  await C.locator('[data-testid=video-workspace][data-frame="40"][data-ready="1"]').waitFor({ timeout: 20000 })
  await C.keyboard.press('Space')
  await C.locator('[data-testid=vws-play][data-playing="1"]').waitFor()
  await C.locator('[data-testid=vws-play][data-playing="0"]').waitFor({ timeout: 30000 })
  const ref = +(await C.getByTestId('vws-rate').getAttribute('data-rate'))
  const load = loadavg()[0] / cpus().length
  console.log(`figure: play rate ${rate.toFixed(2)} fps in task mode, ${ref.toFixed(2)} in the lake's workspace, of ${want.fps} (load ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`)
  if (load <= 1.5) check(Math.abs(rate - want.fps) <= 0.2 * want.fps, `play keeps the video's rate ±20%: ${rate} fps of ${want.fps}`)
  else check(rate >= 0.7 * ref, `loaded ${load.toFixed(1)}x its cores: task mode plays at ${rate} fps, the lake's workspace ${ref}`)

  // Submit: the job goes to review and is read-only to its annotator.
  await A.getByTestId('job-submit').click()
  await A.locator('[data-testid=job-bar][data-state="submitted"]').waitFor()
  await A.getByTestId('vws-readonly').waitFor()
  const job = await rest(`/tasks/${taskId}/jobs/1`)
  check(job.state === 'submitted' && job.annotatedFrames === 14, 'job 1 submitted with frames 0-10 and 17-19 under its tracks: ' + JSON.stringify({ state: job.state, annotated: job.annotatedFrames }))
  await A.screenshot({ path: join(OUT, 'v03-submitted.png') })
} finally {
  await close()
}
