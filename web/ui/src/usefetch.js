import { useLayoutEffect, useState } from 'preact/hooks'

// useFetch runs get whenever deps change and keeps its last answer (null
// until the first, and after a failure). It asks from a layout effect, so
// the request leaves before the browser paints the change that caused it,
// together with the others of the same change, not a frame later.
//
// With together, its answer is shown with those of the other together
// fetches that one change started (the filter sidebar's sections): one
// repaint when the last arrives instead of one per answer.
//
// With keep, a failure keeps the last answer on screen (the sidebar's counts
// while the query has a parse error) instead of showing nothing.
export function useFetch(get, deps, { together = false, keep = false } = {}) {
  const [v, setV] = useState(null)
  useLayoutEffect(() => {
    let stop = false
    const asked = get()
    const group = together ? join(asked) : null
    const show = (x) => (group ? Promise.allSettled(group) : Promise.resolve()).then(() => !stop && setV(x))
    asked.then(show, () => (keep ? null : show(null)))
    return () => (stop = true)
  }, deps)
  return v
}

// A batch is the together fetches asked in one task (one change renders and
// runs its layout effects in one task); it closes at the task's end.
let batch = null

function join(asked) {
  if (!batch) {
    batch = []
    setTimeout(() => (batch = null))
  }
  batch.push(asked)
  return batch
}
