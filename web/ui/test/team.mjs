// Three people at once, each in a browser context of their own (cookies and
// storage apart), through the web app of a running framelake. The Go test
// TestWebAppTeam (cmd/framelake) starts the server, makes a project "team"
// with a task of two frames and runs this with:
//   BASE          the server's URL
//   KEY, SECRET   the admin key (for reading the API's answers to compare)
//   EXPECT        JSON {admin, password: the first admin's name and password,
//                 task: {taskId, projectId, names}}
//   OUT           folder for screenshots
// It exits non-zero naming the first check that failed.
import { join } from 'node:path'
import { launchBrowser } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { taskId, projectId, names } = want.task
const { newContext, close } = await launchBrowser({ viewport: { width: 1400, height: 900 } })
const shot = (p, name) => p.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const rest = async (path, init = {}) => {
  const r = await fetch(BASE + '/api/v1' + path, { ...init, headers: { key: KEY, secret: SECRET, 'content-type': 'application/json' } })
  const body = r.status === 204 ? null : await r.json()
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
async function drag(p, x0, y0, x1, y1) {
  await p.mouse.move(x0, y0)
  await p.mouse.down()
  await p.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, { steps: 4 })
  await p.mouse.move(x1, y1, { steps: 4 })
  await p.mouse.up()
}
const t = (p, id) => p.getByTestId(id)
const ready = (p, name) => p.locator(`[data-testid=frame-canvas][data-frame="${name}"][data-ready="1"]`).waitFor()
const jobState = (p, state) => p.locator(`[data-testid=job-bar][data-state="${state}"]`).waitFor({ timeout: 10000 })
const frameOf = (name) => rest(`/projects/${projectId}/frames/${encodeURIComponent(name)}/annotations`)

// signIn signs a person in by name and password in a fresh context, and
// checks the cookie: HttpOnly, SameSite=Strict, and no secret in storage.
async function signIn(name, password) {
  const ctx = await newContext()
  const p = await ctx.newPage()
  p.on('pageerror', (e) => console.log(`[${name}] page error: ${e.message}`))
  await p.goto(BASE + '/')
  await t(p, 'signin-name').fill(name)
  await t(p, 'signin-password').fill(password)
  await t(p, 'signin-password-submit').click()
  await p.locator(`[data-testid=who][data-name="${name}"]`).waitFor()
  const ck = (await ctx.cookies()).find((c) => c.name === 'framelake_session')
  check(ck && ck.httpOnly && ck.sameSite === 'Strict', `${name}'s session cookie: ${JSON.stringify(ck)}`)
  const stored = await p.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }))
  check(!stored.includes(password) && !/secret|csrf/i.test(stored), `${name}'s page keeps no secret: ${stored}`)
  return { ctx, p }
}

try {
  // The admin: the first start's person, by password.
  const admin = await signIn(want.admin, want.password)
  const A = admin.p
  check((await t(A, 'who').getAttribute('data-role')) === 'admin', 'the admin is shown as admin')
  await shot(A, 't01-admin-signed-in')

  // People: an annotator and a reviewer (older servers know only write),
  // one more disabled, and a password reset.
  await A.goto(BASE + '/users')
  await t(A, 'users-page').waitFor()
  const roles = await t(A, 'user-new-role').locator('option').allTextContents()
  const add = async (name, role) => {
    await t(A, 'user-name').fill(name)
    await t(A, 'user-password').fill('correct horse battery')
    await t(A, 'user-new-role').selectOption(role)
    await t(A, 'user-create').click()
    await until(async () => (await A.locator(`[data-testid=user-row][data-name="${name}"]`).count()) ||
      (await t(A, 'user-error').count() && 'error'), 'person ' + name + ' added')
    return (await A.locator(`[data-testid=user-row][data-name="${name}"]`).count()) > 0
  }
  let annRole = 'annotator'
  let revRole = 'reviewer'
  if (!roles.includes('annotator') || !(await add('ana', 'annotator'))) {
    annRole = revRole = 'write' // roles of keys, before the team's roles
    check(await add('ana', 'write'), 'ana added as write')
  }
  check(await add('rev', revRole), 'rev added')
  check(await add('temp', annRole), 'temp added')
  const temp = A.locator('[data-testid=user-row][data-name="temp"]')
  await temp.getByTestId('user-disable').click()
  await A.locator('[data-testid=user-row][data-name="temp"][data-disabled="true"]').waitFor()
  await temp.getByTestId('user-new-password').fill('another long password')
  await temp.getByTestId('user-reset').click()
  await A.getByText("temp's password is reset").waitFor()
  const users = (await rest('/users')).users
  check(users.find((u) => u.name === 'temp').disabledAt && users.find((u) => u.name === 'ana').role === annRole,
    `users as the server has them: ${JSON.stringify(users)}`)
  await shot(A, 't02-people')
  console.log(JSON.stringify({ roles: { annotator: annRole, reviewer: revRole } }))
  // Members of the project, on the projects page (the team's roles act
  // only in projects they are members of).
  if (annRole === 'annotator') {
    await A.goto(BASE + '/projects')
    const proj = A.locator(`[data-testid=project-row][data-project-id="${projectId}"]`)
    for (const [n, role] of [['ana', 'annotator'], ['rev', 'reviewer']]) {
      await proj.getByTestId('member-name').fill(n)
      await proj.getByTestId('member-role').selectOption(role)
      await proj.getByTestId('member-add').click()
      await proj.locator(`[data-testid=member][data-name="${n}"][data-role="${role}"]`).waitFor()
    }
    const ms = (await rest(`/projects/${projectId}/members`)).members
    check(ms.length === 2, `the project's members: ${JSON.stringify(ms)}`)
    await shot(A, 't02b-members')
  }

  // The task cut into one job of its two frames, handed out by pull.
  await A.goto(BASE + `/tasks/${taskId}/jobs`)
  await t(A, 'jobs-size').fill('2')
  await t(A, 'jobs-create').click()
  await A.locator('[data-testid=label-job-row][data-number="1"][data-state="annotation"]').waitFor()
  await shot(A, 't03-jobs-cut')

  // The annotator lands on their queue and pulls the job.
  const ann = await signIn('ana', 'correct horse battery')
  const N = ann.p
  if (annRole === 'annotator') await N.waitForURL(/\/queue$/)
  else await N.goto(BASE + '/queue')
  await t(N, 'queue').waitFor()
  await shot(N, 't04-annotator-queue')
  await N.locator(`[data-testid=next-job][data-project-id="${projectId}"]`).click()
  await N.waitForURL(/\/jobs\/1/)
  await ready(N, names[0])
  await jobState(N, 'annotation')
  // The curator sees who holds it, without a reload.
  await A.locator('[data-testid=label-job-row][data-number="1"][data-assignee="ana"]').waitFor()

  // Draw a car, mark the second frame empty, submit.
  const ib = await t(N, 'frame-image').boundingBox()
  const k = 640 / ib.width
  await N.locator('[data-testid=label-option][data-label=car]').click()
  await drag(N, ib.x + 100, ib.y + 80, ib.x + 260, ib.y + 200)
  const drawn = await until(async () => { const f = await frameOf(names[0]); return f.annotations.length === 1 && f.annotations[0] }, 'the drawn car is stored')
  check(Math.abs(drawn.x - 100 * k) <= 2 && Math.abs(drawn.width - 160 * k) <= 2, `drawn car ${JSON.stringify(drawn)}`)
  await N.keyboard.press('ArrowRight')
  await ready(N, names[1])
  await N.keyboard.press('e')
  await until(async () => (await frameOf(names[1])).annotated, 'the second frame marked empty')
  await N.keyboard.press('ArrowLeft')
  await ready(N, names[0])
  await t(N, 'job-submit').click()
  await jobState(N, 'submitted')
  await t(N, 'job-readonly').waitFor()
  await shot(N, 't05-annotator-submitted')

  // The reviewer takes it from their queue, comments on the car, rejects.
  const rev = await signIn('rev', 'correct horse battery')
  const R = rev.p
  if (revRole === 'reviewer') await R.waitForURL(/\/queue$/)
  else await R.goto(BASE + '/queue')
  const row = R.locator(`[data-testid=queue-row][data-task-id="${taskId}"][data-number="1"]`)
  await row.waitFor()
  check((await row.getAttribute('data-action')) === 'review', `the reviewer's action: ${await row.getAttribute('data-action')}`)
  await shot(R, 't06-reviewer-queue')
  await row.getByTestId('queue-open').click()
  await ready(R, names[0])
  await t(R, 'job-start-review').click()
  await jobState(R, 'in_review')
  const carR = R.locator('[data-testid=box][data-source=human]').first()
  const cb = await carR.boundingBox()
  await R.mouse.click(cb.x + cb.width / 2, cb.y + cb.height / 2)
  await R.locator('[data-testid=box].selected').waitFor()
  await t(R, 'comment-input').fill('box too loose')
  await t(R, 'comment-add').click()
  const pinR = R.locator('[data-testid=comment-pin][data-resolved=false]')
  await pinR.waitFor()
  await R.locator('[data-testid=comment][data-shape=car]').waitFor()
  await t(R, 'frame-reject').click()
  await R.locator('[data-testid=frame-verdict][data-review=rejected]').waitFor()
  await t(R, 'job-note').fill('see the comment on the car')
  await shot(R, 't07-reviewer-comment')
  await t(R, 'job-reject').click()
  await jobState(R, 'rejected')

  // The annotator, with no reload, sees the job back and the comment pinned
  // on the car; moves the box, resolves the comment, submits again.
  await jobState(N, 'rejected')
  await N.locator('[data-testid=comment][data-resolved=false]').waitFor()
  await N.locator('[data-testid=comment-pin][data-resolved=false]').waitFor()
  check((await N.locator('[data-testid=comment-text]').first().textContent()) === 'box too loose', 'the annotator reads the comment')
  await t(N, 'job-reject-note').waitFor()
  await shot(N, 't08-annotator-sees-comment')
  const carN = N.locator('[data-testid=box][data-source=human]').first()
  const nb = await carN.boundingBox()
  await drag(N, nb.x + nb.width / 2, nb.y + nb.height / 2, nb.x + nb.width / 2 + 30, nb.y + nb.height / 2 + 20)
  await until(async () => { const f = await frameOf(names[0]); return Math.abs(f.annotations[0].x - (drawn.x + 30 * k)) <= 2 }, 'the moved car is stored')
  await t(N, 'comment-resolve').click()
  await N.locator('[data-testid=comment][data-resolved=true]').waitFor()
  await t(N, 'job-submit').click()
  await jobState(N, 'submitted')
  await shot(N, 't09-annotator-resubmitted')

  // The reviewer sees it submitted again (no reload), reviews and accepts.
  await jobState(R, 'submitted')
  await R.locator('[data-testid=comment][data-resolved=true]').waitFor()
  await t(R, 'job-start-review').click()
  await jobState(R, 'in_review')
  await t(R, 'frame-accept').click()
  await R.locator('[data-testid=frame-verdict][data-review=accepted]').waitFor()
  await t(R, 'job-accept').click()
  await jobState(R, 'accepted')
  await shot(R, 't10-reviewer-accepted')
  await jobState(N, 'accepted')
  const job = await rest(`/tasks/${taskId}/jobs/1`)
  check(job.state === 'accepted' && job.assignee === 'ana' && job.reviewer === 'rev', `the job: ${JSON.stringify(job)}`)
  await A.locator('[data-testid=label-job-row][data-number="1"][data-state="accepted"]').waitFor()
  await shot(A, 't11-jobs-accepted')

  // The history of the first frame: exactly the annotator's two changes.
  await A.goto(BASE + `/tasks/${taskId}/jobs/1`)
  await ready(A, names[0])
  await A.locator('[data-testid=history] summary').click()
  const changes = A.locator('[data-testid=history-change]')
  await until(async () => (await changes.count()) >= 2, 'two changes in the history')
  await new Promise((r) => setTimeout(r, 500))
  const seen = await changes.evaluateAll((els) => els.map((e) => ({ who: e.dataset.who, via: e.dataset.via, added: +e.dataset.added, removed: +e.dataset.removed })))
  const api = (await rest(`/lake/history?uniqueName=${encodeURIComponent(names[0])}&project=${projectId}`)).changes
  check(JSON.stringify(seen) === JSON.stringify([{ who: 'ana', via: 'web app', added: 1, removed: 1 }, { who: 'ana', via: 'web app', added: 1, removed: 0 }]),
    `history panel: ${JSON.stringify(seen)} (API: ${api.length} changes)`)
  check(api.length === 2, `the API's history has ${api.length} changes`)
  // Preview the first version: the car where it was drawn.
  await changes.nth(1).locator('button').click()
  await t(A, 'history-preview').waitFor()
  const aib = await t(A, 'frame-image').boundingBox()
  await until(async () => {
    const b = await A.locator('[data-testid=box][data-source=human]').first().boundingBox()
    return b && Math.abs(b.x - (aib.x + drawn.x * aib.width / 640)) <= 3
  }, 'the preview draws the car where it was first drawn')
  await shot(A, 't12-history-preview')
  await t(A, 'history-back').click()

  // Statistics: today's figures of those events.
  await A.goto(BASE + '/stats')
  await t(A, 'stats').waitFor()
  const statsErr = await t(A, 'stats-error').count()
  if (statsErr) {
    console.log(JSON.stringify({ stats: 'route missing: ' + (await t(A, 'stats-error').textContent()) }))
  } else {
    await A.locator('[data-testid=stats-row]').first().waitFor()
    const rows = await A.locator('[data-testid=stats-row]').evaluateAll((els) => els.map((e) => {
      const o = { user: e.dataset.user }
      for (const td of e.querySelectorAll('td[data-key]')) o[td.dataset.key] = td.dataset.value
      return o
    }))
    const ana = rows.find((r) => r.user === 'ana')
    const rv = rows.find((r) => r.user === 'rev')
    console.log(JSON.stringify({ stats: rows }))
    check(ana && rv, `a row for ana and for rev: ${JSON.stringify(rows)}`)
    const eq = (r, k, v) => check(r[k] === undefined || +r[k] === v, `${r.user}'s ${k} is ${r[k]}, want ${v}`)
    // The second frame's "no objects" changed no shapes (it had none): one
    // frame, a car drawn (+1) and moved (+1 -1) in two saves.
    eq(ana, 'frames', 1)
    eq(ana, 'shapes', 2)
    eq(ana, 'shapesRemoved', 1)
    eq(ana, 'changes', 2)
    eq(ana, 'rejectionRate', 0.5)
    eq(ana, 'reviewsDone', 0)
    eq(ana, 'jobsReviewed', 2)
    eq(ana, 'jobsRejected', 1)
    eq(ana, 'commentsReceived', 1)
    eq(ana, 'commentsResolved', 1)
    eq(rv, 'reviewsDone', 2)
    eq(rv, 'shapes', 0)
    eq(rv, 'commentsReceived', 0)
    check(rows.length === 2, `only ana and rev did anything today: ${JSON.stringify(rows)}`)
  }
  await shot(A, 't13-stats')

  // Restore the first version from the history (the admin curates): the
  // car goes back where it was drawn, as a new change.
  await A.goto(BASE + `/tasks/${taskId}/jobs/1`)
  await ready(A, names[0])
  await A.locator('[data-testid=history] summary').click()
  await until(async () => (await changes.count()) === 2, 'the history again')
  await changes.nth(1).locator('button').click()
  await t(A, 'history-restore').click()
  await until(async () => (await changes.count()) === 3, 'the restore is a change of its own')
  const top = await changes.first().evaluate((e) => ({ who: e.dataset.who, via: e.dataset.via }))
  check(top.who === want.admin && top.via.startsWith('restore of '), `the restore's change: ${JSON.stringify(top)}`)
  const back = await until(async () => { const f = await frameOf(names[0]); return Math.abs(f.annotations[0].x - drawn.x) <= 0.5 && f }, 'the car is back where it was drawn')
  check(back.annotations.length === 1, `restored frame: ${JSON.stringify(back.annotations)}`)
  await shot(A, 't15-history-restored')

  // Sign-out ends the session: a reload asks again.
  await t(N, 'sign-out').click()
  await t(N, 'signin-name').waitFor()
  await N.reload()
  await t(N, 'signin-name').waitFor()
  check(!(await ann.ctx.cookies()).some((c) => c.name === 'framelake_session' && c.value), 'the cookie is gone')
  // The reviewer's session survives a reload (GET /session gives the token back) and can still write.
  await R.reload()
  await t(R, 'job-bar').waitFor()
  await shot(R, 't14-reviewer-after-reload')
  console.log(JSON.stringify({ ok: true }))
} finally {
  await close()
}
