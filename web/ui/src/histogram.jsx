import { useRef, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { DateInput } from './draftinput.jsx'
import { rangeOf, withRange } from './qtext.js'
import { useFetch } from './usefetch.js'

// FIELDS are the numeric fields the histogram shows, with how their values
// read and how a bound is written into the query.
const FIELDS = {
  width: { title: 'width', show: (v) => Math.round(v) + ' px', write: (v, up) => String(up ? Math.ceil(v) : Math.floor(v)) },
  height: { title: 'height', show: (v) => Math.round(v) + ' px', write: (v, up) => String(up ? Math.ceil(v) : Math.floor(v)) },
  fileSize: { title: 'file size', show: bytes, write: (v, up) => String(up ? Math.ceil(v) : Math.floor(v)) },
  'annotation.confidence': {
    title: 'box confidence', show: (v) => v.toFixed(2),
    write: (v, up) => String((up ? Math.ceil(v * 1000) : Math.floor(v * 1000)) / 1000),
  },
  createdAt: { title: 'created', show: (v) => minute(v).replace('T', ' '), write: (v, up) => minute(up ? Math.ceil(v / 60000) * 60000 : v) },
  'quality.sharpness': score('sharpness', 1),
  'quality.brightness': score('brightness', 1000),
  'quality.contrast': score('contrast', 1000),
  'quality.entropy': score('entropy', 100),
  'quality.aspect': score('aspect', 1000),
}

// score is a quality score's field, its bounds written to 1/per.
function score(name, per) {
  const digits = Math.round(Math.log10(per))
  return {
    title: name, show: (v) => v.toFixed(Math.max(digits, 1)),
    write: (v, up) => String((up ? Math.ceil(v * per) : Math.floor(v * per)) / per),
  }
}

function bytes(v) {
  const u = ['B', 'kB', 'MB', 'GB', 'TB']
  let i = 0
  while (v >= 1000 && i < u.length - 1) { v /= 1000; i++ }
  return (i ? v.toFixed(1) : Math.round(v)) + ' ' + u[i]
}

// minute writes unix milliseconds as the query's minute-precision date (UTC).
const minute = (ms) => new Date(ms).toISOString().slice(0, 16)

// Histogram shows a numeric field's distribution over the query's files
// (its own bounds left out of the query, so the whole spread shows); the
// bounds the query has are drawn over it, and a drag across bars (or a
// click on one) writes new bounds: field >= from AND field < to.
export function Histogram({ q, itemType, go, list }) {
  const [field, setField] = useState(() => sessionStorage.getItem('framelake.hist') || 'width')
  const F = FIELDS[field]
  const base = withRange(q, field, null, null)
  const answer = useFetch(() => api('/lake/histogram?' + qs({ field, query: base, itemType, bins: 24 })), [base, field, itemType, list], { together: true, keep: true })
  // Until the new field's answer comes, the last one is another field's:
  // its bars under this field's name and units would read wrong.
  const h = answer?.field === field ? answer : null
  const [drag, setDrag] = useState(null) // [first bin, last bin] while brushing
  const svg = useRef()
  const r = rangeOf(q, field)
  const pick = (field) => { setField(field); sessionStorage.setItem('framelake.hist', field) }

  const bins = h?.bins ?? []
  const top = Math.max(1, ...bins.map((b) => b.count))
  const W = 160, H = 60, bw = bins.length ? W / bins.length : W
  const binAt = (e) => {
    const box = svg.current.getBoundingClientRect()
    return Math.max(0, Math.min(bins.length - 1, Math.floor(((e.clientX - box.left) / box.width) * bins.length)))
  }
  const inQuery = (b) => (!r.lo || b.to > +fromQuery(field, r.lo.v)) && (!r.hi || b.from < +fromQuery(field, r.hi.v))
  const brushed = (i) => (drag ? i >= Math.min(...drag) && i <= Math.max(...drag) : (r.lo || r.hi) && inQuery(bins[i]))
  const write = ([a, b]) => {
    const [i, j] = [Math.min(a, b), Math.max(a, b)]
    const last = j === bins.length - 1
    const hi = last ? { v: F.write(bins[j].to + (field === 'createdAt' ? 1 : 0), true), op: field === 'createdAt' ? '<' : '<=' }
      : { v: F.write(bins[j].to, true), op: '<' }
    go({ q: withRange(q, field, { v: F.write(bins[i].from, false), op: '>=' }, hi) })
  }

  return (
    <section class="histogram" data-testid="histogram" data-field={field}>
      <h4>
        <select value={field} data-testid="histogram-field" onChange={(e) => pick(e.currentTarget.value)}>
          {Object.entries(FIELDS).map(([k, f]) => <option value={k}>{f.title}</option>)}
        </select>
        {(r.lo || r.hi) && <button class="ghost clear" data-testid="histogram-clear" title="remove the bounds"
          onClick={() => go({ q: withRange(q, field, null, null) })}>✕</button>}
        {h?.estimated && <span class="muted" data-testid="histogram-estimated"
          title={`estimated from the newest ${h.sampled.toLocaleString('en')} files`}> ≈</span>}
      </h4>
      {h && bins.length === 0 && <div class="muted">no values</div>}
      {bins.length > 0 && (
        <>
          <svg ref={svg} viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" data-testid="histogram-bars"
            onPointerDown={(e) => { e.currentTarget.setPointerCapture(e.pointerId); const i = binAt(e); setDrag([i, i]) }}
            onPointerMove={(e) => drag && setDrag([drag[0], binAt(e)])}
            onPointerUp={() => { if (drag) write(drag); setDrag(null) }}>
            {bins.map((b, i) => {
              const bh = b.count ? Math.max(1.5, (H * b.count) / top) : 0
              return <rect x={i * bw + 0.5} y={H - bh} width={Math.max(0.5, bw - 1)} height={bh} class={brushed(i) ? 'on' : ''}
                data-testid="histogram-bin" data-count={b.count}><title>{`${F.show(b.from)} – ${F.show(b.to)}: ${h.estimated ? '≈' : ''}${b.count}`}</title></rect>
            })}
          </svg>
          <div class="hist-axis muted"><span>{F.show(h.min)}</span><span>{F.show(h.max)}</span></div>
          {(r.lo || r.hi) && <div class="hist-range" data-testid="histogram-range">{r.lo ? `${r.lo.op} ${r.lo.v}` : ''} {r.hi ? `${r.hi.op} ${r.hi.v}` : ''}</div>}
        </>
      )}
    </section>
  )
}

// fromQuery reads a bound as the histogram's number (dates in milliseconds).
function fromQuery(field, v) {
  if (field !== 'createdAt') return parseFloat(v)
  const t = Date.parse(v.length <= 10 ? v : v + (/Z|[+-]\d\d:\d\d$/.test(v) ? '' : 'Z'))
  return isNaN(t) ? 0 : t
}

// DateRange is the createdAt bounds as two day pickers, read from and
// written to the query (createdAt >= day AND createdAt <= day, whole days).
export function DateRange({ q, go }) {
  const r = rangeOf(q, 'createdAt')
  const day = (b) => (b && /^\d{4}-\d\d-\d\d/.test(b.v) ? b.v.slice(0, 10) : '')
  const set = (lo, hi) => go({ q: withRange(q, 'createdAt', lo ? { v: lo, op: '>=' } : null, hi ? { v: hi, op: '<=' } : null) })
  return (
    <section class="dates">
      <h4>Created</h4>
      <label>from <DateInput value={day(r.lo)} data-testid="date-from" onCommit={(v) => set(v, day(r.hi))} /></label>
      <label>to <DateInput value={day(r.hi)} data-testid="date-to" onCommit={(v) => set(day(r.lo), v)} /></label>
    </section>
  )
}
