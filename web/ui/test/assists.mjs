// Drives the workspace's assists in Debian's Chromium through playwright-core,
// for TestWebAppAssists (cmd/framelake), which runs it with:
//   BASE, KEY, SECRET  the server and a write key
//   EXPECT  JSON {taskId, projectId, names (3 frames), width, height, scene: per frame
//           {cx, cy, rx, ry: the orange ellipse, square: [x0, y0, x1, y1] the green one}}
//   OUT     folder for screenshots
// It prints the figures as JSON lines and exits non-zero naming the first
// check that failed.
import { join } from 'node:path'
import { launch } from './chromium.mjs'
import { encodeBits, encodeRegion, maskBits } from '../src/rle.js'

const { BASE, KEY, SECRET, OUT } = process.env
const want = JSON.parse(process.env.EXPECT)
const { taskId, projectId, names, width: W, height: H, scene } = want
const { ctx, page, close } = await launch({ viewport: { width: 1500, height: 1000 } })
await ctx.addInitScript(([k, s]) => {
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png') })
function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what)
}
const byTest = (id) => page.getByTestId(id)
const rest = async (path) => {
  const r = await fetch(BASE + '/api/v1' + path, { headers: { key: KEY, secret: SECRET } })
  const body = await r.json()
  check(r.ok, `${path}: ${r.status} ${JSON.stringify(body)}`)
  return body
}
const frameOf = (i) => rest(`/projects/${projectId}/frames/${encodeURIComponent(names[i])}/annotations`)
async function until(fn, what, ms = 30000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out: ' + what)
    await new Promise((r) => setTimeout(r, 100))
  }
}
const stored = (i, pick, what) => until(async () => pick((await frameOf(i)).annotations), what)
const ready = (i) => page.locator(`[data-testid=frame-canvas][data-frame="${names[i]}"][data-ready="1"]`).waitFor()
const saved = () => until(async () => (await byTest('save-state').textContent()) === 'saved', 'saved')
const state = () => byTest('assist-state')
// proposal waits for the assist's draft of kind to be ready and answers the panel's attributes.
// The first one starts the model's Python worker (OpenCV's import): over 30 s in make test at load 30.
const proposal = (kind, what) => until(async () => {
  const s = state()
  if (!(await s.count()) || (await s.getAttribute('data-kind')) !== kind || (await s.getAttribute('data-ready')) !== '1') return null
  return { model: await s.getAttribute('data-model'), vertices: await s.getAttribute('data-vertices'), text: await s.textContent() }
}, what, 120000)

// Bitmaps of the scene, to score stored masks against.
const ellipse = (f) => { const { cx, cy, rx, ry } = scene[f]; return (x, y) => ((x + 0.5 - cx) / rx) ** 2 + ((y + 0.5 - cy) / ry) ** 2 <= 1 }
const square = (f) => { const [x0, y0, x1, y1] = scene[f].square; return (x, y) => x >= x0 && x < x1 && y >= y0 && y < y1 }
function iou(bits, inside) {
  let i = 0, u = 0
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const a = bits[y * W + x] === 1, b = inside(x, y)
    if (a && b) i++
    if (a || b) u++
  }
  return i / u
}
const masks = (as) => as.filter((a) => a.type === 'mask')
// polyBits fills a polygon's rings even-odd at pixel centres, as the API's rasteriser does.
function polyBits(rings) {
  const bits = new Uint8Array(W * H)
  for (let y = 0; y < H; y++) {
    const yc = y + 0.5, xs = []
    for (const r of rings) for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
      if ((r[i + 1] > yc) !== (r[j + 1] > yc)) xs.push(r[i] + ((yc - r[i + 1]) * (r[j] - r[i])) / (r[j + 1] - r[i + 1]))
    }
    xs.sort((a, b) => a - b)
    for (let k = 0; k + 1 < xs.length; k += 2) for (let x = Math.max(0, Math.ceil(xs[k] - 0.5)); x < Math.min(W, xs[k + 1] - 0.5); x++) bits[y * W + x] = 1
  }
  return bits
}
async function pxOf() {
  const r = await byTest('frame-image').boundingBox()
  return (x, y) => [r.x + (x * r.width) / W, r.y + (y * r.height) / H]
}

try {
  // The brush's encoder of a stroke's rectangle writes what encoding the whole frame does.
  for (let n = 0; n < 300; n++) {
    const w = 1 + ((n * 7) % 29), h = 1 + ((n * 5) % 19)
    const x0 = n % w, y0 = (n * 3) % h, rw = 1 + (n % (w - x0)), rh = 1 + ((n * 11) % (h - y0))
    const part = Uint8Array.from({ length: rw * rh }, () => (Math.random() < 0.5 ? 1 : 0))
    const full = new Uint8Array(w * h)
    for (let y = 0; y < rh; y++) for (let x = 0; x < rw; x++) full[(y0 + y) * w + x0 + x] = part[y * rw + x]
    check(encodeRegion(part, x0, y0, rw, rh, w, h).counts === encodeBits(full, w, h).counts, `encodeRegion ${rw}x${rh} at ${x0},${y0} of ${w}x${h}`)
  }

  await page.goto(`${BASE}/tasks/${taskId}?frame=0`)
  await ready(0)
  const at = await pxOf()
  const { cx, cy, rx, ry } = scene[0]
  await page.keyboard.press('1') // ball
  await page.keyboard.press('s')
  await byTest('assists').waitFor()

  // Box to mask: drag a box around the ellipse with some margin.
  const box = [cx - rx - 14, cy - ry - 14, cx + rx + 14, cy + ry + 14]
  await page.mouse.move(...at(box[0], box[1]))
  await page.mouse.down()
  await page.mouse.move(...at((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), { steps: 4 })
  await page.mouse.move(...at(box[2], box[3]), { steps: 4 })
  await page.mouse.up()
  let p = await proposal('segment', 'the box segmented')
  check(p.model === 'default-segmentation', 'the model that answered is shown: ' + p.text)
  const shownMs = await until(() => page.locator('[data-testid=shape-canvas]').getAttribute('data-assist-shown-ms'), 'mask drawn')
  console.log(JSON.stringify({ figure: 'box to mask, 640x480: mouse-up to mask shown (the first request: the model worker starts)', ms: +shownMs, panel: p.text }))
  await page.mouse.move(5, 5)
  await shot('a1-segment-box')
  // A negative click on the ground inside the box (its corner), then Alt-click another: each refines.
  await page.mouse.click(...at(box[0] + 8, box[1] + 8), { button: 'right' })
  await until(async () => (await state().textContent()).includes('1 clicks') && (await state().getAttribute('data-ready')) === '1', 'right-click refined')
  await page.keyboard.down('Alt')
  await page.mouse.click(...at(box[2] - 8, box[3] - 8))
  await page.keyboard.up('Alt')
  p = await until(async () => (await state().textContent()).includes('2 clicks') && (await state().getAttribute('data-ready')) === '1' && proposal('segment', ''), 'Alt-click refined')
  await page.mouse.move(5, 5)
  await shot('a2-segment-refined')
  await page.keyboard.press('Enter')
  let seg = await stored(0, (as) => masks(as)[0], 'segment mask stored')
  await saved()
  const segIoU = iou(maskBits(seg.mask), ellipse(0))
  console.log(JSON.stringify({ check: 'segmented mask vs the ellipse', iou: +segIoU.toFixed(3) }))
  check(seg.label === 'ball' && segIoU >= 0.8, `the stored segment's IoU ${segIoU.toFixed(3)} >= 0.8`)
  check(await state().count() === 0, 'the draft is gone once accepted')

  // Esc drops a draft: a new box, dropped, stores nothing more.
  await page.mouse.move(...at(box[0], box[1]))
  await page.mouse.down()
  await page.mouse.move(...at(box[2], box[3]), { steps: 4 })
  await page.mouse.up()
  await proposal('segment', 'second box segmented')
  await page.keyboard.press('Escape')
  await until(async () => (await state().count()) === 0, 'Esc drops the draft')
  check(masks((await frameOf(0)).annotations).length === 1, 'a dropped draft stores nothing')
  await page.keyboard.press('Escape') // deselect, so the label key does not relabel the mask

  // The wand: a click on the ellipse, Shift-click on the square (label tile).
  await page.keyboard.press('2')
  await page.keyboard.press('w')
  await page.mouse.click(...at(cx, cy))
  p = await proposal('wand', 'wand region')
  check(p.text.includes('1 region'), 'one region: ' + p.text)
  const [sx0, sy0, sx1, sy1] = scene[0].square
  await page.keyboard.down('Shift')
  await page.mouse.click(...at((sx0 + sx1) / 2, (sy0 + sy1) / 2))
  await page.keyboard.up('Shift')
  p = await until(async () => (await state().textContent()).includes('2 regions') && proposal('wand', ''), 'Shift-click adds a region')
  await page.mouse.move(5, 5)
  await shot('a3-wand')
  await page.keyboard.press('Enter')
  const wand = await stored(0, (as) => masks(as).find((m) => m.label === 'tile'), 'wand mask stored')
  await saved()
  const wb = maskBits(wand.mask)
  const wandIoU = iou(wb, (x, y) => ellipse(0)(x, y) || square(0)(x, y))
  console.log(JSON.stringify({ check: 'wand mask vs ellipse and square', iou: +wandIoU.toFixed(3) }))
  check(wandIoU >= 0.9, `the wand's IoU ${wandIoU.toFixed(3)} >= 0.9`)

  // Mask to polygon: the accepted mask is selected; o shows its outline and vertex count, ] simplifies.
  await page.keyboard.press('o')
  p = await proposal('outline', 'outline proposed')
  const v1 = +p.vertices
  check(v1 > 8 && (await byTest('outline-vertices').textContent()) === `${v1} vertices`, 'vertex count shown: ' + p.text)
  for (let i = 0; i < 4; i++) await page.keyboard.press(']')
  p = await until(async () => { const q = await proposal('outline', ''); return q && +q.vertices < v1 && q }, 'a larger tolerance has fewer vertices')
  const v2 = +p.vertices
  console.log(JSON.stringify({ check: 'outline vertices at tolerance 1.5 and 3.5', v1, v2 }))
  await page.mouse.move(5, 5)
  await shot('a4-outline')
  await page.keyboard.press('Enter')
  const poly = await stored(0, (as) => as.find((a) => a.type === 'polygon' && a.label === 'tile'), 'polygon stored')
  await saved()
  const nv = poly.polygon.reduce((n, r) => n + r.length / 2, 0)
  check(nv === v2 && poly.polygon.length === 2, `the stored polygon has the ${v2} vertices shown in 2 rings: ${nv} in ${poly.polygon.length}`)
  check(masks((await frameOf(0)).annotations).length === 1, 'the mask was replaced by the polygon')

  // Track the polygon to the next frame: proposed there, moved by the scene's motion.
  await page.keyboard.press('t')
  await ready(1)
  p = await proposal('track', 'track proposed on frame 1')
  await page.mouse.move(5, 5)
  await shot('a5-tracked')
  await page.keyboard.press('Enter')
  const moved = await stored(1, (as) => as.find((a) => a.type === 'polygon'), 'tracked polygon stored')
  await saved()
  const ddx = scene[1].cx - scene[0].cx, ddy = scene[1].cy - scene[0].cy
  const gx = moved.polygon[0][0] - poly.polygon[0][0], gy = moved.polygon[0][1] - poly.polygon[0][1]
  console.log(JSON.stringify({ check: 'tracked shift', want: [ddx, ddy], got: [gx, gy], panel: p.text }))
  check(Math.abs(gx - ddx) <= 2 && Math.abs(gy - ddy) <= 2, `tracked by (${gx}, ${gy}), the objects moved (${ddx}, ${ddy})`)

  // Polygon to mask: o on the tracked polygon, Enter.
  await page.keyboard.press('o')
  await proposal('raster', 'polygon rasterised')
  await page.keyboard.press('Enter')
  const raster = await stored(1, (as) => masks(as)[0], 'rasterised mask stored')
  await saved()
  const rIoU = iou(maskBits(raster.mask), (x, y) => ellipse(1)(x, y) || square(1)(x, y))
  check(rIoU >= 0.85, `the rasterised tracked mask's IoU ${rIoU.toFixed(3)} against frame 1's objects`)
  await page.mouse.move(5, 5)
  await shot('a6-raster')
  // The mask, tracked to frame 2 (the rasterised mask is selected once accepted).
  await page.keyboard.press('t')
  await ready(2)
  await proposal('track', 'mask tracked to frame 2')
  await page.keyboard.press('Enter')
  const tracked = await stored(2, (as) => masks(as)[0], 'tracked mask stored')
  await saved()
  const tIoU = iou(maskBits(tracked.mask), (x, y) => ellipse(2)(x, y) || square(2)(x, y))
  console.log(JSON.stringify({ check: 'tracked mask vs frame 2 objects', iou: +tIoU.toFixed(3) }))
  check(tIoU >= 0.85, `the tracked mask's IoU ${tIoU.toFixed(3)} against frame 2's objects`)
  // Intelligent scissors on frame 2: five clicks near the ellipse's edge
  // (2 px off it, inside and out), the last a double-click that closes the
  // outline; Enter accepts the polygon, which covers the ellipse.
  await page.keyboard.press('Escape') // deselect the tracked mask, so 1 picks a label
  await page.keyboard.press('1')
  await page.keyboard.press('i')
  const e2 = scene[2], at2 = await pxOf()
  const rim = (deg, off) => { const t = (deg * Math.PI) / 180; return at2(e2.cx + (e2.rx + off) * Math.cos(t), e2.cy + (e2.ry + off) * Math.sin(t)) }
  for (const [deg, off] of [[10, 2], [80, -2], [150, 2], [220, -2]]) await page.mouse.click(...rim(deg, off))
  const paints = +(await byTest('shape-canvas').getAttribute('data-scene-paints'))
  await page.mouse.move(...rim(260, 0), { steps: 3 }) // the live path follows the cursor
  check(+(await byTest('shape-canvas').getAttribute('data-wire-ms')) >= 0, 'the live path is traced as the cursor moves')
  // The frame's shapes are painted once for the draft and copied at each
  // move (a brushed 4K mask's raster cost 90 ms a move at load 30).
  await page.waitForFunction(() => document.querySelector('[data-testid=shape-canvas]').dataset.layered === '1')
  const repainted = +(await byTest('shape-canvas').getAttribute('data-scene-paints')) - paints
  check(repainted >= 0 && repainted <= 1, `the shapes under the scissors' live path painted ${repainted} times over 3 moves (at most once: then copied)`)
  await shot('a6d-scissors-live') // the live path over the copied shapes (the tile's mask)
  await page.mouse.dblclick(...rim(290, 2))
  p = await proposal('scissors', 'the scissors\' outline closed')
  await page.mouse.move(5, 5)
  await shot('a6c-scissors')
  await page.keyboard.press('Enter')
  const cut = await stored(2, (as) => as.find((a) => a.type === 'polygon' && a.label === 'ball'), 'the scissors\' polygon stored')
  await saved()
  const cutIoU = iou(polyBits(cut.polygon), ellipse(2))
  console.log(JSON.stringify({ check: 'scissors polygon vs the ellipse (5 clicks)', iou: +cutIoU.toFixed(3), vertices: cut.polygon[0].length / 2, panel: p.text }))
  check(+p.vertices === cut.polygon[0].length / 2, `the stored polygon has the ${p.vertices} vertices shown`)
  check(cutIoU >= 0.9, `the scissors' polygon's IoU ${cutIoU.toFixed(3)} >= 0.9`)

  // The model picker: the system default first, the registered box-seg answers when picked.
  await page.keyboard.press('s')
  const picker = byTest('segment-model')
  await picker.waitFor()
  const options = await picker.locator('option').allTextContents()
  check(options[0] === 'default-segmentation (system default)' && options.includes('box-seg'), 'picker options: ' + options)
  await picker.selectOption('box-seg')
  const at1 = await pxOf()
  await page.mouse.move(...at1(100, 100))
  await page.mouse.down()
  await page.mouse.move(...at1(200, 180), { steps: 4 })
  await page.mouse.up()
  p = await proposal('segment', 'box-seg answered')
  check(p.model === 'box-seg', 'the picked model answered: ' + p.text)
  await page.mouse.move(5, 5)
  await shot('a6b-model-picker')
  await page.keyboard.press('Escape')
  await page.keyboard.press('?')
  await byTest('help').waitFor()
  check((await byTest('help').textContent()).includes('magic wand') && (await byTest('help').textContent()).includes('intelligent scissors'), 'the help lists the assists')
  await shot('a7-help')
  console.log('assists: all checks passed')
} catch (e) {
  await shot('failure').catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await close()
}
