import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { ROLES, isAdmin, when } from './team.js'

// Users is the admins' page of people (/users): list, create, disable or
// enable, reset a password and set a role, through GET/POST/PATCH
// /api/v1/users (docs/team.md "Managing people"). Every change is fetched
// back from the server's answer, so the table is what the server holds.
export function Users({ me }) {
  const [users, setUsers] = useState(null)
  const [error, setError] = useState(null)
  const [note, setNote] = useState('')
  const load = () => api('/users').then((r) => setUsers(r.users), setError)
  useEffect(() => { load() }, [])
  if (!isAdmin(me)) return <div class="error" role="alert">Only admins manage people.</div>
  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!users) return <div class="loading-page">Loading…</div>
  // The roles offered: the team's, and any older role a person still has.
  const roles = [...new Set([...ROLES, ...users.map((u) => u.role)])]
  const change = (u, body, said) => api('/users/' + encodeURIComponent(u.name), { method: 'PATCH', body })
    .then((nu) => { setUsers((us) => us.map((x) => (x.name === u.name ? nu : x))); setNote(said) }, (e) => setNote(e.message))
  return (
    <div class="page users" data-testid="users-page">
      <h2>People <span class="muted">({users.length})</span></h2>
      <NewUser roles={roles} onCreated={(u) => { setUsers((us) => [...us, u]); setNote(`${u.name} created`) }} />
      <p class="muted" data-testid="users-note" role="status">{note}</p>
      <table class="table">
        <thead><tr><th>name</th><th>role</th><th>since</th><th>state</th><th>new password</th><th /></tr></thead>
        <tbody>
          {users.map((u) => (
            <tr data-testid="user-row" data-name={u.name} data-role={u.role} data-disabled={u.disabledAt ? 'true' : 'false'}>
              <td>{u.name}{u.name === me.name && <span class="muted"> (you)</span>}</td>
              <td>
                <select value={u.role} data-testid="user-role" aria-label={'role of ' + u.name}
                  onChange={(e) => change(u, { role: e.currentTarget.value }, `${u.name} is now ${e.currentTarget.value}`)}>
                  {roles.map((r) => <option value={r}>{r}</option>)}
                </select>
              </td>
              <td class="muted">{when(u.createdAt)}</td>
              <td>{u.disabledAt ? <span class="bad">disabled {when(u.disabledAt)}</span> : 'active'}</td>
              <td><PasswordReset onSet={(password) => change(u, { password }, `${u.name}'s password is reset; their sessions ended`)} /></td>
              <td>{u.disabledAt
                ? <button class="ghost" data-testid="user-enable" onClick={() => change(u, { disabled: false }, `${u.name} enabled`)}>Enable</button>
                : u.name !== me.name && <button class="ghost" data-testid="user-disable" onClick={() => change(u, { disabled: true }, `${u.name} disabled: their sessions and keys stop now`)}>Disable</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function NewUser({ roles, onCreated }) {
  const [error, setError] = useState(null)
  const submit = (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    api('/users', { method: 'POST', body: { name: f.name.value.trim(), password: f.password.value, role: f.role.value } })
      .then((u) => { e.target.reset(); setError(null); onCreated(u) }, setError)
  }
  return (
    <form class="inline-form" onSubmit={submit} data-testid="user-form">
      <input name="name" placeholder="name" required data-testid="user-name" autocomplete="off" />
      <input name="password" type="password" placeholder="password (10 characters or more)" required minLength={10} size="28"
        data-testid="user-password" autocomplete="new-password" />
      <select name="role" data-testid="user-new-role" aria-label="role">
        {roles.map((r) => <option value={r} selected={r === 'annotator'}>{r}</option>)}
      </select>
      <button type="submit" data-testid="user-create">Add person</button>
      {error && <span class="error" data-testid="user-error">{error.message}</span>}
    </form>
  )
}

function PasswordReset({ onSet }) {
  const [v, setV] = useState('')
  return (
    <form class="inline-form" onSubmit={(e) => { e.preventDefault(); onSet(v); setV('') }}>
      <input type="password" value={v} onInput={(e) => setV(e.currentTarget.value)} minLength={10} required size="14"
        placeholder="new password" data-testid="user-new-password" autocomplete="new-password" />
      <button type="submit" class="ghost" data-testid="user-reset">Reset</button>
    </form>
  )
}
