import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'

const LABELS = { type: 'Type', 'annotation.source': 'Annotations' }

// Facets is the filter sidebar: counts for the current query, and values
// that write the query when clicked (again to remove), so the bar and the
// sidebar never disagree.
export function Facets({ q, itemType, go, list }) {
  const [facets, setFacets] = useState(null)
  useEffect(() => {
    let stop = false
    api('/lake/facets?' + qs({ query: q, itemType })).then((f) => !stop && setFacets(f), () => !stop && setFacets(null))
    return () => (stop = true)
  }, [q, itemType, list]) // a new list (after an upload) is counted anew
  return (
    <aside class="facets">
      {facets && Object.entries(LABELS).map(([field, title]) => (
        <section>
          <h4>{title}</h4>
          {facets[field].map((v) => {
            const on = field === 'type' ? v.value === itemType : hasClause(q, v.clause)
            return (
              <button class={'facet' + (on ? ' on' : '')} data-testid="facet-value" data-field={field} data-value={v.value}
                onClick={() => go(field === 'type' ? { itemType: v.value } : { q: toggleClause(q, v.clause) })}>
                <span>{v.value}</span><span class="muted">{v.count.toLocaleString('en')}</span>
              </button>
            )
          })}
        </section>
      ))}
    </aside>
  )
}

const terms = (q) => q.split(/\s+AND\s+/i).map((t) => t.trim())

function hasClause(q, clause) {
  return terms(q).includes(clause)
}

// toggleClause ANDs clause to the query, or takes it out when it is one of
// the query's top-level terms; a query with OR is wrapped first.
export function toggleClause(q, clause) {
  q = q.trim()
  if (hasClause(q, clause)) return terms(q).filter((t) => t !== clause).join(' AND ')
  if (!q) return clause
  return (/\bOR\b/i.test(q) ? `(${q})` : q) + ' AND ' + clause
}
