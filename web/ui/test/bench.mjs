// Times the web app on a big lake in Debian's Chromium through playwright-core,
// as BenchmarkWebApp (cmd/framelake) runs it:
//   BASE, KEY, SECRET  the server and a read key
//   JUMP    the 1-based item to jump to (default 900000)
//   QUERY   a query to type (default annotation.label = label07; rounds change the number)
//   FACET   the facet to click, field=value (default annotation.source=machine)
//   ROUNDS  rounds of each figure (default 5)
//   SERVER_PID  the server's process id, to count its CPU time
// It prints one JSON object: each figure's milliseconds per round, and as
// <figure>ServerCpu and <figure>BrowserCpu the CPU milliseconds (user and
// system) the server and Chromium's processes spent on it, which a machine
// shared with other work inflates far less than the wall time.
//   firstPage   navigation to the grid (signed in) until every thumbnail in view has loaded
//   jump        "go to item JUMP" until that cell's thumbnail has loaded
//   facet       a click on the FACET value until the grid and the sidebar are updated
//   labelFacet  a click on the first label of the sidebar, the same
//   query       a typed query (Enter), the same
// "Updated" is: the item count changed, every API request the change made
// has been answered (the sidebar's counts and histogram, the grid's page),
// the grid shows the new listing (no aria-busy) and every thumbnail in view
// has loaded. The waits check on DOM changes and image loads (gridwait.mjs):
// a check on every animation frame made Chromium draw frames for it.
import { launch } from './chromium.mjs'
import { children, procs } from './procs.mjs'
import { countChanges as countFrom, thumbsLoaded as thumbsIn } from './gridwait.mjs'

const { BASE, KEY, SECRET } = process.env
const JUMP = +(process.env.JUMP || 900000)
const QUERY = process.env.QUERY || 'annotation.label = label07'
const ROUNDS = +(process.env.ROUNDS || 5)
const [FIELD, VALUE] = (process.env.FACET || 'annotation.source=machine').split('=')
const { ctx, page, close } = await launch()
// Signed in before the page loads, as a tab that signed in earlier is.
await ctx.addInitScript(([k, s]) => {
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])
const out = {}

// cpuMs is the CPU time of the server and of every process under this one
// (Chromium's), in milliseconds, from /proc (clock ticks of 10 ms).
function cpuMs() {
  const stat = procs()
  return { server: stat.get(+process.env.SERVER_PID)?.ms ?? 0, browser: children(stat).reduce((ms, p) => ms + p.ms, 0) }
}

// time runs one round of a figure and records its wall and CPU milliseconds.
async function time(name, fn) {
  const t = Date.now(), c = cpuMs()
  await fn()
  const wall = Date.now() - t, d = cpuMs()
  ;(out[name] ??= []).push(wall)
  ;(out[name + 'ServerCpu'] ??= []).push(d.server - c.server)
  ;(out[name + 'BrowserCpu'] ??= []).push(d.browser - c.browser)
}

// API requests in flight, so a figure ends when the page has every answer it asked for.
let inflight = 0
const api = (r) => r.url().includes('/api/')
page.on('request', (r) => api(r) && inflight++)
page.on('requestfinished', (r) => api(r) && inflight--)
page.on('requestfailed', (r) => api(r) && inflight--)
const answered = () => new Promise((resolve) => {
  const poll = () => (inflight === 0 ? resolve() : setTimeout(poll, 2))
  poll()
})

const count = () => page.getByTestId('item-count').textContent()
const thumbsLoaded = (i) => thumbsIn(page, i)
const countChanges = (from) => countFrom(page, from)
// updated waits until a change from count `from` has reached the whole page.
const updated = async (from) => {
  await countChanges(from)
  await answered()
  await thumbsLoaded()
}
try {
  for (let r = 0; r < ROUNDS; r++) {
    await time('firstPage', async () => {
      await page.goto(`${BASE}/`)
      await thumbsLoaded()
    })
    await countChanges('')

    await time('jump', async () => {
      await page.getByTestId('goto-input').fill(String(JUMP - r))
      await page.getByTestId('goto-input').press('Enter')
      await thumbsLoaded(JUMP - r - 1)
    })

    let before = await count()
    const facet = page.locator(`[data-testid=facet-value][data-field="${FIELD}"][data-value="${VALUE}"]`)
    await time('facet', async () => {
      await facet.click()
      await updated(before)
    })
    let narrowed = await count()
    await facet.click() // and out again
    await updated(narrowed)

    before = await count()
    const label = page.locator('[data-testid=facet-value][data-field="annotation.label"]').nth(r)
    await time('labelFacet', async () => {
      await label.click()
      await updated(before)
    })
    narrowed = await count()
    await label.click()
    await updated(narrowed)

    before = await count()
    await time('query', async () => {
      await page.getByTestId('query-input').fill(r % 2 ? QUERY : QUERY.replace(/\d+$/, (n) => String(+n + r).padStart(n.length, '0')))
      await page.getByTestId('query-input').press('Enter')
      await updated(before)
    })
  }
  console.log(JSON.stringify(out))
} finally {
  await close()
}
