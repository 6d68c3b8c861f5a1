import { api, authHeaders } from './api.js'

// A video's tracks as the video workspace and its timeline read and edit
// them (docs/tracks.md): a track is its keyframes in frame order and the
// frames from which it is out of view until its next keyframe. Every edit
// here returns a new track and leaves the one given; the workspace sends it
// with PUT tracks/{number}, or the operation's whole list when two tracks
// change together (split, merge), so the change is one transaction.

// A video's routes: the lake's (/lake/files/<name>), or a project's for a
// video of its tasks (videoSource), which members of the project reach and
// which write the project's tracks (docs/tracks.md "Label a lake video as a
// task"). A uniqueName never starts with a slash.
const filePath = (src) => (src.startsWith('/') ? src : '/lake/files/' + encodeURIComponent(src))
export const videoSource = (name, projectId) => '/projects/' + encodeURIComponent(projectId) + '/videos/' + encodeURIComponent(name)

// keyIndex is the index of the last keyframe at or before frame (-1: none).
export function keyIndex(t, frame) {
  const ks = t.keyframes
  let lo = 0, hi = ks.length
  while (lo < hi) {
    const m = (lo + hi) >> 1
    if (ks[m].frame <= frame) lo = m + 1
    else hi = m
  }
  return lo - 1
}

// shapeAt is the track's shape on frame as the server computes it
// (lake.Track.At): the keyframe there, a box interpolated linearly between
// two, or null where the object is not in view. Shapes other than boxes
// between keyframes are the earlier keyframe's, marked `approx`: the
// workspace asks the server for their exact form (polygons resample).
export function shapeAt(t, frame) {
  const ks = t.keyframes
  const k = keyIndex(t, frame)
  if (k < 0 || frame > ks[ks.length - 1].frame) return null
  const a = ks[k]
  for (const o of t.outside ?? []) if (o > a.frame && o <= frame) return null
  if (a.frame === frame) return { ...a, interpolated: false }
  const b = ks[k + 1]
  const u = (frame - a.frame) / (b.frame - a.frame)
  const mix = (p, q) => p + (q - p) * u
  const s = { ...a, frame, interpolated: true, x: mix(a.x, b.x), y: mix(a.y, b.y), width: mix(a.width, b.width), height: mix(a.height, b.height) }
  if (a.type && a.type !== 'box') s.approx = true
  delete s.id
  return s
}

// spans are the stretches a track is in view, for the timeline: [from, to]
// frames, each from a keyframe to the frame before the next keyframe or
// outside frame (the last keyframe alone spans itself).
export function spans(t) {
  const ks = t.keyframes
  const out = []
  const outs = [...(t.outside ?? [])].sort((a, b) => a - b)
  let o = 0
  for (let i = 0; i < ks.length; i++) {
    const from = ks[i].frame
    const next = i + 1 < ks.length ? ks[i + 1].frame : from + 1
    while (o < outs.length && outs[o] <= from) o++
    const end = o < outs.length && outs[o] < next ? outs[o] : next
    out.push([from, end - 1])
  }
  return out
}

// clean drops outside frames the server refuses: on a keyframe, at or
// before the first keyframe, at or past the last.
export function clean(t) {
  const ks = t.keyframes
  const first = ks[0]?.frame ?? 0, last = ks[ks.length - 1]?.frame ?? 0
  const keys = new Set(ks.map((k) => k.frame))
  const outside = [...new Set(t.outside ?? [])].filter((o) => o > first && o < last && !keys.has(o)).sort((a, b) => a - b)
  return { ...t, outside }
}

// setKeyframe makes k (with its frame) a keyframe of t, replacing one on
// the same frame.
export function setKeyframe(t, k) {
  const ks = t.keyframes.filter((x) => x.frame !== k.frame)
  ks.push(k)
  ks.sort((a, b) => a.frame - b.frame)
  return clean({ ...t, keyframes: ks })
}

// removeKeyframe takes the keyframe on frame out; null when it was the last.
export function removeKeyframe(t, frame) {
  const ks = t.keyframes.filter((x) => x.frame !== frame)
  return ks.length ? clean({ ...t, keyframes: ks }) : null
}

// moveKeyframe moves the keyframe on from to frame to, kept strictly
// between its neighbours (keyframes stay in order); null when it cannot.
export function moveKeyframe(t, from, to) {
  const i = t.keyframes.findIndex((k) => k.frame === from)
  if (i < 0) return null
  const lo = i > 0 ? t.keyframes[i - 1].frame + 1 : 0
  const hi = i + 1 < t.keyframes.length ? t.keyframes[i + 1].frame - 1 : Infinity
  to = Math.max(lo, Math.min(hi, to))
  if (to === from) return null
  const ks = t.keyframes.map((k, j) => (j === i ? { ...k, frame: to } : k))
  return clean({ ...t, keyframes: ks })
}

// toggleOutside switches the object out of view from frame on (until its
// next keyframe), or back into view: a frame inside an outside span gets a
// keyframe holding the shape of the span's start, so it is seen from there.
export function toggleOutside(t, frame) {
  const outs = t.outside ?? []
  if (outs.includes(frame)) return clean({ ...t, outside: outs.filter((o) => o !== frame) })
  if (shapeAt(t, frame)) {
    if (t.keyframes.some((k) => k.frame === frame)) throw new Error('frame ' + frame + ' is a keyframe: the object is out of view from a frame after one')
    if (frame > t.keyframes[t.keyframes.length - 1].frame) throw new Error('the track ends before frame ' + frame)
    return clean({ ...t, outside: [...outs, frame] })
  }
  const k = keyIndex(t, frame)
  if (k < 0 || frame > t.keyframes[t.keyframes.length - 1].frame) throw new Error('the track is not on frame ' + frame)
  return setKeyframe(t, { ...t.keyframes[k], frame, confidence: undefined })
}

// splitTrack cuts t at frame: the first part ends on the frame before (a
// keyframe there holds its shape), the second, numbered number, starts on
// frame with the shape it has there. Null when either part would be empty.
export function splitTrack(t, frame, number) {
  const before = shapeAt(t, frame - 1), here = shapeAt(t, frame)
  const ks = t.keyframes
  let a = ks.filter((k) => k.frame < frame)
  let b = ks.filter((k) => k.frame > frame)
  if (before?.interpolated) a = [...a, keyOf(before)]
  const atKey = ks.find((k) => k.frame === frame)
  if (atKey) b = [atKey, ...b]
  else if (here) b = [keyOf(here), ...b]
  if (!a.length || !b.length) return null
  const first = clean({ ...t, keyframes: a, outside: t.outside })
  const second = clean({ ...t, id: undefined, number, keyframes: b, outside: t.outside })
  return [first, second]
}

// mergeTracks joins b into a: one track with both's keyframes (a's where
// both have one on a frame) and outside frames, a's number and label.
export function mergeTracks(a, b) {
  const mine = new Set(a.keyframes.map((k) => k.frame))
  const ks = [...a.keyframes, ...b.keyframes.filter((k) => !mine.has(k.frame))].sort((x, y) => x.frame - y.frame)
  return clean({ ...a, keyframes: ks, outside: [...(a.outside ?? []), ...(b.outside ?? [])] })
}

// keyOf is a shape made a keyframe: interpolation's marks taken off.
function keyOf(s) {
  const k = { ...s }
  delete k.interpolated
  delete k.approx
  delete k.area
  return k
}
export { keyOf }

const round = (v) => Math.round(v * 100) / 100

// wireKey is a keyframe as PUT takes it: a box's rectangle, or another
// shape's type and geometry (the server derives its box and area).
export function wireKey(k) {
  const w = { frame: k.frame }
  if (!k.type || k.type === 'box') Object.assign(w, { x: round(k.x), y: round(k.y), width: round(k.width), height: round(k.height) })
  else {
    w.type = k.type
    for (const f of ['polygon', 'points', 'mask', 'keypoints']) if (k[f] != null) w[f] = k[f]
  }
  if (k.confidence != null) w.confidence = k.confidence
  if (k.attributes && Object.keys(k.attributes).length) w.attributes = k.attributes
  return w
}

export const wireTrack = (t) => ({ number: t.number, label: t.label, keyframes: t.keyframes.map(wireKey), outside: t.outside ?? [] })

// The routes (docs/tracks.md).
export const loadTracks = (name, op) =>
  api(filePath(name) + '/tracks' + (op ? '?operation=' + encodeURIComponent(op) : '')).then((r) => r.tracks)
export const frameShapes = (name, frame, op) =>
  api(filePath(name) + '/tracks?frame=' + frame + (op ? '&operation=' + encodeURIComponent(op) : '')).then((r) => r.shapes)
export const putTrack = (name, op, t) =>
  api(filePath(name) + '/tracks/' + t.number + '?operation=' + encodeURIComponent(op), { method: 'PUT', body: wireTrack(t) })
export const putAllTracks = (name, op, tracks) =>
  api(filePath(name) + '/tracks', { method: 'PUT', body: { operation: op, tracks: tracks.map(wireTrack) } })
export const deleteTrack = (name, op, number) =>
  fetchRaw('DELETE', filePath(name) + '/tracks/' + number + '?operation=' + encodeURIComponent(op))
export const propagate = (name, op, number, body) =>
  api(filePath(name) + '/tracks/' + number + '/propagate?operation=' + encodeURIComponent(op), { method: 'POST', body })

async function fetchRaw(method, path) {
  const r = await fetch('/api/v1' + path, { method, headers: authHeaders(method) }) // a key's, or a session's CSRF token
  if (!r.ok) {
    const d = await r.json().catch(() => null)
    throw new Error(d?.error?.message ?? `HTTP ${r.status}`)
  }
  return r
}

// FrameCache holds decoded frames of one video as object URLs: the frames
// route needs a key's headers when signed in by key, which an <img> cannot
// send. It keeps
// the last 96 frames and fetches ahead the ones asked for by prefetch.
export class FrameCache {
  constructor(name, size = 1280) {
    Object.assign(this, { name, size, map: new Map() })
  }

  get(n) {
    let p = this.map.get(n)
    if (p) {
      this.map.delete(n)
      this.map.set(n, p) // most recently used last
      return p
    }
    p = fetchRaw('GET', `${filePath(this.name)}/frames/${n}?size=${this.size}`)
      .then((r) => r.blob())
      .then(async (b) => {
        const url = URL.createObjectURL(b)
        const im = new Image()
        im.src = url
        await im.decode().catch(() => {})
        return url
      })
    p.catch(() => this.map.delete(n))
    this.map.set(n, p)
    while (this.map.size > 96) {
      const [old, q] = this.map.entries().next().value
      this.map.delete(old)
      q.then((u) => URL.revokeObjectURL(u), () => {})
    }
    return p
  }

  // ahead fetches frames from on one after another, never together: the
  // server decodes a run of frames per ffmpeg pass, so asking for the next
  // once the last is in reads its cache, where asking for eight at once
  // starts eight passes. A newer ahead replaces an older one.
  async ahead(from, count, last) {
    const run = (this.run = {})
    for (let f = from; f < from + count && f <= last; f++) {
      if (this.run !== run) return
      await this.get(f).catch(() => {})
    }
  }

  has(n) { return this.map.has(n) }

  close() {
    for (const q of this.map.values()) q.then((u) => URL.revokeObjectURL(u), () => {})
    this.map.clear()
  }
}
