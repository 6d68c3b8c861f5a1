import { fn } from './api.js'
import { Field, Link, evalPath, fig } from './evalkit.jsx'
import { EvalExamples } from './evalexamples.jsx'
import { navigate } from './router.js'
import { useFetch } from './usefetch.js'

// EvalCompare sets two evaluations side by side (compare_evaluations):
// overall figures, then per label both sides' AP, F1 and counts and which
// is better (the higher AP). The pair is in the address: ?a=KEY&b=KEY.
export function EvalCompare({ search }) {
  const p = new URLSearchParams(search)
  const a = p.get('a') || '', b = p.get('b') || ''
  const list = useFetch(() => fn('list_evaluations', {}).then((r) => r.evaluations.filter((e) => e.status === 'completed')), [])
  const cmp = useFetch(() => (a && b ? fn('compare_evaluations', { key_a: a, key_b: b }).catch((e) => ({ error: e })) : Promise.resolve(null)), [a, b])
  const pick = (side, key) => navigate('/evaluations/compare?' + new URLSearchParams({ a, b, [side]: key }), { replace: true })
  const Picker = ({ side, value }) => (
    <Field label={side === 'a' ? 'A' : 'B'}>
      <select data-testid={'compare-' + side} value={value} onChange={(e) => pick(side, e.currentTarget.value)}>
        <option value="">choose…</option>
        {(list ?? []).map((e) => <option value={e.key}>{e.key}</option>)}
      </select>
    </Field>
  )
  return (
    <div class="page eval-page">
      <h2>Compare evaluations</h2>
      <div class="eval-form"><Picker side="a" value={a} /><Picker side="b" value={b} /></div>
      {cmp?.error && <p class="error" role="alert">{cmp.error.message}</p>}
      {cmp && !cmp.error && <Comparison c={cmp} />}
    </div>
  )
}

function Comparison({ c }) {
  const A = c.key_a, B = c.key_b
  const side = (x, y) => (x > y ? 'better' : '')
  const wins = { [A]: 0, [B]: 0 }
  for (const l of c.labels) if (l.better) wins[l.better]++
  return (
    <>
      <table class="table eval-compare-summary">
        <thead><tr><th /><th>mAP</th><th>AP50</th><th>AP75</th><th>VOC AP50</th><th>labels better</th></tr></thead>
        <tbody>
          {[[A, c.a, c.b], [B, c.b, c.a]].map(([k, s, o]) => (
            <tr data-testid="compare-summary" data-key={k}>
              <td><Link to={evalPath(k)}>{k}</Link></td>
              {['mAP', 'AP50', 'AP75', 'VOC_AP50'].map((f) => <td class={side(s[f], o[f])}>{fig(s[f])}</td>)}
              <td>{wins[k]}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Per label</h3>
      <table class="table eval-compare">
        <thead>
          <tr><th>label</th><th>AP {A}</th><th>AP {B}</th><th>Δ AP</th><th>F1 {A}</th><th>F1 {B}</th><th>tp/fp/fn {A}</th><th>tp/fp/fn {B}</th><th>better</th></tr>
        </thead>
        <tbody>
          {c.labels.map((l) => {
            const ap = (x) => (x && x.AP >= 0 ? x.AP : null)
            const d = ap(l.a) != null && ap(l.b) != null ? ap(l.b) - ap(l.a) : null
            return (
              <tr data-testid="compare-row" data-label={l.label} data-better={l.better}>
                <td>{l.label}</td>
                <td class={l.better === A ? 'better' : ''}>{fig(l.a?.AP)}</td>
                <td class={l.better === B ? 'better' : ''}>{fig(l.b?.AP)}</td>
                <td class={d > 0 ? 'up' : d < 0 ? 'down' : 'muted'}>{d == null ? '–' : (d > 0 ? '+' : '') + d.toFixed(3)}</td>
                <td>{fig(l.a?.f1)}</td><td>{fig(l.b?.f1)}</td>
                <td class="muted">{l.a ? `${l.a.tp}/${l.a.fp}/${l.a.fn}` : 'absent'}</td>
                <td class="muted">{l.b ? `${l.b.tp}/${l.b.fp}/${l.b.fn}` : 'absent'}</td>
                <td>{l.better ? <b>{l.better}</b> : <span class="muted">{d == null ? '–' : 'tie'}</span>}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
      {[A, B].map((k) => (
        <>
          <h3>Examples of {k}</h3>
          <EvalExamples evKey={k} testid={'compare-examples-' + (k === A ? 'a' : 'b')} />
        </>
      ))}
    </>
  )
}
