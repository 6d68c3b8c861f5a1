import { useLayoutEffect, useState } from 'preact/hooks'

// useFetch runs get whenever deps change and keeps its last answer (null
// until the first, and after a failure). It asks from a layout effect, so
// the request leaves before the browser paints the change that caused it,
// together with the others of the same change, not a frame later.
export function useFetch(get, deps) {
  const [v, setV] = useState(null)
  useLayoutEffect(() => {
    let stop = false
    get().then((x) => !stop && setV(x), () => !stop && setV(null))
    return () => (stop = true)
  }, deps)
  return v
}
