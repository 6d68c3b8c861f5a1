import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'

// Members is who annotates and who reviews a project (GET/PUT/DELETE
// /api/v1/projects/{projectId}/members[/{name}], curators and admins;
// docs/team.md "Roles"): annotators and reviewers act only in the projects
// they are members of. Shown under the project on the projects page.
export function Members({ projectId }) {
  const [members, setMembers] = useState(null)
  const [error, setError] = useState(null)
  const base = `/projects/${encodeURIComponent(projectId)}/members`
  const load = () => api(base).then((r) => { setMembers(r.members ?? []); setError(null) }, setError)
  useEffect(() => { load() }, [projectId])
  const put = (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    api(base + '/' + encodeURIComponent(f.name.value.trim()), { method: 'PUT', body: { role: f.role.value } })
      .then(() => { e.target.reset(); load() }, setError)
  }
  const remove = (m) => api(base + '/' + encodeURIComponent(m.name), { method: 'DELETE' }).then(load, setError)
  if (!members && !error) return null
  return (
    <div class="members" data-testid="members" data-project-id={projectId}>
      <strong>Members</strong>{' '}
      {(members ?? []).map((m) => (
        <span class={'tag' + (m.disabled ? ' muted' : '')} data-testid="member" data-name={m.name} data-role={m.role}>
          {m.name} <span class="muted">{m.role}</span>
          <button class="link" data-testid="member-remove" title={'remove ' + m.name} onClick={() => remove(m)}>×</button>
        </span>
      ))}
      {members?.length === 0 && <span class="muted">none yet: annotators and reviewers see only projects they are members of. </span>}
      <form class="inline-form" onSubmit={put}>
        <input name="name" placeholder="person's name" required size="14" data-testid="member-name" />
        <select name="role" data-testid="member-role" aria-label="member's role">
          <option value="annotator">annotator</option>
          <option value="reviewer">reviewer</option>
        </select>
        <button type="submit" class="ghost" data-testid="member-add">Add member</button>
      </form>
      {error && <span class="error" data-testid="member-error">{error.message}</span>}
    </div>
  )
}
