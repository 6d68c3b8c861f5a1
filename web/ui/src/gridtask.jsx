import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { navigate } from './router.js'

// MAX_TASK is how many selected files one task takes from the grid: the
// names go in the request, in grid order. A larger task is made from a
// query or a collection on the projects page.
const MAX_TASK = 10000

// TaskForm makes an annotation task of a project from the grid's selection:
// its frames are the selected images in the order the grid shows them.
export function TaskForm({ sel, P, run, busy }) {
  const [projects, setProjects] = useState(null)
  useEffect(() => {
    api('/projects?' + qs({ pageSize: 1000 })).then((r) => setProjects(r.projectList), () => setProjects([]))
  }, [])
  if (P.itemType !== 'image') return <span class="muted">a task's frames are images: list images to make one</span>
  if (projects?.length === 0) return <span class="muted">no project yet: create one on the Projects page</span>
  const go = (el) => run(async () => {
    const names = await sel.names(MAX_TASK)
    if (names.length > MAX_TASK) throw new Error(`a task from the grid takes at most ${MAX_TASK.toLocaleString('en')} images; make a larger one from a query on the Projects page`)
    const t = await api('/projects/' + encodeURIComponent(el.project.value) + '/tasks', {
      method: 'POST', body: { taskName: el.name.value.trim(), uniqueNames: names },
    })
    return <>Created <a href={'/tasks/' + t.id} data-testid="selection-task" data-task-id={t.id}
      onClick={(e) => { e.preventDefault(); navigate('/tasks/' + t.id) }}>task {t.taskName}</a> of {t.frameCount} frames</>
  })
  return (
    <form class="selection-form" onSubmit={(e) => { e.preventDefault(); go(e.currentTarget.elements) }}>
      <select name="project" required data-testid="selection-project">
        {(projects ?? []).map((p) => <option value={p.projectId}>{p.projectName}</option>)}
      </select>
      <input name="name" placeholder="task name" data-testid="selection-task-name" autofocus />
      <button type="submit" disabled={busy || !projects} data-testid="selection-apply">Create task</button>
    </form>
  )
}
