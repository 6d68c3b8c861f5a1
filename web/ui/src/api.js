// The API client. Two ways in (docs/team.md):
// - a person's name and password: the server sets an HttpOnly session cookie
//   the page cannot read; the page keeps only the session's CSRF token, in
//   memory, and sends it on writes. After a reload GET /api/v1/session gives
//   it back. localStorage keeps one flag (no secret) saying a session may
//   exist, so a page never asks /session without a cookie (that 401 would
//   carry a Basic challenge and open the browser's password dialog).
// - an API key and secret, kept in sessionStorage (this tab only) and sent
//   as headers on every /api/v1 call.
const KEY = 'framelake.key'
const SECRET = 'framelake.secret'
const SIGNED_IN = 'framelake.signedIn'

let csrf = null // the session's CSRF token; never stored

export function savedCreds() {
  const key = sessionStorage.getItem(KEY)
  const secret = sessionStorage.getItem(SECRET)
  return key && secret ? { key, secret } : null
}

export function saveCreds(c) {
  sessionStorage.setItem(KEY, c.key)
  sessionStorage.setItem(SECRET, c.secret)
}

export function forgetCreds() {
  sessionStorage.removeItem(KEY)
  sessionStorage.removeItem(SECRET)
  localStorage.removeItem(SIGNED_IN)
  csrf = null
}

// mayHaveSession says a sign-in by password happened in this browser and
// was not signed out: worth asking GET /session.
export const mayHaveSession = () => localStorage.getItem(SIGNED_IN) === '1'

export function keepSession(token) {
  csrf = token
  localStorage.setItem(SIGNED_IN, '1')
}

// authHeaders are the headers that say who the page is: the key's, or the
// CSRF token on a write made with the session cookie (which the browser
// adds itself, same origin).
export function authHeaders(method = 'GET') {
  const c = savedCreds()
  if (c) return { key: c.key, secret: c.secret }
  if (csrf && !/^(GET|HEAD|OPTIONS)$/i.test(method)) return { 'X-CSRF-Token': csrf }
  return {}
}

// signIn signs a person in by name and password; the answer's user is
// {id, name, role}.
export async function signIn(name, password) {
  const r = await fetch('/api/v1/session', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password }) })
  const data = await r.json().catch(() => null)
  if (!r.ok) throw new ApiError(r.status, data?.error ?? {})
  forgetCreds()
  keepSession(data.csrfToken)
  return data
}

// restoreSession asks the cookie's session back after a reload; null when
// there is none.
export async function restoreSession() {
  if (!mayHaveSession()) return null
  try {
    const s = await api('/session')
    if (!s.user) throw new Error('no session')
    keepSession(s.csrfToken)
    return s
  } catch {
    forgetCreds()
    return null
  }
}

// signOut ends the session on the server (a key has none) and forgets all.
// Where sign-on is configured the browser goes to its sign-out address,
// which ends the session and then the provider's, when it has one.
export async function signOut() {
  if (!savedCreds() && mayHaveSession()) {
    const sso = await api('/session/sso').catch(() => null)
    if (sso?.oidc && sso.signOutUrl) {
      forgetCreds()
      location.assign(sso.signOutUrl)
      return
    }
    await api('/session', { method: 'DELETE' }).catch(() => {})
  }
  forgetCreds()
}

// ApiError carries the server's error body: {code, message, field}.
export class ApiError extends Error {
  constructor(status, detail) {
    super(detail.message || `HTTP ${status}`)
    this.status = status
    this.code = detail.code
    this.field = detail.field
  }
}

export async function api(path, { method = 'GET', body, creds, signal } = {}) {
  const explicit = !!creds
  const headers = creds ? { key: creds.key, secret: creds.secret } : authHeaders(method)
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch('/api/v1' + path, {
    method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (r.status === 204) return null
  const data = await r.json().catch(() => null)
  // A 401 on a page already signed in: the session ended (signed out in
  // another tab, expired, the person disabled); the shell asks again.
  if (r.status === 401 && !explicit) dispatchEvent(new Event('framelake:signedout'))
  if (!r.ok) throw new ApiError(r.status, data?.error ?? {})
  return data
}

// fn calls a client function of the interface (POST /api/v1/client/<name>).
export const fn = (name, params, opts) => api('/client/' + name, { method: 'POST', body: params, ...opts })

export function qs(params) {
  const u = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '' && v !== null) u.set(k, v)
  return u.toString()
}
