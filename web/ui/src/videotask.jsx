import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { jobUrl, useJob } from './jobws.jsx'
import { navigate } from './router.js'
import { isCurator } from './team.js'
import { VideoWorkspace } from './videows.jsx'
import { TaskWorkspace } from './workspace.jsx'

// Tasks made from a lake video (docs/tracks.md "Label a lake video as a
// task"): the job page that opens such a job in the video workspace, the
// curators' form that makes one, and the measured play rate.

// LabelJob is /tasks/<taskId>/jobs/<n>: a job of a video task opens in the
// video workspace in task mode, any other job in the task workspace. It
// asks the job once to tell them apart; each workspace keeps it fresh.
export function LabelJob({ taskId, number, search, me }) {
  const [kind, setKind] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    setKind(null)
    api(jobUrl(taskId, number)).then((j) => setKind(j.video ? 'video' : 'frames'), setError)
  }, [taskId, number])
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!kind) return <div class="loading-page">Loading…</div>
  if (kind === 'frames') return <TaskWorkspace id={taskId} job={number} search={search} me={me} />
  return <VideoJob taskId={taskId} number={number} search={search} me={me} />
}

function VideoJob({ taskId, number, search, me }) {
  const jobh = useJob(taskId, number)
  const job = jobh.job
  if (!job) return <div class="loading-page">{jobh.error ? jobh.error.message : 'Loading the job…'}</div>
  return <VideoWorkspace name={job.video.uniqueName} search={search} me={me} task={{ projectId: job.projectId, taskId, jobh }} />
}

// NewVideoTask is /video-task?video=<uniqueName>: a curator makes a task of
// a video project from the video's frames first to last, every N; the
// server checks the range (a 400 names the field) and the task's jobs page
// opens, where it is cut into jobs.
export function NewVideoTask({ search, me }) {
  const video = new URLSearchParams(search).get('video') ?? ''
  const [item, setItem] = useState(null)
  const [projects, setProjects] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    if (video) api('/lake/files/' + encodeURIComponent(video)).then(setItem, setError)
    api('/projects?' + qs({ pageSize: 1000 })).then((r) => setProjects(r.projectList.filter((p) => p.contentType === 1)), setError)
  }, [video])
  if (!isCurator(me)) return <div class="error">Making tasks needs a curator.</div>
  const submit = (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const num = (el) => (el.value === '' ? undefined : +el.value)
    setError(null)
    api('/projects/' + encodeURIComponent(f.project.value) + '/tasks', {
      method: 'POST',
      body: { taskName: f.name.value.trim(), video: f.video.value.trim(), firstFrame: num(f.first), lastFrame: num(f.last), every: num(f.every) },
    }).then((t) => navigate('/tasks/' + encodeURIComponent(t.id) + '/jobs'), setError)
  }
  return (
    <div class="page" data-testid="video-task-page">
      <h2>New task from a lake video</h2>
      <p class="muted">The task's frames are the video's frames first to last, every Nth; nothing is copied. Its shapes are the
        project's tracks of the video. Cut it into jobs on the next page.</p>
      <form class="inline-form" onSubmit={submit} data-testid="video-task-form">
        <label>video <input name="video" defaultValue={video} size="30" required data-testid="vt-video" /></label>
        <label>project <select name="project" required data-testid="vt-project">
          {(projects ?? []).map((p) => <option value={p.projectId}>{p.projectName}</option>)}
        </select></label>
        <label>name <input name="name" placeholder="task name" data-testid="vt-name" /></label>
        <label>first frame <input name="first" type="number" min="0" defaultValue="0" size="6" data-testid="vt-first" /></label>
        <label>last frame <input name="last" type="number" min="0" placeholder={item?.frameCount ? String(item.frameCount - 1) : 'the last'}
          size="6" data-testid="vt-last" /></label>
        <label>every <input name="every" type="number" min="1" defaultValue="1" size="4" data-testid="vt-every" /> frames</label>
        <button type="submit" disabled={!projects} data-testid="vt-create">Create task</button>
      </form>
      {projects?.length === 0 && <p class="muted">No video project yet (content type 1): create one on the Projects page.</p>}
      {item && <p class="muted">{item.name}: {item.frameCount} frames at {item.frameRate} fps, {item.width}×{item.height}</p>}
      {error && <p class="error" role="alert" data-testid="vt-error">{error.message}</p>}
    </div>
  )
}
