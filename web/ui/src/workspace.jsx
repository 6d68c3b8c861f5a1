import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from './api.js'
import { FrameCanvas } from './canvas.jsx'
import { Saver, fromWire, loadFrame, newKey } from './frameio.js'
import { navigate } from './router.js'
import { Attributes, Disagreements, FrameStrip, ModelRun, Suggestions, VideoTools } from './wspanels.jsx'
import { useZoom } from './zoom.js'
import { useFit } from './labels.js'
import { ShapeEditor } from './draw.js'
import { maskPath } from './shapes.jsx'
import { HelpOverlay, ShapeTools, TOOL_KEYS, Visibility } from './wstools.jsx'
import { HomeCrumb, JobBar, jobEditable, jobFrames, jobRole, useJob } from './jobws.jsx'
import { CommentMarkers, CommentsPanel, useComments } from './comments.jsx'
import { HistoryPanel } from './history.jsx'
import { AssistPanel, useAssists } from './assistws.jsx'
import { isCurator, mayWrite } from './team.js'
import './workspace.css'

const typing = () => /INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName)

// TaskWorkspace is a task's annotation page (/tasks/<id>?frame=N, the first
// frame by default): the frame with its boxes, drawn, moved, resized,
// relabelled and deleted in place; each change is saved at once on the
// frame's version, and a change someone else made first is shown instead of
// being written over. With job (a number) it is that labelling job's
// workspace: its frames only, editable as the job allows (jobws.jsx).
export function TaskWorkspace({ id, job: jobNo, search, me }) {
  const jobh = useJob(id, jobNo)
  const canWrite = mayWrite(me) && (!jobNo || (!!jobh.job && jobEditable(jobh.job, me)))
  const [ws, setWs] = useState(null)
  const [error, setError] = useState(null)
  const idx = Math.max(0, +new URLSearchParams(search).get('frame') || 0)
  const [frame, setFrame] = useState(null) // the frame's state: version, suggestions
  const [boxes, setBoxes] = useState([])
  const [sel, setSel] = useState(null) // {index} of a box or {suggestion} id
  const [label, setLabel] = useState(null)
  const [conflict, setConflict] = useState(null)
  const [note, setNote] = useState('')
  const [minConf, setMinConf] = useState(0.5) // suggestions shown and accepted in bulk from this confidence
  const [loaded, setLoaded] = useState(null) // the uniqueName whose image has loaded
  const [tool, setTool] = useState('box')
  const [brush, setBrush] = useState(12) // the brush's radius in image pixels
  const [hole, setHole] = useState(false) // the next polygon is a hole of the selected one
  const [opacity, setOpacity] = useState(0.35)
  const [hide, setHide] = useState({ types: [], labels: [] })
  const [help, setHelp] = useState(false)
  const [draftNote, setDraftNote] = useState('')
  const [preview, setPreview] = useState(null) // an earlier version shown from the history
  const [pin, setPin] = useState(null) // the comment picked in the list or on the frame
  const jobKeys = useRef(null)
  const editor = useRef(null)
  if (!editor.current) editor.current = new ShapeEditor()
  const hist = useRef({ undo: [], redo: [] })
  const saver = useRef(null)
  const onKey = useRef(null)
  const cur = ws?.frames[Math.min(idx, ws.frames.length - 1)]
  const zoom = useZoom(cur?.uniqueName)
  const { ref: stage, fit } = useFit(cur?.width, cur?.height)

  useEffect(() => {
    setError(null)
    Promise.all([api('/tasks/' + encodeURIComponent(id) + '/frames'), jobNo && api(`/tasks/${encodeURIComponent(id)}/jobs/${jobNo}`)]).then(([w, j]) => {
      if (j) w = jobFrames(w, j)
      setWs(w)
      setLabel(w.labels[0]?.labelName ?? null)
    }, setError)
  }, [id, jobNo])

  const here = jobNo ? `/tasks/${encodeURIComponent(id)}/jobs/${jobNo}` : `/tasks/${encodeURIComponent(id)}`
  const goFrame = (i) => {
    if (!ws || i < 0 || i >= ws.frames.length) return
    navigate(`${here}?frame=${i}`, { replace: true })
  }
  // The task's status follows its jobs: asked again when the job moves.
  useEffect(() => {
    if (jobh.job) api('/tasks/' + encodeURIComponent(id)).then((task) => setWs((w) => w && { ...w, task }), () => {})
  }, [jobh.job?.state])
  const comments = useComments({ projectId: ws?.projectId, taskId: id, job: jobNo, uniqueName: cur?.uniqueName })

  // Loading a frame: its image and boxes, a saver on its version. The
  // neighbours' states and decoded images are fetched ahead, once the frame
  // being left has saved, and checked again when opened.
  const ahead = useRef(new Map())
  const prefetch = (i) => {
    const f = ws.frames[i]
    if (!f || ahead.current.has(f.uniqueName)) return
    const im = new Image()
    im.src = f.url
    const state = loadFrame(ws.projectId, f.uniqueName)
    // Its masks are decoded while the browser is idle, so opening it only draws them.
    state.then((st) => requestIdleCallback(() => st.annotations.forEach((a) => { if (a.type === 'mask') try { maskPath(a.mask) } catch {} })), () => {})
    ahead.current.set(f.uniqueName, { state, image: im.decode().catch(() => {}), im })
  }
  useEffect(() => {
    if (!cur) return
    let live = true
    setFrame(null)
    setSel(null)
    setConflict(null)
    setPreview(null)
    hist.current = { undo: [], redo: [] }
    const left = saver.current?.chain ?? Promise.resolve()
    const kept = ahead.current.get(cur.uniqueName)
    ahead.current.delete(cur.uniqueName)
    const show = (st) => {
      if (!live) return
      setFrame(st)
      setBoxes(st.annotations.map(fromWire))
      saver.current = new Saver(ws.projectId, cur.uniqueName, st.version, {
        onSaved: (r) => {
          setNote('saved')
          setFrame((f) => (f && f.uniqueName === r.uniqueName ? { ...f, version: r.version, annotated: true } : f))
          setWs((w) => ({ ...w, task: r.task ?? w.task, frames: w.frames.map((f) => (f.uniqueName === r.uniqueName ? { ...f, annotated: true, version: r.version } : f)) }))
        },
        onConflict: (current) => { setNote(''); setConflict(current) },
        onError: (e) => setNote('not saved: ' + e.message),
      })
    }
    const fresh = () => loadFrame(ws.projectId, cur.uniqueName)
    ;(kept ? kept.state.catch(fresh) : fresh()).then((st) => {
      show(st)
      if (!kept) return
      // Fetched ahead: someone may have changed it since; take theirs if
      // this tab has not edited it yet.
      fresh().then((now) => {
        if (live && now.version !== st.version && saver.current?.version === st.version) show(now)
      }, () => {})
    }, setError)
    left.then(() => { if (live) { prefetch(idx + 1); prefetch(idx - 1) } })
    return () => { live = false }
  }, [cur?.uniqueName])

  // commit makes boxes the frame's and saves them at once.
  const commit = (next, selIndex = null) => {
    if (!canWrite || conflict) return
    hist.current.undo.push(boxes)
    hist.current.redo = []
    setBoxes(next)
    setSel(selIndex == null ? null : { index: selIndex })
    setNote('saving…')
    saver.current.save(next)
  }
  const undo = (from, to) => {
    const h = hist.current
    if (!h[from].length || conflict) return
    h[to].push(boxes)
    const prev = h[from].pop()
    setBoxes(prev)
    setSel(null)
    setNote('saving…')
    saver.current.save(prev)
  }
  const relabel = (name) => {
    setLabel(name)
    if (sel?.index != null && boxes[sel.index] && boxes[sel.index].label !== name) {
      commit(boxes.map((b, i) => (i === sel.index ? { ...b, label: name } : b)), sel.index)
    }
  }
  const decide = async (body) => {
    setNote('saving…')
    const r = await saver.current.decide(body)
    if (!r) return
    const st = await loadFrame(ws.projectId, cur.uniqueName)
    setFrame(st)
    setBoxes(st.annotations.map(fromWire))
    saver.current.resume(st.version)
    if (body.action === 'accept' && body.ids?.length === 1) setSel({ index: st.annotations.length - 1 })
  }
  const reloadFrame = async () => {
    const st = await loadFrame(ws.projectId, cur.uniqueName)
    setFrame(st)
    setBoxes(st.annotations.map(fromWire))
    saver.current?.resume(st.version)
  }

  const assists = useAssists({ ws, cur, idx, boxes, selected: sel?.index != null ? boxes[sel.index] : null, selIndex: sel?.index,
    label, commit, goFrame, setNote })
  // skeletonOf gives a label's declared keypoints and skeleton (the
  // project's labels), or nothing: its points are then drawn alone.
  const skeletonOf = (name) => ws?.labels.find((l) => l.labelName === name && l.keypoints?.length)
  const hidden = (a) => hide.types.includes(a.type || 'box') || hide.labels.includes(a.label)
  const classify = () => {
    if (!label || boxes.some((b) => b.type === 'class' && b.label === label)) return
    commit([...boxes, { key: newKey(), label, attributes: {}, source: 'human', type: 'class' }], boxes.length)
  }

  // The key handler is replaced at every render, not in an effect: effects run
  // after paint, and a key pressed right after a click (select, then Delete)
  // would otherwise meet the handler of the render before the click.
  onKey.current = (e) => {
    if (typing() || !ws) return
    if (jobKeys.current?.(e)) { e.preventDefault(); return }
    const mod = e.ctrlKey || e.metaKey
    if (mod && e.key.toLowerCase() === 'z') undo(e.shiftKey ? 'redo' : 'undo', e.shiftKey ? 'undo' : 'redo')
    else if (mod && e.key.toLowerCase() === 'y') undo('redo', 'undo')
    else if (mod) return
    else if (e.key === 'Enter' && canWrite && assists.accept()) {}
    else if (e.key === 'Enter' && editor.current.finish()) {}
    else if (e.key === 'Escape' && editor.current.cancel()) {}
    else if (e.key === 'Escape' && assists.drop()) {}
    else if (e.key === 'o' && canWrite && assists.convert()) {}
    else if (e.key === 't' && canWrite) assists.track()
    else if ((e.key === '[' || e.key === ']') && assists.proposal?.kind === 'outline') assists.setOutlineTol(Math.max(0, Math.min(20, assists.polyTol + (e.key === ']' ? 0.5 : -0.5))))
    else if ((e.key === '[' || e.key === ']') && tool === 'wand') assists.setWand(Math.max(0, Math.min(128, assists.wandTol + (e.key === ']' ? 4 : -4))))
    else if (e.key === '?') setHelp((h) => !h)
    else if (TOOL_KEYS[e.key] && canWrite) { editor.current.cancel(); setTool(TOOL_KEYS[e.key]) }
    else if (e.key === 'c' && canWrite) classify()
    else if (e.key === 'h' && canWrite) setHole((h) => !h)
    else if (e.key === 'n' && editor.current.skip()) {}
    else if (e.key === '[') setBrush((b) => Math.max(1, Math.round(b / 1.25)))
    else if (e.key === ']') setBrush((b) => Math.min(500, Math.round(b * 1.25) + 1))
    else if (e.key === 'ArrowRight' || e.key === 'd') goFrame(idx + 1)
    else if (e.key === 'ArrowLeft' || e.key === 'a') goFrame(idx - 1)
    else if ((e.key === 'Delete' || e.key === 'Backspace') && sel?.index != null) commit(boxes.filter((_, i) => i !== sel.index))
    else if (e.key === 'Escape') { setSel(null); setHelp(false) }
    else if (e.key === 'e' && boxes.length === 0) commit([])
    else if (/^[1-9]$/.test(e.key) && ws.labels[+e.key - 1]) relabel(ws.labels[+e.key - 1].labelName)
    else return
    e.preventDefault()
  }
  useEffect(() => {
    const key = (e) => onKey.current?.(e)
    addEventListener('keydown', key)
    return () => removeEventListener('keydown', key)
  }, [])

  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!ws || !cur) return <div class="loading-page">Loading…</div>
  const t = ws.task
  const done = ws.frames.filter((f) => f.annotated).length
  const setTask = (status) => api('/tasks/' + encodeURIComponent(id), { method: 'PATCH', body: { status } })
    .then((task) => { setWs((w) => ({ ...w, task })); setNote(status === 2 ? 'task completed' : 'task reopened') }, (e) => setNote(e.message))
  const selected = sel?.index != null ? boxes[sel.index] : null
  const commentsPanel = (
    <CommentsPanel projectId={ws.projectId} uniqueName={cur.uniqueName} job={jobNo} comments={comments.all} selected={selected}
      onChanged={() => { comments.refresh(); jobh.refresh() }} picked={pin} onPick={setPin} canComment={mayWrite(me)}
      canResolve={mayWrite(me) && (!jobNo || jobRole(jobh.job, me) !== '')} goFrameNamed={(n) => goFrame(ws.frames.findIndex((f) => f.uniqueName === n))} />
  )
  return (
    <div class="workspace" data-testid="workspace" data-task-id={t.id}>
      <div class="ws-top">
        <HomeCrumb me={me} />
        <strong>{t.taskName}</strong>
        <span class="muted">{t.projectName}</span>
        <span data-testid="task-status" data-status={t.status}>{['not started', 'in progress', 'completed'][t.status]}</span>
        <span class="muted">{done} / {ws.frames.length} frames annotated</span>
        <span class="muted">frame {idx + 1} of {ws.frames.length}</span>
        <button class="ghost" data-testid="frame-prev" onClick={() => goFrame(idx - 1)} disabled={idx === 0}>← Prev</button>
        <button class="ghost" data-testid="frame-next" onClick={() => goFrame(idx + 1)} disabled={idx >= ws.frames.length - 1}>Next →</button>
        {canWrite && !jobNo && (t.status === 2
          ? <button class="ghost" data-testid="task-reopen" onClick={() => setTask(1)}>Reopen</button>
          : <button data-testid="task-complete" onClick={() => setTask(2)}>Mark done</button>)}
        <span class="ws-note" data-testid="save-state">{note}</span>
      </div>
      {jobNo && <JobBar taskId={id} jobh={jobh} me={me} setNote={setNote} frameName={cur.uniqueName} keys={jobKeys} />}
      {conflict && (
        <div class="conflict" data-testid="conflict" role="alert" data-version={conflict.version}>
          Someone else changed this frame first (now version {conflict.version}, {conflict.annotations.length} boxes:
          {' '}{conflict.annotations.map((a) => a.label).join(', ') || 'none'}). Your change was not saved.
          <button class="ghost" data-testid="conflict-load" onClick={() => {
            setBoxes(conflict.annotations.map(fromWire)); saver.current.resume(conflict.version)
            hist.current = { undo: [], redo: [] }; setConflict(null)
          }}>Show their boxes</button>
          <button class="ghost" data-testid="conflict-overwrite" onClick={() => {
            saver.current.resume(conflict.version); setConflict(null); saver.current.save(boxes)
          }}>Keep mine</button>
        </div>
      )}
      <div class="ws-body">
        <div class="stage ws-stage" ref={stage}>
          <FrameCanvas frame={cur} boxes={preview?.boxes ?? boxes} suggestions={(frame?.suggestions ?? []).filter((s) => s.confidence >= minConf || s.id === sel?.suggestion)} selected={sel}
            onSelect={(index, suggestion) => setSel(index != null ? { index } : suggestion ? { suggestion } : null)}
            onChange={commit} label={label} readOnly={!canWrite || !!conflict || !!preview} ready={loaded === cur.uniqueName && frame?.uniqueName === cur.uniqueName}
            onLoad={() => setLoaded(cur.uniqueName)} zoomRef={zoom.ref} zoomStyle={zoom.style} fit={fit} zoom={zoom.scale}
            editor={editor.current} tool={canWrite ? tool : 'box'} brush={brush} hole={hole} opacity={opacity} hidden={hidden} skeletonOf={skeletonOf} onDraft={setDraftNote}
            proposal={assists.proposal} onAssist={assists.onAssist}>
            <CommentMarkers comments={comments.all.filter((c) => c.uniqueName === cur.uniqueName)} frame={cur} picked={pin} onPick={setPin} />
          </FrameCanvas>
          {help && <HelpOverlay onClose={() => setHelp(false)} />}
        </div>
        <aside class="details ws-side">
          {jobNo && commentsPanel}
          <h3>Labels</h3>
          <ul class="labels">
            {ws.labels.map((l, i) => (
              <li><button class={'label-option' + (l.labelName === label ? ' on' : '')} data-testid="label-option" data-label={l.labelName}
                onClick={() => relabel(l.labelName)} title={l.labelDescription}>
                <kbd>{i < 9 ? i + 1 : ''}</kbd> {l.labelName}
              </button></li>
            ))}
          </ul>
          <p class="muted" data-testid="shape-count">{countOf(boxes)}{frame && !frame.annotated && ' · not annotated yet'}</p>
          {canWrite && <button class="ghost" data-testid="frame-empty" onClick={() => commit([])}>No objects (e)</button>}
          {canWrite && <ShapeTools tool={tool} setTool={(t) => { editor.current.cancel(); setTool(t) }} brush={brush} hole={hole} setHole={setHole} draft={draftNote} classify={classify} label={label} skeleton={skeletonOf(label)} />}
          {canWrite && <AssistPanel as={assists} tool={tool} selected={selected} hasNext={idx < ws.frames.length - 1} />}
          <Visibility boxes={boxes} hide={hide} setHide={setHide} opacity={opacity} setOpacity={setOpacity} />
          {selected && <Attributes box={selected} spec={ws.labels.find((l) => l.labelName === selected.label)?.attributes}
            onChange={(attributes) => commit(boxes.map((b, i) => (i === sel.index ? { ...b, attributes } : b)), sel.index)} />}
          {canWrite && <Suggestions suggestions={frame?.suggestions ?? []} selected={sel?.suggestion} onDecide={decide} min={minConf} setMin={setMinConf} onPick={(id) => setSel({ suggestion: id })} />}
          <Disagreements boxes={boxes} suggestions={(frame?.suggestions ?? []).filter((s) => s.confidence >= minConf)} onPick={setSel} />
          {!jobNo && commentsPanel}
          <HistoryPanel projectId={ws.projectId} uniqueName={cur.uniqueName} version={frame?.version} preview={preview} setPreview={setPreview}
            canRestore={canWrite || isCurator(me)} onRestored={() => reloadFrame()} />
          {canWrite && <ModelRun ws={ws} onDone={reloadFrame} />}
          {canWrite && <VideoTools ws={ws} idx={idx} boxes={boxes} selected={selected} goFrame={goFrame} setNote={setNote} />}
          {canWrite
            ? <p class="muted keys" data-testid="ws-hints">drag on the image to draw · drag a box to move, its corners to resize · 1–9 label ·
              Del delete · Ctrl+Z / Ctrl+Shift+Z undo, redo · ← → or a d frames · e no objects · wheel, + − zoom, Space-drag pan, 0 resets · ? all keys</p>
            : <p class="muted keys" data-testid="ws-hints">{jobNo ? 'read-only now' : 'read-only key'}: boxes are shown, not edited · ← → or a d frames · wheel, + − zoom, drag to pan, 0 resets</p>}
        </aside>
      </div>
      <FrameStrip frames={ws.frames} idx={idx} goFrame={goFrame} />
    </div>
  )
}

// countOf names how many shapes a frame has: boxes while all are boxes.
function countOf(shapes) {
  const boxesOnly = shapes.every((a) => (a.type || 'box') === 'box')
  const n = shapes.length
  return `${n} ${boxesOnly ? (n === 1 ? 'box' : 'boxes') : n === 1 ? 'shape' : 'shapes'}`
}
