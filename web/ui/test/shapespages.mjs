// Every shape drawn outside the workspace (issue 33), for
// TestWebAppShapesPages (cmd/framelake), which runs it with:
//   BASE, KEY, SECRET  the server and an admin key
//   EXPECT  JSON {taskId, projectId, names, evalKey}: frame 0 (640x480) holds
//           a polygon with a hole (car), a mask and a polyline (road),
//           keypoints of a declared skeleton (person) and a class; evalKey
//           judged fixedDetector's truck and bike boxes against them
//   OUT     folder for screenshots
// The grid tile, the item view, the review crops and the evaluation's
// examples are checked by their canvas's pixels. It exits non-zero naming
// the first check that failed.
import { join } from 'node:path'
import { launch } from './chromium.mjs'

const { BASE, KEY, SECRET, OUT } = process.env
const { names, evalKey, datasetId } = JSON.parse(process.env.EXPECT)
const W = 640, H = 480
const { ctx, page, close } = await launch({ viewport: { width: 1400, height: 950 } })
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
page.on('pageerror', (e) => console.log('page error: ' + e.message))

// Points of frame 0 in image pixels: inside the polygon, in its hole, in
// the mask, on the skeleton's head-left_hand edge, beside the skeleton
// (between its two edges), on the polyline, and in nothing.
const P = {
  polygon: [60, 200], hole: [150, 110], mask: [460, 350], edge: [425, 105], besideEdge: [450, 108],
  polyline: [95, 360], nothing: [610, 20],
}

// pixels reads a shape canvas at image points: the largest alpha within r
// canvas pixels of each (lines are 2 px wide) and the colour there. The
// canvas's data-region is the part of the image it covers (a crop).
async function pixels(canvas, pts, r = 0) {
  await canvas.waitFor()
  return canvas.evaluate((c, { pts, W, H, r }) => {
    const [x0, y0, rw, rh] = c.dataset.region ? c.dataset.region.split(',').map(Number) : [0, 0, W, H]
    const g = c.getContext('2d')
    const out = {}
    for (const [name, [x, y]] of Object.entries(pts)) {
      const cx = Math.round(((x - x0) * c.width) / rw), cy = Math.round(((y - y0) * c.height) / rh)
      const d = g.getImageData(cx - r, cy - r, 2 * r + 1, 2 * r + 1).data
      let best = [0, 0, 0, 0]
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > best[3]) best = [d[i], d[i + 1], d[i + 2], d[i + 3]]
      out[name] = best
    }
    return out
  }, { pts, W, H, r })
}
const alpha = (px, name) => px[name][3]

// everyShape checks a canvas drawing all of frame 0's shapes.
async function everyShape(canvas, where) {
  await page.waitForFunction((c) => c.width > 1, await canvas.elementHandle())
  const types = await canvas.getAttribute('data-types')
  check(types === 'keypoints mask polygon polyline', `${where}: the canvas draws every shape type, got "${types}"`)
  const fill = await pixels(canvas, { polygon: P.polygon, hole: P.hole, mask: P.mask, nothing: P.nothing })
  const line = await pixels(canvas, { edge: P.edge, besideEdge: P.besideEdge, polyline: P.polyline }, 2)
  check(alpha(fill, 'polygon') > 40, `${where}: the polygon is filled (${fill.polygon})`)
  check(alpha(fill, 'hole') === 0, `${where}: the polygon's hole is empty (${fill.hole})`)
  check(alpha(fill, 'mask') > 40, `${where}: the mask is a translucent fill (${fill.mask})`)
  check(alpha(fill, 'mask') < 200, `${where}: the mask is translucent (${fill.mask})`)
  check(alpha(line, 'edge') > 100, `${where}: the skeleton's edge is drawn (${line.edge})`)
  check(alpha(line, 'besideEdge') === 0, `${where}: nothing beside the skeleton (${line.besideEdge})`)
  check(alpha(line, 'polyline') > 100, `${where}: the polyline is drawn (${line.polyline})`)
  check(alpha(fill, 'nothing') === 0, `${where}: nothing where no shape is (${fill.nothing})`)
  return fill
}

try {
  // Without single sign-on the sign-in page offers none.
  await page.goto(BASE + '/')
  await page.getByTestId('signin-form').waitFor()
  await page.waitForTimeout(500) // GET /session/sso has answered
  check((await page.getByTestId('signin-sso').count()) === 0, 'no SSO button on a server without single sign-on')
  await shot('s01-signin-no-sso')
  await ctx.addInitScript(([k, s]) => {
    sessionStorage.setItem('framelake.key', k)
    sessionStorage.setItem('framelake.secret', s)
  }, [KEY, SECRET])

  // The grid: the tile of frame 0.
  await page.goto(BASE + '/?' + new URLSearchParams({ q: `uniqueName = "${names[0]}"` }))
  const tile = page.locator(`[data-testid=grid-item][data-unique-name="${names[0]}"]`)
  await tile.waitFor()
  await everyShape(tile.getByTestId('shape-layer'), 'grid tile')
  await shot('s02-grid-tile')
  const api = await (await fetch(BASE + '/api/v1/lake/items?' + new URLSearchParams({ query: `uniqueName = "${names[0]}"` }),
    { headers: { key: KEY, secret: SECRET } })).json()
  check(JSON.stringify(api.items[0].skeletons) === JSON.stringify({ person: [['head', 'left_hand'], ['head', 'right_hand']] }),
    `the list answer carries the person skeleton: ${JSON.stringify(api.items[0].skeletons)}`)

  // The item view.
  await page.goto(BASE + '/items/' + encodeURIComponent(names[0]))
  await page.getByTestId('item-view').waitFor()
  await page.locator('[data-testid=item-image]').evaluate((i) => i.decode())
  const itemFill = await everyShape(page.getByTestId('item-view').getByTestId('shape-layer'), 'item view')
  // A shape's label chip and its swatch in the list are in the colour it is
  // drawn in: the polygon's (car) chip is the colour of its fill.
  const chips = await page.locator('[data-testid=item-box].shape').evaluateAll((bs) => Object.fromEntries(bs.map((b) =>
    [b.dataset.label, getComputedStyle(b.querySelector('[data-testid=box-label]')).backgroundColor])))
  const swatches = await page.locator('.annotations li').evaluateAll((ls) => Object.fromEntries(ls.map((l) =>
    [l.textContent.trim().split(' ')[0], getComputedStyle(l.querySelector('.swatch')).borderTopColor])))
  const chipRGB = (chips.car ?? '').match(/\d+/g)?.map(Number) ?? []
  check(chipRGB.length === 3 && chipRGB.every((v, i) => Math.abs(v - itemFill.polygon[i]) <= 3), // the fill's alpha rounds its colour
    `the car chip ${chips.car} is its polygon's colour ${itemFill.polygon}`)
  for (const label of ['car', 'road', 'person']) check(chips[label] && swatches[label] === chips[label], `${label}: swatch ${swatches[label]}, chip ${chips[label]}`)
  await shot('s03-item-view')

  // The dataset page counts a version's shapes by type, as its statistics do.
  const version = (await (await fetch(`${BASE}/api/v1/datasets/${datasetId}`, { headers: { key: KEY, secret: SECRET } })).json()).versionList[0]
  await page.goto(`${BASE}/datasets/${datasetId}`)
  await page.locator('[data-testid=dataset-version][data-status=ready]').waitFor()
  const tiles = await page.locator('[data-testid^=dataset-shapes-]').evaluateAll((ts) => Object.fromEntries(ts.map((t) =>
    [t.dataset.testid.replace('dataset-shapes-', ''), +t.querySelector('b').textContent.replace(/,/g, '')])))
  check(Object.keys(version.stats.shapes ?? {}).length >= 3 && JSON.stringify(Object.entries(tiles).sort()) === JSON.stringify(Object.entries(version.stats.shapes).sort()),
    `the dataset page's counts by type ${JSON.stringify(tiles)} are the version's ${JSON.stringify(version.stats.shapes)}`)
  await shot('s03b-dataset')

  // The review crops: the polygon (car), the mask and the polyline (road),
  // the keypoints with their skeleton (person).
  const patch = async (label, type) => {
    await page.goto(BASE + '/review?' + new URLSearchParams({ label }))
    const p = page.locator(`[data-testid=patch][data-unique-name="${names[0]}"][data-type="${type}"]`)
    await p.waitFor()
    await p.locator('img').evaluate((i) => i.decode())
    const c = p.getByTestId('patch-shape')
    await page.waitForFunction((c) => c.width > 1, await c.elementHandle())
    return c
  }
  let c = await patch('car', 'polygon')
  let px = await pixels(c, { polygon: P.polygon, hole: P.hole })
  check(alpha(px, 'polygon') > 40 && alpha(px, 'hole') === 0, `review crop: polygon filled, hole empty (${JSON.stringify(px)})`)
  await shot('s04-review-polygon')
  c = await patch('road', 'mask')
  px = await pixels(c, { mask: P.mask })
  check(alpha(px, 'mask') > 40 && alpha(px, 'mask') < 200, `review crop: the mask translucent (${px.mask})`)
  c = await patch('road', 'polyline')
  px = await pixels(c, { polyline: P.polyline }, 2)
  check(alpha(px, 'polyline') > 100, `review crop: the polyline (${px.polyline})`)
  await shot('s05-review-road')
  c = await patch('person', 'keypoints')
  px = await pixels(c, { edge: P.edge, besideEdge: P.besideEdge }, 2)
  check(alpha(px, 'edge') > 100 && alpha(px, 'besideEdge') === 0, `review crop: the skeleton's edge and nothing beside (${JSON.stringify(px)})`)
  await shot('s06-review-keypoints')

  // The evaluation's examples: frame 0's shapes are misses (fn), drawn in fn's colour.
  await page.goto(BASE + '/evaluations/' + encodeURIComponent(evalKey))
  await page.getByTestId('eval-examples').waitFor()
  await page.locator('[data-testid=eval-example-kind][data-kind=fn]').click()
  const ex = page.locator(`[data-testid=eval-examples][data-kind=fn] [data-testid=eval-example][data-unique-name="${names[0]}"]`)
  await ex.waitFor()
  await ex.locator('img').evaluate((i) => i.decode())
  const fill = await everyShape(ex.getByTestId('eval-example-shapes'), 'evaluation example')
  const [r, g, b] = fill.polygon
  check(r > 200 && g > 150 && b < 120, `the missed polygon is drawn in fn's colour (${fill.polygon})`)
  await ex.scrollIntoViewIfNeeded()
  await shot('s07-evaluation-examples')
  await page.locator('[data-testid=eval-example-kind][data-kind=fp]').click()
  const fp = page.locator(`[data-testid=eval-examples][data-kind=fp] [data-testid=eval-example][data-unique-name="${names[0]}"]`)
  await fp.waitFor()
  // The truck box's left side, dashed as machine boxes are: its most opaque pixel.
  const anns = await (await fetch(BASE + `/api/v1/lake/files/${encodeURIComponent(names[0])}/annotations`, { headers: { key: KEY, secret: SECRET } })).json()
  const tb = anns.annotations.find((a) => a.label === 'truck')
  const side = {}
  for (let y = tb.y + 10; y <= tb.y + tb.height - 10; y += 3) side[y] = [tb.x, y]
  const truck = Object.values(await pixels(fp.getByTestId('eval-example-shapes'), side, 1)).sort((a, b) => b[3] - a[3])[0]
  check(truck[3] > 100 && truck[0] > 200 && truck[1] < 140, `the false-positive truck box is drawn in fp's colour (${truck})`)
  await shot('s08-evaluation-fp')

  // Relabelling a polygon's patch keeps it a polygon (the bulk action wrote its box back).
  const poly = await patch('car', 'polygon')
  await poly.click({ modifiers: ['Control'] })
  await page.getByTestId('review-new-label').fill('road')
  await page.getByTestId('review-relabel').click()
  const done = page.getByTestId('review-done')
  await done.waitFor()
  await shot('s09-review-relabelled')
  check((await done.getAttribute('data-changed')) === '1', `the polygon's patch is relabelled: ${await done.textContent()}`)
  const { projectId } = JSON.parse(process.env.EXPECT)
  const st = await (await fetch(BASE + `/api/v1/projects/${projectId}/frames/${encodeURIComponent(names[0])}/annotations`, { headers: { key: KEY, secret: SECRET } })).json()
  const relabelled = st.annotations.filter((a) => a.label === 'road' && a.type === 'polygon')
  check(relabelled.length === 1 && relabelled[0].polygon.length === 2 && !st.annotations.some((a) => a.label === 'car'),
    `the relabelled polygon is stored as a polygon of two rings: ${JSON.stringify(st.annotations.map((a) => [a.label, a.type]))}`)
  console.log(JSON.stringify({ ok: true }))
} finally {
  await close()
}
