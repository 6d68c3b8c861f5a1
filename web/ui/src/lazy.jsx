import { useEffect, useState } from 'preact/hooks'

// MapPage loads the embedding map's code (WebGL scatter plot included) when
// the map is first opened, so the grid's first paint does not wait for it.
export function MapPage(props) {
  const [Page, setPage] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    import('./map.jsx').then((m) => setPage(() => m.MapPage), setError)
  }, [])
  if (error) return <div class="error" role="alert">{error.message}</div>
  return Page ? <Page {...props} /> : <div class="loading-page">Loading…</div>
}
