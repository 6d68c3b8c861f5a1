import { api, authHeaders } from './api.js'

// The review grid's bulk actions on chosen patches, through the routes that
// own each kind of box (a box is changed where it was made):
//   - human boxes of an import (operation import:<name>): the file's boxes of
//     that operation are read (GET /lake/files/{u}/annotations?operation=) and
//     written back changed (PUT /lake/annotations, one request per operation);
//   - human boxes of a project: the frame is read and written on its version
//     (GET, PUT /projects/{p}/frames/{u}/annotations with If-Match);
//   - machine boxes on a task's frame: rejected as the workspace does
//     (POST .../suggestions {action: reject}); relabelling one there accepts it
//     and relabels the human box it becomes.
// Machine boxes outside any task have no route that edits them: they are
// counted as skipped, with the reason.
//
// action is 'reject' or 'relabel' (with label). The answer counts the boxes
// changed and lists why the others were not.
export async function applyToPatches(patches, action, label) {
  const out = { changed: 0, skipped: [] }
  const groups = new Map()
  for (const p of patches) {
    const kind = p.source === 'machine' ? 'machine' : p.operation?.startsWith('import:') ? 'import' : 'project'
    const k = kind + '\0' + p.operation
    if (!groups.has(k)) groups.set(k, { kind, operation: p.operation, patches: [] })
    groups.get(k).patches.push(p)
  }
  for (const g of groups.values()) {
    try {
      if (g.kind === 'import') out.changed += await importBoxes(g, action, label)
      else if (g.kind === 'project') out.changed += await projectBoxes(g, action, label)
      else await machineBoxes(g, action, label, out)
    } catch (e) {
      out.skipped.push(`${g.patches.length} ${g.kind} boxes of ${g.operation}: ${e.message}`)
    }
  }
  return out
}

const byFile = (ps) => {
  const m = new Map()
  for (const p of ps) m.set(p.uniqueName, [...(m.get(p.uniqueName) ?? []), p])
  return m
}

// edit applies the action to the boxes whose ids are in ids.
const edit = (boxes, ids, action, label) => action === 'reject'
  ? boxes.filter((b) => !ids.has(b.id))
  : boxes.map((b) => (ids.has(b.id) ? { ...b, label } : b))

// wire is a box or shape as it is written back: a shape keeps its type and
// geometry, or relabelling a polygon would store its box instead.
const wire = (b) => {
  const out = { label: b.label, x: b.x, y: b.y, width: b.width, height: b.height, attributes: b.attributes ?? {}, frame: b.frame ?? 0 }
  for (const f of ['type', 'polygon', 'mask', 'keypoints', 'points']) if (b[f] != null) out[f] = b[f]
  return out
}

// frameWire is a shape as a project frame's PUT takes it: a frame is one
// image, and the route refuses the lake's frame field (unknown field).
const frameWire = (b) => {
  const w = wire(b)
  delete w.frame
  return w
}

async function importBoxes(g, action, label) {
  const files = []
  let n = 0
  for (const [name, ps] of byFile(g.patches)) {
    const r = await api(`/lake/files/${encodeURIComponent(name)}/annotations?operation=${encodeURIComponent(g.operation)}`)
    const ids = new Set(ps.map((p) => p.id))
    n += r.annotations.filter((a) => ids.has(a.id)).length
    files.push({ uniqueName: name, annotations: edit(r.annotations, ids, action, label).map(wire) })
  }
  await api('/lake/annotations', { method: 'PUT', body: { operation: g.operation, files } })
  return n
}

async function projectBoxes(g, action, label) {
  let n = 0
  for (const [name, ps] of byFile(g.patches)) {
    const path = `/projects/${encodeURIComponent(g.operation)}/frames/${encodeURIComponent(name)}/annotations`
    const st = await api(path)
    const ids = new Set(ps.map((p) => p.id))
    n += st.annotations.filter((a) => ids.has(a.id)).length
    await putOn(path, edit(st.annotations, ids, action, label).map(frameWire), st.version)
  }
  return n
}

async function putOn(path, body, version) {
  const r = await fetch('/api/v1' + path, { method: 'PUT', body: JSON.stringify(body),
    headers: { ...authHeaders('PUT'), 'content-type': 'application/json', 'If-Match': String(version) } })
  if (!r.ok) throw new Error((await r.json().catch(() => null))?.error?.message ?? 'HTTP ' + r.status)
}

async function machineBoxes(g, action, label, out) {
  const tasks = new Map()
  for (const p of g.patches) {
    if (!p.taskId) {
      out.skipped.push(`${p.label} on ${p.uniqueName}: a model's box outside any task can only be reviewed in a task`)
      continue
    }
    if (!tasks.has(p.taskId)) tasks.set(p.taskId, api('/tasks/' + encodeURIComponent(p.taskId)))
    const t = await tasks.get(p.taskId)
    const base = `/projects/${encodeURIComponent(t.projectId)}/frames/${encodeURIComponent(p.uniqueName)}`
    await api(base + '/suggestions', { method: 'POST', body: { action: action === 'reject' ? 'reject' : 'accept', ids: [p.id] } })
    if (action === 'relabel' && label !== p.label) {
      // The accepted box is the frame's newest human box of the old label at that place.
      const st = await api(base + '/annotations')
      const i = st.annotations.findLastIndex((a) => a.label === p.label && Math.abs(a.x - p.x) < 0.01 && Math.abs(a.y - p.y) < 0.01)
      if (i >= 0) await putOn(base + '/annotations', st.annotations.map((a, j) => (j === i ? { ...a, label } : a)).map(frameWire), st.version)
    }
    out.changed++
  }
}
