// The API client: the key and secret live in sessionStorage, so they last as
// long as the tab and are sent as headers on every /api/v1 call.
const KEY = 'framelake.key'
const SECRET = 'framelake.secret'

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

export async function api(path, { method = 'GET', body, creds = savedCreds(), signal } = {}) {
  const headers = { key: creds?.key ?? '', secret: creds?.secret ?? '' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch('/api/v1' + path, {
    method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
  })
  const data = await r.json().catch(() => null)
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
