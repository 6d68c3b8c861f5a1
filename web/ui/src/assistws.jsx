import { useEffect, useRef, useState } from 'preact/hooks'
import { framePixels, outline, rasterise, segment, segmentationModels, shapeBox, shifted, trackShift } from './assist.js'
import { newKey } from './frameio.js'
import { encodeBits } from './rle.js'
import { maskPath } from './shapes.jsx'
import { wandMask } from './wand.js'

// useAssists holds the workspace's assist proposal: a shape the annotator
// has not accepted yet, drawn over the frame (draw.js) until Enter accepts it
// (saved as any edit, on the frame's version) or Esc drops it. Kinds:
//   segment  a box (and clicks) sent to POST /assist/segment: the model's best mask
//   wand     colour regions grown in the browser from clicks (Shift-click adds one)
//   outline  the selected mask's polygon from POST /assist/polygon at a tolerance
//   raster   the selected polygon filled as a mask, in the browser
//   track    the selected polygon or mask moved onto the next frame by the
//            motion template matching finds there
//   scissors the polygon the intelligent scissors closed (draw.js, scissors.js)
// A proposal belongs to one frame (proposal.frame) and is drawn there only.
export function useAssists({ ws, cur, idx, boxes, selected, selIndex, label, commit, goFrame, setNote }) {
  const [proposal, setProposal] = useState(null)
  const [models, setModels] = useState([])
  const [model, setModel] = useState('') // '' = the system default
  const [wandTol, setWandTol] = useState(32)
  const [polyTol, setPolyTol] = useState(1.5)
  const seq = useRef(0) // answers to an older request are dropped
  const live = useRef(null)
  live.current = proposal

  useEffect(() => { segmentationModels().then(setModels) }, [])
  useEffect(() => { setProposal((p) => (p && p.frame === cur?.uniqueName ? p : null)) }, [cur?.uniqueName])

  const fail = (e) => { setNote(e.message); setProposal((p) => p && { ...p, busy: false, error: e.message }) }
  const asMask = (mask) => ({ key: newKey(), label, attributes: {}, source: 'human', type: 'mask', mask })

  // runSegment sends the box and every click so far; the answer's best mask
  // becomes the proposal. t0 is the mouse-up, for the "mask shown" time.
  const runSegment = (pr) => {
    const n = ++seq.current
    const t0 = performance.now()
    setProposal({ ...pr, busy: true, t0 })
    segment({ uniqueName: cur.uniqueName, frame: cur.frame, box: pr.box ?? [], points: pr.points, model }).then((r) => {
      if (n !== seq.current) return
      if (!r.masks?.length) return fail(new Error(`${r.model} found no mask`))
      const mask = r.masks[0].mask
      maskPath(mask) // decoded before it is drawn
      setProposal({ ...pr, busy: false, t0, shape: asMask(mask), model: r.model, score: r.masks[0].score, serverMs: r.ms,
        answerMs: performance.now() - t0 })
    }, (e) => { if (n === seq.current) fail(e) })
  }

  const runWand = async (pr) => {
    const n = ++seq.current
    setProposal({ ...pr, busy: true })
    try {
      const t0 = performance.now()
      const px = await framePixels(cur.url, cur.width, cur.height)
      const bits = wandMask(px, pr.seeds, pr.tol)
      let area = 0
      for (let i = 0; i < bits.length; i++) area += bits[i]
      const mask = encodeBits(bits, cur.width, cur.height)
      maskPath(mask)
      if (n === seq.current) setProposal({ ...pr, busy: false, shape: asMask(mask), area, answerMs: performance.now() - t0 })
    } catch (e) { if (n === seq.current) fail(e) }
  }

  const runOutline = (pr) => {
    const n = ++seq.current
    setProposal({ ...pr, busy: true })
    outline(pr.from.mask, pr.tol).then((r) => {
      if (n !== seq.current) return
      if (!r.polygon.length) return fail(new Error('the mask has no outline at this tolerance'))
      setProposal({ ...pr, busy: false, vertices: r.vertices,
        shape: { key: newKey(), label: pr.from.label, attributes: pr.from.attributes, source: 'human', type: 'polygon', polygon: r.polygon } })
    }, (e) => { if (n === seq.current) fail(e) })
  }

  // onAssist takes the editor's gestures (draw.js) for the segment and wand tools.
  const onAssist = (a) => {
    const p = live.current?.frame === cur.uniqueName ? live.current : null
    if (a.kind === 'segment-box') runSegment({ kind: 'segment', frame: cur.uniqueName, box: a.box, points: [] })
    else if (a.kind === 'segment-point') {
      const base = p?.kind === 'segment' ? p : { kind: 'segment', frame: cur.uniqueName, box: null, points: [] }
      if (!base.box && !base.points.length && a.label === 0) return setNote('a negative click refines a mask: drag a box or click the object first')
      runSegment({ ...base, points: [...base.points, { x: a.p.x, y: a.p.y, label: a.label }] })
    } else if (a.kind === 'scissors') {
      const vertices = a.polygon.reduce((n, r) => n + r.length / 2, 0)
      setProposal({ kind: 'scissors', frame: cur.uniqueName, vertices,
        shape: { key: newKey(), label, attributes: {}, source: 'human', type: 'polygon', polygon: a.polygon } })
    } else if (a.kind === 'wand') {
      const seeds = a.add && p?.kind === 'wand' ? [...p.seeds, a.p] : [a.p]
      runWand({ kind: 'wand', frame: cur.uniqueName, seeds, tol: wandTol })
    }
  }

  const setWand = (t) => {
    setWandTol(t)
    const p = live.current
    if (p?.kind === 'wand') runWand({ ...p, tol: t })
  }
  const setOutlineTol = (t) => {
    setPolyTol(t)
    const p = live.current
    if (p?.kind === 'outline') runOutline({ ...p, tol: t })
  }

  // convert proposes the selected mask as a polygon, or the selected polygon as a mask.
  const convert = () => {
    if (selected?.type === 'mask') runOutline({ kind: 'outline', frame: cur.uniqueName, from: selected, replace: selIndex, tol: polyTol })
    else if (selected?.type === 'polygon') {
      const mask = rasterise(selected.polygon, cur.width, cur.height)
      maskPath(mask)
      setProposal({ kind: 'raster', frame: cur.uniqueName, replace: selIndex,
        shape: { key: newKey(), label: selected.label, attributes: selected.attributes, source: 'human', type: 'mask', mask } })
    } else return false
    return true
  }

  // track moves the selected polygon or mask onto the next frame by the
  // motion of its box's region, and opens that frame with it proposed.
  const track = async () => {
    const next = ws.frames[idx + 1]
    if (!next || (selected?.type !== 'polygon' && selected?.type !== 'mask')) return false
    const from = selected
    setNote('tracking…')
    try {
      const t0 = performance.now()
      const [a, c] = await Promise.all([framePixels(cur.url, cur.width, cur.height), framePixels(next.url, next.width, next.height)])
      const b = shapeBox(from)
      if (!b) throw new Error('the shape is empty')
      const m = trackShift(a, c, b)
      const moved = shifted({ ...from, key: newKey(), source: 'human' }, m.dx, m.dy)
      if (moved.type === 'mask') maskPath(moved.mask)
      delete moved.x; delete moved.y; delete moved.width; delete moved.height; delete moved._bits; delete moved.id
      setProposal({ kind: 'track', frame: next.uniqueName, shape: moved, dx: m.dx, dy: m.dy, score: m.score, answerMs: performance.now() - t0 })
      setNote('')
      goFrame(idx + 1)
    } catch (e) { setNote('not tracked: ' + e.message) }
    return true
  }

  // accept makes the proposal the frame's (replacing the shape it came from).
  const accept = () => {
    const p = live.current
    if (!p || p.frame !== cur.uniqueName || !p.shape || p.busy) return !!p
    setProposal(null)
    if (p.replace != null && boxes[p.replace]) commit(boxes.map((b, i) => (i === p.replace ? p.shape : b)), p.replace)
    else commit([...boxes, { ...p.shape, label: p.kind === 'track' ? p.shape.label : label ?? p.shape.label }], boxes.length)
    return true
  }
  const drop = () => { if (!live.current) return false; seq.current++; setProposal(null); return true }

  return { proposal, models, model, setModel, wandTol, setWand, polyTol, setOutlineTol, onAssist, convert, track, accept, drop }
}

const KIND = { segment: 'box to mask', wand: 'magic wand', outline: 'mask to polygon', raster: 'polygon to mask', track: 'tracked from the last frame',
  scissors: 'intelligent scissors' }

// AssistPanel is the side panel of the assists: the segmentation model, the
// wand's and the outline's tolerances, the proposal's state (who answered,
// how fast, how many vertices) and its Accept and Drop.
export function AssistPanel({ as, tool, selected, hasNext }) {
  const p = as.proposal
  const others = as.models.filter((m) => !m.systemDefault)
  const convertible = selected?.type === 'mask' || selected?.type === 'polygon'
  if (!p && tool !== 'segment' && tool !== 'wand' && tool !== 'scissors' && !convertible) return null
  return (
    <div class="assists" data-testid="assists">
      <h3>Assists</h3>
      {tool === 'segment' && <p class="muted">drag a box around the object; click adds, Alt- or right-click removes</p>}
      {tool === 'segment' && others.length > 0 && (
        <label class="muted model-pick">model <select data-testid="segment-model" value={as.model} onChange={(e) => as.setModel(e.currentTarget.value)}>
          <option value="">{as.models.find((m) => m.systemDefault)?.modelName ?? 'default'} (system default)</option>
          {others.map((m) => <option value={m.modelName}>{m.modelName}</option>)}
        </select></label>
      )}
      {tool === 'scissors' && <p class="muted">click anchors around the object: the edge from the last one follows the image to the cursor; double-click or Enter closes</p>}
      {tool === 'wand' && (
        <label class="muted">colour tolerance {as.wandTol} ([ ])
          <input type="range" min="0" max="128" step="1" data-testid="wand-tolerance" value={as.wandTol} onInput={(e) => as.setWand(+e.currentTarget.value)} /></label>
      )}
      {convertible && !p && <button class="ghost" data-testid="assist-convert" onClick={as.convert}><kbd>o</kbd> to {selected.type === 'mask' ? 'polygon' : 'mask'}</button>}
      {convertible && !p && hasNext && <button class="ghost" data-testid="assist-track" onClick={as.track}><kbd>t</kbd> track to next frame</button>}
      {p?.kind === 'outline' && (
        <label class="muted">simplify {p.tol} px ([ ])
          <input type="range" min="0" max="20" step="0.5" data-testid="outline-tolerance" value={p.tol} onInput={(e) => as.setOutlineTol(+e.currentTarget.value)} /></label>
      )}
      {p && (
        <div class="assist-state" data-testid="assist-state" data-kind={p.kind} data-busy={p.busy ? '1' : '0'} data-ready={p.shape && !p.busy ? '1' : '0'}
          data-model={p.model ?? ''} data-vertices={p.vertices ?? ''}>
          <strong>{KIND[p.kind]}</strong>{' '}
          {p.busy ? <span class="muted">working…</span> : p.error ? <span class="attr-error">{p.error}</span> : (
            <span class="muted">
              {p.kind === 'segment' && `${p.model} · ${Math.round(p.answerMs)} ms (server ${Math.round(p.serverMs)}) · score ${p.score?.toFixed(2)} · ${p.points.length} clicks`}
              {p.kind === 'wand' && `${p.seeds.length} ${p.seeds.length === 1 ? 'region' : 'regions'} · ${p.area} px · ${Math.round(p.answerMs)} ms`}
              {p.kind === 'outline' && <span data-testid="outline-vertices">{p.vertices} vertices</span>}
              {p.kind === 'scissors' && `${p.vertices} vertices`}
              {p.kind === 'track' && `moved ${p.dx}, ${p.dy} px · match ${p.score.toFixed(2)} · ${Math.round(p.answerMs)} ms`}
            </span>
          )}
          <div>
            <button data-testid="assist-accept" disabled={!p.shape || p.busy} onClick={as.accept}>Accept (Enter)</button>
            <button class="ghost" data-testid="assist-drop" onClick={as.drop}>Drop (Esc)</button>
          </div>
        </div>
      )}
    </div>
  )
}
