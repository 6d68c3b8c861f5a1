// Times the web app on a big lake in Debian's Chromium through playwright-core,
// as BenchmarkWebApp (cmd/framelake) runs it:
//   BASE, KEY, SECRET  the server and a read key
//   JUMP    the 1-based item to jump to (default 900000)
//   QUERY   a query to type (default annotation.label = label-7)
//   FACET   the facet to click, field=value (default annotation.source=machine)
//   ROUNDS  rounds of each figure (default 5)
// It prints one JSON object: each figure's milliseconds per round.
//   firstPage  navigation to the grid (signed in) until every thumbnail in view has loaded
//   jump       "go to item JUMP" until that cell's thumbnail has loaded
//   facet      a click on the FACET value until the item count changes
//   query      a typed query (Enter) until the item count changes
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET } = process.env
const JUMP = +(process.env.JUMP || 900000)
const QUERY = process.env.QUERY || 'annotation.label = label-7'
const ROUNDS = +(process.env.ROUNDS || 5)
const [FIELD, VALUE] = (process.env.FACET || 'annotation.source=machine').split('=')
const { ctx, page, close } = await launch()
// Signed in before the page loads, as a tab that signed in earlier is.
await ctx.addInitScript(([k, s]) => {
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])
const out = { firstPage: [], jump: [], facet: [], query: [] }

// thumbsLoaded: every grid cell in the viewport (or the one with index i) has its thumbnail decoded.
const thumbsLoaded = (i) => page.waitForFunction((i) => {
  const sel = i == null ? '[data-testid=grid-item]' : `[data-testid=grid-item][data-index="${i}"]`
  const cells = [...document.querySelectorAll(sel)].filter((c) => {
    const r = c.getBoundingClientRect()
    return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth
  })
  return cells.length > 0 && cells.every((c) => { const img = c.querySelector('img'); return img && img.complete && img.naturalWidth > 0 })
}, i, { polling: 'raf', timeout: 60000 })

const count = () => page.getByTestId('item-count').textContent()
const countChanges = (from) => page.waitForFunction((from) => {
  const t = document.querySelector('[data-testid=item-count]')?.textContent
  return t && t !== from && t !== '…'
}, from, { polling: 'raf', timeout: 60000 })

try {
  for (let r = 0; r < ROUNDS; r++) {
    let t = Date.now()
    await page.goto(`${BASE}/`)
    await thumbsLoaded()
    out.firstPage.push(Date.now() - t)
    await countChanges('')

    t = Date.now()
    await page.getByTestId('goto-input').fill(String(JUMP - r))
    await page.getByTestId('goto-input').press('Enter')
    await thumbsLoaded(JUMP - r - 1)
    out.jump.push(Date.now() - t)

    let before = await count()
    const facet = page.locator(`[data-testid=facet-value][data-field="${FIELD}"][data-value="${VALUE}"]`)
    t = Date.now()
    await facet.click()
    await countChanges(before)
    out.facet.push(Date.now() - t)
    const narrowed = await count()
    await facet.click() // and out again
    await countChanges(narrowed)

    before = await count()
    t = Date.now()
    await page.getByTestId('query-input').fill(r % 2 ? QUERY : QUERY.replace(/\d+$/, (n) => String(+n + r)))
    await page.getByTestId('query-input').press('Enter')
    await countChanges(before)
    out.query.push(Date.now() - t)
  }
  console.log(JSON.stringify(out))
} finally {
  await close()
}
