import { useState } from 'preact/hooks'
import { api, authHeaders, qs } from './api.js'
import { fromWire } from './frameio.js'
import { usePoll } from './queue.jsx'
import { when } from './team.js'

// HistoryPanel is a frame's history in the workspace (docs/team.md
// "History"): each change to its shapes, newest first, with who made it,
// when, through what (web app, api key, import, restore) and how many shapes
// it added and removed. A change can be previewed (the frame's shapes right
// after it, drawn read-only in place of the current ones) and restored: the
// restore is itself a new change, made on the frame's version, so an edit
// someone made meanwhile is a conflict rather than lost. A video's frame
// (frame given) lists its keyframes' changes; they have no version.
export function HistoryPanel({ projectId, uniqueName, frame, version, preview, setPreview, canRestore, onRestored }) {
  const [changes, setChanges] = useState(null)
  const [error, setError] = useState(null)
  const [open, setOpen] = useState(false)
  const load = () => (open
    ? api('/lake/history?' + qs({ uniqueName, frame, project: projectId, limit: 50 })).then((r) => { setChanges(r.changes ?? []); setError(null) }, setError)
    : Promise.resolve())
  usePoll(load, 5000, [uniqueName, frame, open, version])
  const show = (c) => api('/lake/history/' + encodeURIComponent(c.id) + '/shapes')
    .then((r) => setPreview({ change: c, boxes: (r.shapes ?? []).map(fromWire) }), setError)
  const restore = async (c) => {
    const r = await fetch('/api/v1/lake/history/' + encodeURIComponent(c.id) + '/restore', {
      method: 'POST', headers: { ...authHeaders('POST'), ...(version == null ? {} : { 'if-match': `"${version}"` }) } })
    const body = await r.json().catch(() => null)
    if (!r.ok) return setError(new Error(body?.error?.message ?? `HTTP ${r.status}`))
    setPreview(null)
    onRestored(body)
    load()
  }
  return (
    <details class="history" data-testid="history" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>History {changes && <span class="muted">({changes.length})</span>}</summary>
      {preview && (
        <div class="history-preview" data-testid="history-preview" data-change-id={preview.change.id}>
          Showing the frame as {preview.change.who} left it {when(preview.change.at)} ({preview.boxes.length} shapes).
          {canRestore && <button data-testid="history-restore" onClick={() => restore(preview.change)}>Restore this version</button>}
          <button class="ghost" data-testid="history-back" onClick={() => setPreview(null)}>Back to now</button>
        </div>
      )}
      {error && <p class="error" data-testid="history-error">{error.message}</p>}
      {changes && changes.length === 0 && <p class="muted">No changes kept for this frame.</p>}
      <ol class="history-list">
        {(changes ?? []).map((c, i) => (
          <li class={'change' + (preview?.change.id === c.id ? ' picked' : '')} data-testid="history-change" data-change-id={c.id} data-who={c.who}
            data-via={c.via} data-added={c.added.length} data-removed={c.removed.length}>
            <button class="link" onClick={() => (preview?.change.id === c.id ? setPreview(null) : show(c))} title="preview this version">
              <strong>{c.who}</strong> <span class="muted">{when(c.at)}</span>
            </button>
            <span class="via muted">{c.via}</span>
            <span class="delta"><span class="good">+{c.added.length}</span> <span class="bad">−{c.removed.length}</span></span>
            {i === 0 && <span class="muted">now</span>}
          </li>
        ))}
      </ol>
    </details>
  )
}
