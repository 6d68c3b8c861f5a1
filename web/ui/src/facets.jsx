import { useState } from 'preact/hooks'
import { useFetch } from './usefetch.js'
import { api, qs } from './api.js'
import { chosen, hasTerm, toggleTerm, toggleValue, without } from './qtext.js'
import { DateRange, Histogram } from './histogram.jsx'
import { pure } from './pure.js'

const LABELS = { type: 'Type', 'annotation.source': 'Annotations' }
const SETS = { 'annotation.label': 'Labels', Tags: 'Tags', collection: 'Collections' }

// Facets is the filter sidebar: counts for the current query, and values
// that write the query when clicked (again to remove). What it shows as
// chosen is read from the query text (qtext.js), so the bar and the sidebar
// never disagree.
export const Facets = pure(function Facets({ q, itemType, go, list }) {
  // a new list (after an upload or a tagging) is counted anew
  const facets = useFetch(() => api('/lake/facets?' + qs({ query: q, itemType })), [q, itemType, list], { together: true })
  return (
    <aside class="facets">
      {facets && Object.entries(LABELS).map(([field, title]) => (
        <section>
          <h4 title={facets[field][0]?.estimated ? `estimated from the newest ${facets[field][0].sampled.toLocaleString('en')} files` : undefined}>
            {title}{facets[field][0]?.estimated ? ' ≈' : ''}
          </h4>
          {facets[field].map((v) => {
            const on = field === 'type' ? v.value === itemType : hasTerm(q, v.clause)
            return (
              <FacetButton field={field} value={v.value} count={v.count} on={on} about={v.estimated}
                onClick={() => go(field === 'type' ? { itemType: v.value } : { q: toggleTerm(q, v.clause) })} />
            )
          })}
        </section>
      ))}
      {Object.entries(SETS).map(([field, title]) => <SetFacet field={field} title={title} q={q} itemType={itemType} go={go} list={list} />)}
      <DateRange q={q} go={go} />
      <Histogram q={q} itemType={itemType} go={go} list={list} />
    </aside>
  )
})

function FacetButton({ field, value, count, on, onClick, about = false }) {
  return (
    <button class={'facet' + (on ? ' on' : '')} data-testid="facet-value" data-field={field} data-value={value} onClick={onClick}>
      <span class="facet-name">{value}</span>
      <span class="muted" data-testid="facet-count">{count == null ? '' : (about ? '≈' : '') + count.toLocaleString('en')}</span>
    </button>
  )
}

// SetFacet lists a set's values most common among the query's files, the
// field's own terms left out of the query so the values one may still add
// are counted; chosen values are those of the query's `field = v` or
// `field IN (...)` term, and a click adds or removes one.
function SetFacet({ field, title, q, itemType, go, list }) {
  const [limit, setLimit] = useState(10)
  const r = useFetch(() => api(`/lake/facets/${encodeURIComponent(field)}?` + qs({ query: without(q, field), itemType, limit })),
    [q, itemType, list, limit], { together: true })
  const on = chosen(q, field)
  if (!r) return null
  const shown = r.values.map((v) => v.value)
  const missing = on.filter((v) => !shown.includes(v)) // chosen, but past the list's end
  if (r.values.length === 0 && on.length === 0) return null
  return (
    <section data-testid="facet-section" data-field={field}>
      <h4 title={r.estimated ? `estimated from the newest ${r.sampled.toLocaleString('en')} files` : undefined}>{title}{r.estimated ? ' ≈' : ''}</h4>
      {[...r.values, ...missing.map((value) => ({ value }))].map((v) => (
        <FacetButton field={field} value={v.value} count={v.count} on={on.includes(v.value)} about={r.estimated}
          onClick={() => go({ q: toggleValue(q, field, v.value) })} />
      ))}
      {r.more && <button class="ghost more" onClick={() => setLimit(Math.min(200, limit * 5))}>more…</button>}
    </section>
  )
}
