import { fn } from './api.js'
import { Link, fig, gridFor, quote } from './evalkit.jsx'
import { EvalExamples } from './evalexamples.jsx'
import { over } from './evaluations.jsx'
import { navigate } from './router.js'
import { useFetch } from './usefetch.js'

const BG = 'background'

// queries turns an evaluation's mistakes into grid queries. The lake keeps
// each file's tp, fp and fn counts (eval.<key>.*), not per label, so a
// label's or a cell's query is the files with such an outcome that hold a
// box of that label on the matching side: what to look at, a superset when
// a file has several labels.
function queries(ev) {
  const k = 'eval.' + ev.key
  const ops = ev.params.gt_operations ?? []
  const human = (l) => `annotation(label = ${quote(l)} AND source = human${ops.length ? ` AND operation IN (${ops.map(quote).join(', ')})` : ''})`
  const machine = (l) => `annotation(label = ${quote(l)} AND source = machine AND operation = ${quote(ev.params.pred_run_id)})`
  return {
    tp: (l) => `${k}.tp > 0 AND ${human(l)}`,
    fp: (l) => `${k}.fp > 0 AND ${machine(l)}`,
    fn: (l) => `${k}.fn > 0 AND ${human(l)}`,
    cell: (row, col) => {
      if (row === BG) return `${k}.fp > 0 AND ${machine(col)}`
      if (col === BG) return `${k}.fn > 0 AND ${human(row)}`
      if (row === col) return `${k}.tp > 0 AND ${human(row)} AND ${machine(col)}`
      return `${k}.fp > 0 AND ${k}.fn > 0 AND ${human(row)} AND ${machine(col)}`
    },
  }
}

// Evaluation shows one evaluation (get_evaluation): its COCO and VOC
// figures, the per-label table, each label's PR curve and the confusion
// matrix; a count of mistakes opens the grid on the files that have them.
export function Evaluation({ id }) {
  const ev = useFetch(() => fn('get_evaluation', { key: id }).catch((e) => ({ error: e })), [id])
  if (!ev) return <div class="loading-page">Loading…</div>
  if (ev.error) return <div class="error" role="alert">{ev.error.message}</div>
  const q = queries(ev)
  const labels = Object.keys(ev.labels).sort()
  const open = (query) => navigate(gridFor(query))
  return (
    <div class="page eval-page" data-testid="evaluation" data-key={ev.key}>
      <h2>Evaluation {ev.key} <span class="muted">run {ev.params.pred_run_id} · IoU {ev.params.iou} · {over(ev.params)}</span></h2>
      <div class="stats eval-stats">
        <Figure name="mAP" v={ev.mAP} id="eval-map" />
        <Figure name="AP50" v={ev.AP50} />
        <Figure name="AP75" v={ev.AP75} />
        <Figure name="VOC AP50" v={ev.VOC_AP50} />
        <Figure name="small" v={ev.mAP_small} />
        <Figure name="medium" v={ev.mAP_medium} />
        <Figure name="large" v={ev.mAP_large} />
        <Figure name="AR100" v={ev.AR100} />
      </div>
      <p>
        <Link to={gridFor(`eval.${ev.key}.fp > 0`)} data-testid="eval-all-fp">files with false positives</Link>{' · '}
        <Link to={gridFor(`eval.${ev.key}.fn > 0`)} data-testid="eval-all-fn">files with misses</Link>{' · '}
        <Link to={'/evaluations/compare?' + new URLSearchParams({ a: ev.key })}>compare with…</Link>
      </p>
      <h3>Per label <span class="muted">(precision, recall and F1 at IoU {ev.params.iou}{ev.params.confidence ? `, confidence ≥ ${ev.params.confidence}` : ''})</span></h3>
      <table class="table eval-labels">
        <thead><tr><th>label</th><th>AP</th><th>AP50</th><th>VOC AP50</th><th>precision</th><th>recall</th><th>F1</th><th>tp</th><th>fp</th><th>fn</th></tr></thead>
        <tbody>
          {labels.map((l) => {
            const m = ev.labels[l]
            return (
              <tr data-testid="eval-label-row" data-label={l}>
                <td>{l}</td><td>{fig(m.AP)}</td><td>{fig(m.AP50)}</td><td>{fig(m.VOC_AP50)}</td>
                <td>{fig(m.precision)}</td><td>{fig(m.recall)}</td><td>{fig(m.f1)}</td>
                <td><Count n={m.tp} testid="eval-tp" onClick={() => open(q.tp(l))} /></td>
                <td><Count n={m.fp} testid="eval-fp" onClick={() => open(q.fp(l))} /></td>
                <td><Count n={m.fn} testid="eval-fn" onClick={() => open(q.fn(l))} /></td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <h3>Examples <span class="muted">(files with such an outcome, every shape judged on them drawn by its outcome)</span></h3>
      <EvalExamples evKey={ev.key} />
      <h3>Precision–recall <span class="muted">(COCO, IoU 0.50, 101 recall points)</span></h3>
      <div class="pr-curves">{labels.map((l) => <PRCurve label={l} curve={ev.pr?.[l]} ap={ev.labels[l].AP50} />)}</div>
      <h3>Confusion <span class="muted">(rows: human labels, columns: predicted; click a count for its files)</span></h3>
      <Confusion c={ev.confusion} onOpen={(r, c) => open(q.cell(r, c))} />
      <p class="muted confusion-note" data-testid="confusion-note">
        Counts are boxes. A count opens the files that hold such a mistake and a box of each label on its side; a
        file with several labels can be among them for another of its boxes, so the grid may show more files than
        the cell counts.
      </p>
    </div>
  )
}

const Figure = ({ name, v, id }) => (
  <div class="stat" data-testid={id} data-value={v}><b>{fig(v)}</b><span class="muted">{name}</span></div>
)

function Count({ n, testid, onClick }) {
  if (!n) return <span class="muted">0</span>
  return <button class="link-button" data-testid={testid} data-count={n} onClick={onClick}>{n}</button>
}

// PRCurve draws a label's precision against recall as SVG (recall right,
// precision up); points with no precision (-1) are left out.
export function PRCurve({ label, curve, ap }) {
  const W = 180, H = 130, P = 24
  const x = (r) => P + r * (W - P - 6)
  const y = (p) => H - P - p * (H - P - 6)
  const pts = (curve?.recall ?? []).map((r, i) => [r, curve.precision[i]]).filter(([, p]) => p >= 0)
  return (
    <figure class="pr-curve" data-testid="pr-curve" data-label={label} data-points={pts.length}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={`precision-recall of ${label}`}>
        <rect x={x(0)} y={y(1)} width={x(1) - x(0)} height={y(0) - y(1)} class="pr-frame" />
        {[0.25, 0.5, 0.75].map((t) => <line class="pr-grid" x1={x(t)} x2={x(t)} y1={y(0)} y2={y(1)} />)}
        {[0.25, 0.5, 0.75].map((t) => <line class="pr-grid" x1={x(0)} x2={x(1)} y1={y(t)} y2={y(t)} />)}
        {pts.length > 0 && <polyline class="pr-line" points={pts.map(([r, p]) => `${x(r).toFixed(1)},${y(p).toFixed(1)}`).join(' ')} />}
        <text x={x(0)} y={H - 8} class="pr-axis">0</text>
        <text x={x(1)} y={H - 8} class="pr-axis" text-anchor="end">recall 1</text>
        <text x={4} y={y(1) + 8} class="pr-axis">1</text>
      </svg>
      <figcaption>{label} <span class="muted">AP50 {fig(ap)}</span></figcaption>
    </figure>
  )
}

// Confusion is the matrix as a table, background last; a cell's shade is
// its share of its row, the diagonal green, mistakes red.
function Confusion({ c, onOpen }) {
  if (!c?.labels?.length) return <p class="muted">Nothing was judged.</p>
  return (
    <table class="confusion" data-testid="confusion">
      <thead><tr><th class="corner">human ↓ · predicted →</th>{c.labels.map((l) => <th>{l}</th>)}</tr></thead>
      <tbody>
        {c.matrix.map((row, i) => {
          const sum = row.reduce((a, b) => a + b, 0) || 1
          return (
            <tr>
              <th>{c.labels[i]}</th>
              {row.map((n, j) => {
                const hit = i === j && c.labels[i] !== BG
                const style = n ? `background: rgba(${hit ? '61,220,132' : '255,107,107'},${(0.15 + 0.6 * n / sum).toFixed(2)})` : ''
                return (
                  <td class="cell-count" style={style} data-testid="confusion-cell" data-row={c.labels[i]} data-col={c.labels[j]} data-count={n}>
                    {n ? <button class="link-button" onClick={() => onOpen(c.labels[i], c.labels[j])}>{n}</button> : <span class="muted">0</span>}
                  </td>
                )
              })}
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}
