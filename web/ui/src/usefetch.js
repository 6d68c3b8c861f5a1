import { useEffect, useState } from 'preact/hooks'

// useFetch runs get whenever deps change and keeps its last answer (null
// until the first, and after a failure).
export function useFetch(get, deps) {
  const [v, setV] = useState(null)
  useEffect(() => {
    let stop = false
    get().then((x) => !stop && setV(x), () => !stop && setV(null))
    return () => (stop = true)
  }, deps)
  return v
}
