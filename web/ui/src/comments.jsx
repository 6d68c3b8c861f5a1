import { useState } from 'preact/hooks'
import { api } from './api.js'
import { usePoll } from './queue.jsx'
import { when } from './team.js'

// Comments pinned to a frame or to one of its shapes (docs/team.md
// "Comments"): a list in the workspace's side panel and a numbered marker on
// each pinned shape, open ones red. A reviewer writes them (the selected
// shape's, or the frame's when none is selected); the job's annotator sees
// them and resolves them. Fetched again every 3 s and after each change.

// useComments keeps the comments of a job (all its frames) or, outside a
// job, of one frame: {all, refresh}.
export function useComments({ projectId, taskId, job, uniqueName }) {
  const [all, setAll] = useState([])
  const path = job
    ? `/tasks/${encodeURIComponent(taskId)}/jobs/${job}/comments`
    : `/projects/${encodeURIComponent(projectId)}/frames/${encodeURIComponent(uniqueName)}/comments`
  const refresh = () => (uniqueName || job ? api(path).then((r) => setAll(r.comments ?? []), () => {}) : Promise.resolve())
  usePoll(refresh, 3000, [path])
  return { all, refresh }
}

// pinOf is where a shape comment's marker goes: the shape as it was when
// the comment was made (a save gives shapes new ids), over its top right.
const pinOf = (c) => c.shape && { left: c.shape.x + c.shape.width, top: c.shape.y }

// CommentMarkers are drawn inside the frame canvas, in the frame's
// percentages like its boxes.
export function CommentMarkers({ comments, frame, picked, onPick }) {
  return comments.map((c, i) => {
    const p = pinOf(c)
    if (!p) return null
    return (
      <button class={'comment-pin' + (c.resolved ? ' resolved' : '') + (picked === c.id ? ' picked' : '')} data-testid="comment-pin"
        data-comment-id={c.id} data-resolved={c.resolved ? 'true' : 'false'} title={`${c.author}: ${c.text}`}
        style={{ left: (100 * p.left) / frame.width + '%', top: (100 * p.top) / frame.height + '%' }}
        onPointerDown={(e) => e.stopPropagation()} onClick={(e) => { e.stopPropagation(); onPick(c.id) }}>{i + 1}</button>
    )
  })
}

// CommentsPanel lists the frame's comments and writes new ones; the job's
// other frames with open comments are named, one click away.
export function CommentsPanel({ projectId, uniqueName, job, comments, selected, onChanged, picked, onPick, canComment, canResolve, goFrameNamed }) {
  const [text, setText] = useState('')
  const [error, setError] = useState(null)
  const here = comments.filter((c) => c.uniqueName === uniqueName)
  const elsewhere = comments.filter((c) => c.uniqueName !== uniqueName && !c.resolved)
  const add = (e) => {
    e?.preventDefault()
    if (!text.trim()) return
    const body = { text: text.trim() }
    if (selected?.id) body.shapeId = selected.id
    if (job) body.job = job
    api(`/projects/${encodeURIComponent(projectId)}/frames/${encodeURIComponent(uniqueName)}/comments`, { method: 'POST', body })
      .then(() => { setText(''); setError(null); onChanged() }, setError)
  }
  const resolve = (c, resolved) => api('/comments/' + encodeURIComponent(c.id), { method: 'PATCH', body: { resolved } })
    .then(onChanged, setError)
  const open = here.filter((c) => !c.resolved).length
  return (
    <section class="comments" data-testid="comments" data-open={open} data-count={here.length}>
      <h3>Comments <span class="muted">{open} open{here.length > open && ` · ${here.length - open} resolved`}</span></h3>
      <ol class="comment-list">
        {here.map((c) => (
          <li class={'comment' + (c.resolved ? ' resolved' : '') + (picked === c.id ? ' picked' : '')} data-testid="comment" data-comment-id={c.id}
            data-resolved={c.resolved ? 'true' : 'false'} data-shape={c.shape ? c.shape.label : ''} onClick={() => onPick(c.id)}>
            <div><strong>{c.author}</strong> <span class="muted">{when(c.createdAt)} · {c.shape ? `on a ${c.shape.label}` : 'on the frame'}</span></div>
            <div class="comment-text" data-testid="comment-text">{c.text}</div>
            {c.resolved
              ? <div class="muted">resolved by {c.resolvedBy} {when(c.resolvedAt)}
                {canResolve && <button class="link" data-testid="comment-reopen" onClick={(e) => { e.stopPropagation(); resolve(c, false) }}>reopen</button>}</div>
              : canResolve && <button class="ghost" data-testid="comment-resolve" onClick={(e) => { e.stopPropagation(); resolve(c, true) }}>Resolve</button>}
          </li>
        ))}
      </ol>
      {here.length === 0 && <p class="muted">No comments on this frame.</p>}
      {elsewhere.length > 0 && (
        <p class="muted" data-testid="comments-elsewhere">open on other frames: {[...new Set(elsewhere.map((c) => c.uniqueName))].map((n) => (
          <button class="link" onClick={() => goFrameNamed(n)}>{n}</button>
        ))}</p>
      )}
      {canComment && (
        <form class="comment-form" onSubmit={add}>
          <textarea rows="2" value={text} onInput={(e) => setText(e.currentTarget.value)} data-testid="comment-input"
            placeholder={selected ? `comment on the selected ${selected.label}` : 'comment on the frame (select a shape to pin it there)'}
            onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) add(e); if (e.key === 'Escape') e.currentTarget.blur() }} />
          <button type="submit" class="ghost" data-testid="comment-add" title="Ctrl+Enter">{selected ? `Comment on the ${selected.label}` : 'Comment on the frame'}</button>
        </form>
      )}
      {error && <p class="error" data-testid="comment-error">{error.message}</p>}
    </section>
  )
}
