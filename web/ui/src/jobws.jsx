import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from './api.js'
import { navigate } from './router.js'
import { STATE_NAMES, usePoll } from './queue.jsx'
import { mayReview } from './team.js'

// A labelling job in the workspace (/tasks/<taskId>/jobs/<n>): the job's
// frames only, its state and holders in a bar over the frame, the
// annotator's Submit, the reviewer's accept and reject per frame or for the
// whole job (docs/team.md "Review"). The job is fetched again every 3 s, so
// a submit, a review or a reassignment made elsewhere shows without a reload.

// HomeCrumb (queue.jsx) starts the workspace's breadcrumb as it starts the jobs page's.
export { HomeCrumb } from './queue.jsx'

export const jobUrl = (taskId, n) => `/tasks/${encodeURIComponent(taskId)}/jobs/${n}`

// useJob keeps the job fresh: {job, error, refresh, set}.
export function useJob(taskId, number) {
  const [job, setJob] = useState(null)
  const [error, setError] = useState(null)
  const refresh = () => (number ? api(jobUrl(taskId, number)).then((j) => { setJob(j); setError(null); return j }, setError) : Promise.resolve(null))
  usePoll(refresh, 3000, [taskId, number])
  return { job, error, refresh, set: setJob }
}

// jobFrames keeps the task's frames that are the job's, in the job's order.
export function jobFrames(ws, job) {
  const mine = new Set(job.frames.map((f) => f.uniqueName))
  return { ...ws, frames: ws.frames.filter((f) => mine.has(f.uniqueName)) }
}

// jobRole is what the signed-in person is to the job: "annotator" (its
// assignee), "reviewer" (its reviewer, or any reviewer while it waits for
// one), or "" (a viewer).
export function jobRole(job, me) {
  if (!job) return ''
  if (job.assignee && job.assignee === me.name) return 'annotator'
  if (mayReview(me) && (job.reviewer === me.name || (!job.reviewer && job.state === 'submitted'))) return 'reviewer'
  return ''
}

// jobEditable: the annotator edits while the job is theirs to work on; its
// reviewer edits while reviewing ("edit where quicker"); submitted and
// accepted jobs are read-only to both.
export function jobEditable(job, me) {
  const role = jobRole(job, me)
  return (role === 'annotator' && (job.state === 'annotation' || job.state === 'rejected')) ||
    (role === 'reviewer' && job.state === 'in_review')
}

// JobBar is the job's line over the frame: state, holders, the moves the
// person may make now. Shift+Enter submits (annotator) or accepts the job
// (reviewer), Shift+A and Shift+R judge the frame; the workspace's key
// handler asks keys.current first.
export function JobBar({ taskId, jobh, me, setNote, frameName, keys }) {
  const { job } = jobh
  const [reason, setReason] = useState('')
  // A move's note ("job submitted") holds while the job is in the state the
  // move left it in; once the job is fetched in another (the reviewer
  // rejected it), the header follows the job and the stale note goes.
  const saidIn = useRef(null)
  useEffect(() => {
    if (saidIn.current && job && job.state !== saidIn.current) {
      saidIn.current = null
      setNote('')
    }
  }, [job?.state])
  keys.current = null
  if (!job) return <div class="job-bar muted">{jobh.error ? jobh.error.message : 'Loading the job…'}</div>
  const role = jobRole(job, me)
  const move = (body, said) => api(jobUrl(taskId, job.number) + '/state', { method: 'POST', body })
    .then((j) => { saidIn.current = j.state; jobh.set(j); setNote(said) }, (e) => setNote(e.message))
  const judged = job.frames.find((f) => (f.frame != null ? String(f.frame) : f.uniqueName) === frameName)?.review // a video job's frames by number
  const reviewing = role === 'reviewer' && job.state === 'in_review'
  keys.current = (e) => {
    if (e.shiftKey && e.key === 'Enter') {
      if (role === 'annotator' && (job.state === 'annotation' || job.state === 'rejected')) move({ state: 'submitted' }, 'job submitted')
      else if (role === 'reviewer' && job.state === 'submitted') move({ state: 'in_review' }, 'review started')
      else if (reviewing) move({ state: 'accepted' }, 'job accepted')
      else return false
      return true
    }
    if (reviewing && e.shiftKey && (e.key === 'A' || e.key === 'R')) {
      const v = e.key === 'A' ? 'accepted' : 'rejected'
      move({ frames: { [frameName]: v } }, `frame ${v}`)
      return true
    }
    return false
  }
  return (
    <div class={'job-bar state-' + job.state} data-testid="job-bar" data-state={job.state} data-role={role} data-number={job.number}>
      <a href={`/tasks/${encodeURIComponent(taskId)}/jobs`} onClick={(e) => { e.preventDefault(); navigate(`/tasks/${encodeURIComponent(taskId)}/jobs`) }}>jobs</a>
      <strong>Job #{job.number}{job.copy > 0 && ` (copy ${job.copy})`}</strong>
      <span class="job-state" data-testid="job-state">{STATE_NAMES[job.state] ?? job.state}</span>
      <span class="muted">annotator {job.assignee ?? 'nobody'} · reviewer {job.reviewer ?? 'any'}</span>
      <span class="muted">{job.annotatedFrames} / {job.frameCount} annotated · {job.acceptedFrames} accepted · {job.rejectedFrames} rejected</span>
      {role === 'annotator' && (job.state === 'annotation' || job.state === 'rejected') && (
        <button data-testid="job-submit" onClick={() => move({ state: 'submitted' }, 'job submitted')} title="Shift+Enter">Submit job</button>
      )}
      {role === 'annotator' && !(job.state === 'annotation' || job.state === 'rejected') && (
        <span class="muted" data-testid="job-readonly">read-only: {job.state === 'accepted' ? 'accepted' : 'waiting for review'}</span>
      )}
      {role === 'reviewer' && job.state === 'submitted' && (
        <button data-testid="job-start-review" onClick={() => move({ state: 'in_review' }, 'review started')} title="Shift+Enter">Start review</button>
      )}
      {reviewing && <>
        <span class="job-frame-verdict" data-testid="frame-verdict" data-review={judged ?? ''}>this frame: {judged ?? 'not judged'}</span>
        <button class="ghost" data-testid="frame-accept" title="Shift+A" onClick={() => move({ frames: { [frameName]: 'accepted' } }, 'frame accepted')}>Accept frame</button>
        <button class="ghost" data-testid="frame-reject" title="Shift+R" onClick={() => move({ frames: { [frameName]: 'rejected' } }, 'frame rejected')}>Reject frame</button>
        <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} placeholder="note to the annotator" size="22" data-testid="job-note" />
        <button data-testid="job-accept" title="Shift+Enter" onClick={() => move({ state: 'accepted', note: reason }, 'job accepted')}>Accept job</button>
        <button class="danger" data-testid="job-reject" onClick={() => move({ state: 'rejected', note: reason }, 'job rejected: back to its annotator')}>Reject job</button>
      </>}
      {job.state === 'rejected' && role === 'annotator' && <LastNote job={job} />}
    </div>
  )
}

// LastNote shows why the job came back: the rejection's note.
function LastNote({ job }) {
  const ev = [...(job.events ?? [])].reverse().find((e) => e.kind === 'state' && e.to === 'rejected')
  if (!ev) return null
  return <span class="job-note" data-testid="job-reject-note">sent back by {ev.who}{ev.note ? `: “${ev.note}”` : ''}</span>
}
