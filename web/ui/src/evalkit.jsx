import { useEffect } from 'preact/hooks'
import { JobRow, usePolled } from './jobs.jsx'
import { navigate } from './router.js'

// What the evaluation and label-next pages share: links, figures, the grid
// address of a query, and a started job's live row.

export function Link({ to, children, ...rest }) {
  return <a href={to} onClick={(e) => { e.preventDefault(); navigate(to) }} {...rest}>{children}</a>
}

// fig shows a figure to three places; -1 (nothing to measure) is a dash.
export const fig = (v) => (v == null || v < 0 ? '–' : v.toFixed(3))

// quote writes a value as the query language's double-quoted string.
export const quote = (v) => '"' + String(v).replace(/[\\"]/g, (c) => '\\' + c) + '"'

// gridFor is the grid's address listing the files a query selects.
export const gridFor = (q) => '/?' + new URLSearchParams({ q })

export const evalPath = (key) => '/evaluations/' + encodeURIComponent(key)

const live = (j) => j.status === 'queued' || j.status === 'running'

// JobWatch is a started job's row with its progress, polled every second
// while it runs; onEnd gets the job once it has ended.
export function JobWatch({ id, me, onEnd }) {
  const { data: j, error, reload } = usePolled('/jobs/' + encodeURIComponent(id), live)
  const ended = j && !live(j)
  useEffect(() => { if (ended) onEnd?.(j) }, [ended, id])
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!j) return null
  return (
    <div class="eval-job">
      <table class="table"><tbody><JobRow job={j} me={me} onChange={reload} /></tbody></table>
      {j.error && <p class="error">{j.error}</p>}
    </div>
  )
}

// Field is a labelled form control.
export const Field = ({ label, children, hint }) => (
  <label class="eval-field"><span>{label}</span>{children}{hint && <small class="muted">{hint}</small>}</label>
)
