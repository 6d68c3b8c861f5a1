import { useEffect, useState } from 'preact/hooks'
import { api, fn, qs } from './api.js'
import { ShapeLayer, skeletonsOf } from './shapes.jsx'
import { Link, gridFor } from './evalkit.jsx'

// An evaluation's examples: a few files with a kind of outcome, each drawn
// with the shapes the evaluation judged on it (every type: boxes, polygons,
// masks, keypoints with their skeleton), coloured by outcome, so a mistake
// is seen and not only counted. The files come from the lake's per-file
// counts (eval.<key>.fp > 0), their outcomes from get_evaluation with
// unique_name, their shapes from the file's annotations.

export const OUTCOME_COLORS = { tp: '#3ddc84', fp: '#ff6b6b', fn: '#ffd43b', ignored: '#8a8f98' }
const KINDS = [['fp', 'false positives'], ['fn', 'misses'], ['tp', 'matches']]
const SHOWN = 6 // files an example row shows
const CELL = 220 // px a file's thumbnail takes across

export function EvalExamples({ evKey, testid = 'eval-examples' }) {
  const [kind, setKind] = useState('fp')
  const [files, setFiles] = useState(null)
  const [error, setError] = useState(null)
  const query = `eval.${evKey}.${kind} > 0`
  useEffect(() => {
    let live = true
    setFiles(null)
    setError(null)
    api('/lake/items?' + qs({ query, pageSize: SHOWN, thumbSize: 256 }))
      .then((r) => Promise.all(r.items.map((it) => judged(evKey, it))))
      .then((fs) => live && setFiles(fs), (e) => live && setError(e))
    return () => { live = false }
  }, [evKey, kind])
  return (
    <div class="eval-examples" data-testid={testid} data-kind={kind}>
      <div class="eval-example-kinds">
        {KINDS.map(([k, name]) => (
          <button class={'ghost' + (k === kind ? ' on' : '')} data-testid="eval-example-kind" data-kind={k} onClick={() => setKind(k)}>{name}</button>
        ))}
        <span class="muted">
          {Object.entries(OUTCOME_COLORS).map(([k, c]) => <span class="eval-legend"><span class="swatch" style={{ background: c }} />{k}</span>)}
          {' · '}<Link to={gridFor(query)}>all in the grid</Link>
        </span>
      </div>
      {error && <p class="error" role="alert">{error.message}</p>}
      {files?.length === 0 && <p class="muted">No file has such an outcome.</p>}
      <div class="eval-example-row">{(files ?? []).map((f) => <Example f={f} />)}</div>
    </div>
  )
}

// judged is a listed file with the shapes its evaluation judged, each
// coloured by its outcome.
async function judged(key, it) {
  const [ev, anns] = await Promise.all([
    fn('get_evaluation', { key, unique_name: it.uniqueName }),
    api('/lake/files/' + encodeURIComponent(it.uniqueName) + '/annotations'),
  ])
  const outcome = new Map(ev.boxes.map((b) => [b.id, b.outcome]))
  const shapes = anns.annotations.filter((a) => outcome.has(a.id) && a.frame === 0)
    .map((a) => ({ ...a, outcome: outcome.get(a.id), color: OUTCOME_COLORS[outcome.get(a.id)] }))
  return { ...it, shapes }
}

function Example({ f }) {
  const k = Math.min(CELL / (f.width || CELL), CELL / (f.height || CELL))
  const count = (o) => f.shapes.filter((a) => a.outcome === o).length
  const href = '/items/' + encodeURIComponent(f.uniqueName)
  return (
    <Link to={href} class="eval-example" data-testid="eval-example" data-unique-name={f.uniqueName}
      title={`${f.name}: ${['tp', 'fp', 'fn'].map((o) => `${count(o)} ${o}`).join(', ')}`}>
      <span class="eval-example-frame" style={{ width: (f.width || CELL) * k + 'px', height: (f.height || CELL) * k + 'px' }}>
        {f.thumbUrl && <img src={f.thumbUrl} alt="" draggable={false} />}
        <ShapeLayer shapes={f.shapes} width={f.width} height={f.height} withBoxes skeletonOf={skeletonsOf(f.skeletons)} testid="eval-example-shapes" />
      </span>
      <span class="cell-name">{f.name} <span class="muted">{count('tp')} tp · {count('fp')} fp · {count('fn')} fn</span></span>
    </Link>
  )
}
