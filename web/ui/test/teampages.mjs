// The team's pages as an annotator, a reviewer and a curator (issue 35),
// for TestWebAppTeamPages (cmd/framelake), which runs it with:
//   BASE, KEY, SECRET  the server (single sign-on at issuer) and an admin key
//   EXPECT  JSON {taskId, projectId, names, issuer}: the task is cut into one
//           job of both frames, assigned to ana (annotator); rev is the
//           project's reviewer, cur a curator; passwords "correct horse battery"
//   OUT     folder for screenshots
// It exits non-zero naming the first check that failed.
import { join } from 'node:path'
import { launchBrowser } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const { taskId, issuer } = JSON.parse(process.env.EXPECT)
const { newContext, close } = await launchBrowser({ viewport: { width: 1400, height: 900 } })
const shot = (p, name) => p.screenshot({ path: join(OUT, name + '.png') })
const t = (p, id) => p.getByTestId(id)
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const rest = async (path, init = {}) => {
  const r = await fetch(BASE + '/api/v1' + path, { ...init, headers: { key: KEY, secret: SECRET, 'content-type': 'application/json' } })
  const body = r.status === 204 ? null : await r.json()
  check(r.ok, `${path}: ${r.status} ${JSON.stringify(body)}`)
  return body
}
const jobPath = `/tasks/${taskId}/jobs/1`

async function signIn(name) {
  const ctx = await newContext()
  const p = await ctx.newPage()
  p.on('pageerror', (e) => console.log(`[${name}] page error: ${e.message}`))
  await p.goto(BASE + '/')
  await t(p, 'signin-name').fill(name)
  await t(p, 'signin-password').fill('correct horse battery')
  await t(p, 'signin-password-submit').click()
  await p.locator(`[data-testid=who][data-name="${name}"]`).waitFor()
  return p
}

// noForbiddenLinks follows every link of the app on the pages a person is
// shown (from each page's links, one level deep) and fails when a page a
// link opens makes a request the server refuses with 403.
async function noForbiddenLinks(p, who, starts) {
  const seen = new Set()
  const refused = []
  // The workspace asks GET /models for its Segment tool's model picker and
  // takes a refusal as "the default model only" (src/assist.js): a probe the
  // page expects to be refused, not a page the role cannot open.
  const probes = new Set(['GET /api/v1/models'])
  const onResponse = (r) => {
    const what = `${r.request().method()} ${new URL(r.url()).pathname}`
    if (r.status() === 403 && r.url().includes('/api/v1/') && !probes.has(what)) refused.push(what)
  }
  p.on('response', onResponse)
  const links = async () => (await p.locator('a[href^="/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href'))))
    .filter((h) => !/^\/(api|media|thumbs|crops)\//.test(h))
  const queue = []
  for (const s of starts) {
    await p.goto(BASE + s)
    await p.waitForLoadState('networkidle')
    queue.push(s, ...(await links()))
  }
  for (const href of queue) {
    const path = href.split('#')[0]
    if (seen.has(path)) continue
    seen.add(path)
    refused.length = 0
    await p.goto(BASE + path)
    await p.waitForLoadState('networkidle')
    check(refused.length === 0, `${who}: the link ${path} opens a page refused ${refused.join(', ')}`)
    const alerts = await p.locator('.error:visible, [role=alert]:visible').allTextContents()
    check(alerts.length === 0, `${who}: ${path} shows an error: ${alerts.join(' | ')}`)
  }
  p.off('response', onResponse)
  console.log(JSON.stringify({ who, linksFollowed: [...seen] }))
  return [...seen]
}

try {
  // Single sign-on configured: the sign-in page offers it, and it leads to the provider.
  const anon = await (await newContext()).newPage()
  await anon.goto(BASE + '/')
  const sso = t(anon, 'signin-sso')
  await sso.waitFor()
  check((await sso.getAttribute('href')) === '/api/v1/session/oidc', `the SSO button's link: ${await sso.getAttribute('href')}`)
  await shot(anon, 'p01-signin-sso')
  const r = await fetch(BASE + '/api/v1/session/oidc', { redirect: 'manual' })
  check(r.status >= 300 && r.status < 400 && r.headers.get('location').startsWith(issuer),
    `the SSO link sends the browser to the provider: ${r.status} ${r.headers.get('location')}`)

  // The annotator submits; the reviewer rejects elsewhere; the header follows.
  const ana = await signIn('ana')
  await ana.waitForURL(/\/queue$/)
  await shot(ana, 'p02-annotator-queue')
  await ana.goto(BASE + jobPath)
  await ana.locator('[data-testid=job-bar][data-state=annotation]').waitFor()
  const crumb = t(ana, 'home-crumb')
  check((await crumb.getAttribute('href')) === '/queue', `the annotator's breadcrumb leads to their queue: ${await crumb.getAttribute('href')}`)
  await t(ana, 'job-submit').click()
  await ana.locator('[data-testid=job-bar][data-state=submitted]').waitFor()
  check((await t(ana, 'save-state').textContent()) === 'job submitted', 'the submit is said')
  await shot(ana, 'p03-annotator-submitted')
  await rest(`/tasks/${taskId}/jobs/1/state`, { method: 'POST', body: JSON.stringify({ state: 'in_review' }) })
  await rest(`/tasks/${taskId}/jobs/1/state`, { method: 'POST', body: JSON.stringify({ state: 'rejected', note: 'box too loose' }) })
  await ana.locator('[data-testid=job-bar][data-state=rejected]').waitFor({ timeout: 10000 })
  const said = await t(ana, 'save-state').textContent()
  check(!/submitted/.test(said), `after the rejection the header no longer says the job is submitted: "${said}"`)
  check((await t(ana, 'job-state').textContent()) === 'rejected', 'the header shows the job rejected')
  await t(ana, 'job-reject-note').waitFor()
  await shot(ana, 'p04-annotator-rejected')

  // No link a role is shown answers 403: the annotator, the reviewer, the curator.
  await noForbiddenLinks(ana, 'annotator', ['/queue', jobPath, `/tasks/${taskId}/jobs`, '/stats'])
  await ana.goto(BASE + `/tasks/${taskId}/jobs`)
  await t(ana, 'task-jobs').waitFor()
  await shot(ana, 'p05-annotator-task-jobs')
  await ana.goto(BASE + '/stats')
  await ana.waitForLoadState('networkidle')
  await shot(ana, 'p06-annotator-stats')

  const rev = await signIn('rev')
  await rev.waitForURL(/\/queue$/)
  await rev.waitForLoadState('networkidle')
  await shot(rev, 'p07-reviewer-queue')
  await noForbiddenLinks(rev, 'reviewer', ['/queue', jobPath, `/tasks/${taskId}/jobs`, '/stats'])
  await rev.goto(BASE + jobPath)
  await rev.locator('[data-testid=job-bar]').waitFor()
  check((await t(rev, 'home-crumb').getAttribute('href')) === '/queue', "the reviewer's breadcrumb leads to their queue")
  await shot(rev, 'p08-reviewer-job')

  const cur = await signIn('cur')
  await cur.waitForLoadState('networkidle')
  await shot(cur, 'p09-curator-home')
  await noForbiddenLinks(cur, 'curator', ['/', '/projects', `/tasks/${taskId}/jobs`, jobPath, '/queue', '/stats'])
  await cur.goto(BASE + `/tasks/${taskId}/jobs`)
  await t(cur, 'task-jobs').waitFor()
  check((await t(cur, 'home-crumb').getAttribute('href')) === '/projects', "the curator's breadcrumb leads to the projects")
  await shot(cur, 'p10-curator-task-jobs')
  await cur.goto(BASE + jobPath)
  await cur.locator('[data-testid=job-bar]').waitFor()
  await shot(cur, 'p11-curator-job')
  console.log(JSON.stringify({ ok: true }))
} finally {
  await close()
}
