import { useState } from 'preact/hooks'
import { useFetch } from './usefetch.js'
import { api, qs } from './api.js'
import { chosen, hasTerm, ownTerms, toggleTerm, toggleValue } from './qtext.js'
import { DateRange, Histogram } from './histogram.jsx'
import { pure } from './pure.js'

const LABELS = { type: 'Type', 'annotation.source': 'Annotations', 'annotation.type': 'Shapes' }
const SETS = { 'annotation.label': 'Labels', Tags: 'Tags', collection: 'Collections' }

// Facets is the filter sidebar: counts for the current query, and values
// that write the query when clicked (again to remove). What it shows as
// chosen is read from the query text (qtext.js), so the bar and the sidebar
// never disagree.
//
// While the query has an error (stale), the sections keep their last counts,
// greyed and not clickable, so the page neither empties nor changes shape.
export const Facets = pure(function Facets({ q, itemType, go, list, stale }) {
  // a new list (after an upload or a tagging) is counted anew
  const facets = useFetch(() => api('/lake/facets?' + qs({ query: q, itemType })), [q, itemType, list], { together: true, keep: true })
  return (
    <aside class={'facets' + (stale ? ' stale' : '')} data-testid="facets" data-stale={stale ? 'true' : 'false'}
      title={stale ? 'the counts of the last query that ran: this one has an error' : undefined}>
      {facets && Object.entries(LABELS).filter(([field]) => shown(facets[field], field, q).length > 0).map(([field, title]) => (
        <section>
          <h4 title={facets[field][0]?.estimated ? `estimated from the newest ${facets[field][0].sampled.toLocaleString('en')} files` : undefined}>
            {title}{facets[field][0]?.estimated ? ' ≈' : ''}
          </h4>
          {shown(facets[field], field, q).map((v) => {
            const on = field === 'type' ? v.value === itemType : hasTerm(q, v.clause)
            return (
              <FacetButton field={field} value={v.value} count={v.count} on={on} about={v.estimated}
                shapes={v.annotations}
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

// shown is a section's values: a shape type no file of the selection has is
// left out, unless the query asks for it, so a lake without shapes shows no
// Shapes section.
function shown(values = [], field, q) {
  return field === 'annotation.type' ? values.filter((v) => v.count || hasTerm(q, v.clause)) : values
}

// FacetButton is one value and its count of files; shapes, when given, is
// how many annotations of the value those files hold (the Shapes section).
function FacetButton({ field, value, count, on, onClick, about = false, shapes }) {
  const files = count == null ? '' : (about ? '≈' : '') + count.toLocaleString('en')
  return (
    <button class={'facet' + (on ? ' on' : '')} data-testid="facet-value" data-field={field} data-value={value} onClick={onClick}
      data-shapes={shapes} title={shapes == null ? undefined : `${files} files with ${(about ? '≈' : '') + shapes.toLocaleString('en')} ${value} annotations`}>
      <span class="facet-name">{value}</span>
      {shapes != null && <span class="muted facet-shapes" data-testid="facet-shapes">{shapes.toLocaleString('en')} {shapes === 1 ? 'shape' : 'shapes'}</span>}
      <span class="muted" data-testid="facet-count">{files}</span>
    </button>
  )
}

// SetFacet lists a set's values most common among the query's files, the
// field's own terms left out of the query (by the server, disjunctive=true)
// so the values one may still add are counted; chosen values are those of the query's `field = v` or
// `field IN (...)` term, and a click adds or removes one.
function SetFacet({ field, title, q, itemType, go, list }) {
  const [limit, setLimit] = useState(10)
  // disjunctive: the server leaves the field's own terms out and says which (ignored), so the page and the
  // API count alike
  const r = useFetch(() => api(`/lake/facets/${encodeURIComponent(field)}?` + qs({ query: q, disjunctive: true, itemType, limit })),
    [q, itemType, list, limit], { together: true, keep: true })
  const on = chosen(q, field)
  if (!r) return null
  const shown = r.values.map((v) => v.value)
  const missing = on.filter((v) => !shown.includes(v)) // chosen, but past the list's end
  if (r.values.length === 0 && on.length === 0) return null
  // Which clause these counts leave out: the server's word (ignored), else (a server from before it
  // said) the field's own terms as the page reads them.
  const left = r.ignored ? r.ignored.join(' AND ') : ownTerms(q, field)
  return (
    <section data-testid="facet-section" data-field={field}>
      <h4 title={r.estimated ? `estimated from the newest ${r.sampled.toLocaleString('en')} files` : undefined}>{title}{r.estimated ? ' ≈' : ''}</h4>
      {left && (
        <p class="facet-note" data-testid="facet-note" data-field={field} data-ignores={left}
          title={`Counted for the query without ${left}, so the values you may still add show how many files they would bring.`}>
          counts ignore {left}
        </p>
      )}
      {[...r.values, ...missing.map((value) => ({ value }))].map((v) => (
        <FacetButton field={field} value={v.value} count={v.count} on={on.includes(v.value)} about={r.estimated}
          onClick={() => go({ q: toggleValue(q, field, v.value) })} />
      ))}
      {r.more && <button class="ghost more" onClick={() => setLimit(Math.min(200, limit * 5))}>more…</button>}
    </section>
  )
}
