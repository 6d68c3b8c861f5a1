import { ApiError, authHeaders } from './api.js'

// A frame's boxes at a version, read and written through the project's frame
// annotations route: every write sends the version it was made on as
// If-Match, so an edit made on a frame someone else changed since is refused
// (409) with the frame as it is now, never written over it.
const framePath = (projectId, name, what) =>
  `/api/v1/projects/${encodeURIComponent(projectId)}/frames/${encodeURIComponent(name)}/${what}`

async function send(method, path, body, version) {
  const headers = { ...authHeaders(method), 'content-type': 'application/json' }
  if (version) headers['if-match'] = `"${version}"`
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), keepalive: true })
  const data = await r.json().catch(() => null)
  if (r.status === 409 && data?.current) {
    const e = new ApiError(409, data.error ?? {})
    e.current = data.current
    throw e
  }
  if (!r.ok) throw new ApiError(r.status, data?.error ?? {})
  return data
}

export const loadFrame = (projectId, name) => send('GET', framePath(projectId, name, 'annotations'))

// toWire keeps what the server stores of an annotation: a box's rectangle,
// or another shape's type and geometry (docs/shapes.md; the server derives
// their boxes and areas, so those are not sent).
export const toWire = (b) => {
  const w = { label: b.label }
  if (!b.type || b.type === 'box') Object.assign(w, { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) })
  else {
    w.type = b.type
    if (b.type === 'polygon') w.polygon = b.polygon.map((r) => Array.from(r, round))
    else if (b.type === 'polyline') w.points = Array.from(b.points, round)
    else if (b.type === 'mask') w.mask = { size: b.mask.size, counts: b.mask.counts }
    else if (b.type === 'keypoints') w.keypoints = b.keypoints.map((k) => ({ name: k.name, x: round(k.x), y: round(k.y), v: k.v }))
  }
  if (b.attributes && Object.keys(b.attributes).length) w.attributes = b.attributes
  return w
}
const round = (v) => Math.round(v * 10) / 10

export const saveFrame = (projectId, name, boxes, version) =>
  send('PUT', framePath(projectId, name, 'annotations'), boxes.map(toWire), version)

let seq = 0
// fromWire gives stored boxes a local key for rendering.
export const fromWire = (a) => ({ ...a, key: ++seq, attributes: a.attributes ?? {} })
export const newKey = () => ++seq

// Saver writes a frame's edits one after another, each on the version the
// last one produced, so quick edits never race each other. After a
// conflict nothing more goes out until resume.
export class Saver {
  constructor(projectId, name, version, { onSaved, onConflict, onError }) {
    Object.assign(this, { projectId, name, version, onSaved, onConflict, onError })
    this.chain = Promise.resolve()
    this.stopped = false
  }

  // run chains op(version), a write answering {version, task}.
  run(op) {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return null
      try {
        const r = await op(this.version)
        this.version = r.version
        this.onSaved(r)
        return r
      } catch (e) {
        if (e.current) {
          this.stopped = true
          this.onConflict(e.current)
        } else this.onError(e)
        return null
      }
    })
    return this.chain
  }

  save(boxes) {
    const snapshot = boxes.map(toWire)
    return this.run((v) => send('PUT', framePath(this.projectId, this.name, 'annotations'), snapshot, v))
  }

  decide(body) {
    return this.run((v) => send('POST', framePath(this.projectId, this.name, 'suggestions'), body, v))
  }

  resume(version) {
    this.version = version
    this.stopped = false
  }
}

// interpolate returns the box at fraction t between boxes a and b.
export function interpolate(a, b, t) {
  const mix = (p, q) => p + (q - p) * t
  return { label: a.label, x: mix(a.x, b.x), y: mix(a.y, b.y), width: mix(a.width, b.width), height: mix(a.height, b.height), attributes: a.attributes }
}

// iou is the overlap of two boxes over their union.
export function iou(a, b) {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)
  if (w <= 0 || h <= 0) return 0
  const i = w * h
  return i / (a.width * a.height + b.width * b.height - i)
}
