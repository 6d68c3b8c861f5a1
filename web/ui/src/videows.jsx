import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api } from './api.js'
import { framePixels, shapeBox, shifted, trackShift } from './assist.js'
import { FrameCanvas } from './canvas.jsx'
import { DraftInput } from './draftinput.jsx'
import { HistoryPanel } from './history.jsx'
import { ShapeEditor } from './draw.js'
import { useFit } from './labels.js'
import { PlayRate, usePlayRate } from './playrate.jsx'
import { progressOf } from './progress.js'
import { navigate } from './router.js'
import { Timeline } from './timeline.jsx'
import { FrameCache, deleteTrack, frameShapes, keyOf, loadTracks, mergeTracks, moveKeyframe, propagate, putAllTracks, putTrack,
  removeKeyframe, setKeyframe, shapeAt, splitTrack, toggleOutside, videoSource } from './tracks.js'
import { JobBar, jobEditable, jobUrl } from './jobws.jsx'
import { isCurator } from './team.js'
import { TOOL_KEYS } from './wstools.jsx'
import { useZoom } from './zoom.js'
import './workspace.css'
import './videows.css'

const typing = () => /INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName)
export const videoLabelPath = (name, q = {}) => '/videos/' + encodeURIComponent(name) + '/label' +
  (Object.keys(q).length ? '?' + new URLSearchParams(q) : '')
const DEFAULT_OP = 'label:web'

// VideoWorkspace labels a lake video's tracks where it lies in the lake
// (/videos/<uniqueName>/label?frame=N&op=...): the exact frame from the
// frames route (neighbours fetched ahead), every track of one operation
// drawn on it (keyframes solid, interpolated shapes dashed), the timeline
// under it, and the track's tools beside it. Each edit is saved at once as
// PUT tracks/{number}; a split or merge, which changes two tracks, as one
// PUT of the operation's tracks.
//
// Drawing: a box (or polygon) drawn while the selected track is not on the
// frame adds a keyframe to it; otherwise it starts a new track with the
// label chosen. Moving or resizing a shape makes it a keyframe of its track
// on this frame, interpolated or not.
//
// Track to the next frame (t, as in the image workspace: assist.js's
// template matching on the frame's pixels) moves the selected track's shape
// here onto the next frame as a draft (cyan) that Enter makes its keyframe
// there and Esc drops.
//
// Intelligent scissors (i, as in the image workspace: draw.js and
// scissors.js on the frame shown) close into a polygon draft that Enter
// saves as a drawn polygon is saved: a keyframe here.
//
// Task mode (task = {projectId, taskId, jobh}: a job of a task made from a
// lake video, videotask.jsx) reads and writes through the project's routes
// (the project's tracks), keeps to the job's frames, and has the job's bar
// (submit, review) over the frame.
export function VideoWorkspace({ name, search, me, task }) {
  const ljob = task?.jobh.job // the labelling job
  const src = task ? videoSource(name, task.projectId) : name
  const canWrite = task ? jobEditable(ljob, me) : me.role !== 'read'
  const first = task ? ljob.frames[0]?.frame ?? 0 : 0 // task mode: the job's frames
  const jobKeys = useRef(null)
  const params = new URLSearchParams(search)
  const [item, setItem] = useState(null)
  const [error, setError] = useState(null)
  const [op, setOp] = useState(params.get('op') || null)
  const [ops, setOps] = useState([])
  const [tracks, setTracks] = useState(null)
  const [frame, setFrame] = useState(Math.max(first, +params.get('frame') || 0))
  const [shown, setShown] = useState(null) // {frame, url}: the image on screen
  const [exact, setExact] = useState({}) // frame -> the server's shapes, for non-box interpolation
  const [selected, setSelected] = useState([]) // track numbers; the last is the one edited
  const [label, setLabel] = useState('object')
  const [tool, setTool] = useState('box')
  const [note, setNote] = useState('')
  const [playing, setPlaying] = useState(false)
  const [job, setJob] = useState(null) // {id, backward, status, pct, result, error}
  const [every, setEvery] = useState(10)
  const [preview, setPreview] = useState(null) // a version of the frame's keyframes from the history
  const [proposal, setProposal] = useState(null) // {kind: 'track' | 'scissors', frame: frameObj's uniqueName, shape, ...}: a draft
  const [draft, setDraft] = useState('') // the editor's word on the shape being drawn (the scissors' anchors)
  const editor = useRef(null)
  if (!editor.current) editor.current = new ShapeEditor()
  const cache = useRef(null)
  const frameRef = useRef(frame)
  frameRef.current = frame
  const onKey = useRef(null)
  const zoom = useZoom(name)
  const { ref: stage, fit } = useFit(item?.width, item?.height)
  const last = task ? ljob.frames[ljob.frames.length - 1]?.frame ?? 0 : Math.max(0, (item?.frameCount || 1) - 1)
  const fps = item?.frameRate || 25
  const rate = usePlayRate(playing, shown)

  useEffect(() => {
    setError(null)
    cache.current = new FrameCache(src)
    if (task) { // the job names its video: annotators have no lake-wide read
      const v = ljob.video
      setOp(task.projectId)
      setItem({ name: v.uniqueName, uniqueName: v.uniqueName, type: 'video', width: v.width, height: v.height, frameCount: v.frameCount, frameRate: v.frameRate })
      return () => cache.current?.close()
    }
    api('/lake/files/' + encodeURIComponent(name)).then(async (it) => {
      if (it.type !== 'video') throw new Error(`${name} is a ${it.type}, not a video`)
      const all = await loadTracks(name)
      const names = [...new Set(all.map((t) => t.operation))]
      setOps(names)
      setOp((o) => o ?? all.find((t) => t.source === 'human')?.operation ?? names[0] ?? DEFAULT_OP)
      setItem(it)
    }).catch(setError)
    return () => cache.current?.close()
  }, [name])

  const reload = () => loadTracks(src, op).then((ts) => { setTracks(ts); setExact({}) }, setError)
  useEffect(() => { if (op && item) { setTracks(null); reload() } }, [op, item])

  // The frame's image: shown once decoded, with the shapes of its frame, so
  // image and shapes never disagree; its neighbours are fetched ahead.
  useEffect(() => {
    if (!item) return
    let live = true
    cache.current.get(frame).then((url) => live && setShown({ frame, url }), (e) => live && setNote('frame ' + frame + ': ' + e.message))
    if (!playing) cache.current.get(frame).then(() => cache.current.ahead(frame + 1, 2, last), () => {})
    return () => { live = false }
  }, [frame, item, op])
  // The address follows the frame, once play stops: a replaceState a frame
  // costs the browser a favicon fetch and a history write 10-30 times a second.
  useEffect(() => {
    if (!item || playing) return
    history.replaceState(null, '', task ? jobUrl(task.taskId, ljob.number) + '?frame=' + frame : videoLabelPath(name, { frame, ...(op ? { op } : {}) }))
  }, [frame, item, op, playing])

  // Shapes of types other than boxes are interpolated by the server's rules
  // (polygons resample): the frame's are asked of it when one is between
  // keyframes.
  const at = shown?.frame ?? frame
  const needExact = (tracks ?? []).some((t) => shapeAt(t, at)?.approx)
  useEffect(() => {
    if (!needExact || exact[at]) return
    let live = true
    frameShapes(src, at, op).then((s) => live && setExact((e) => ({ ...e, [at]: new Map(s.map((x) => [x.number, x])) })), () => {})
    return () => { live = false }
  }, [needExact, at, tracks])

  const shapes = useMemo(() => {
    const out = []
    for (const t of tracks ?? []) {
      let s = shapeAt(t, at)
      if (!s) continue
      if (s.approx) s = { ...(exact[at]?.get(t.number) ?? s), interpolated: true }
      out.push({ ...s, key: 't' + t.number, number: t.number, label: t.label, source: 'human', attributes: s.attributes ?? {} })
    }
    return out
  }, [tracks, at, exact])

  useEffect(() => { setProposal((p) => (p && p.frame === name + '@' + at ? p : null)); setDraft('') }, [at])

  const byNumber = (n) => tracks?.find((t) => t.number === n)
  const primary = selected.length ? byNumber(selected[selected.length - 1]) : null
  const goFrame = (f) => setFrame(Math.max(first, Math.min(last, f)))

  // save replaces one track here and on the server (the server's answer,
  // ids and derived boxes included, replaces the local copy).
  const save = async (t) => {
    setTracks((ts) => (ts.some((x) => x.number === t.number) ? ts.map((x) => (x.number === t.number ? t : x)) : [...ts, t].sort((a, b) => a.number - b.number)))
    setExact({})
    setNote('saving…')
    try {
      const got = await putTrack(src, op, t)
      setTracks((ts) => ts.map((x) => (x.number === got.number ? got : x)))
      setNote('saved')
      if (!ops.includes(op)) setOps((o) => [...o, op])
    } catch (e) {
      setNote('not saved: ' + e.message)
      reload()
    }
  }
  const saveAll = async (next, what) => {
    setTracks(next)
    setExact({})
    setNote('saving…')
    try {
      await putAllTracks(src, op, next)
      setNote(what)
      reload()
    } catch (e) {
      setNote('not saved: ' + e.message)
      reload()
    }
  }
  const nextNumber = () => (tracks ?? []).reduce((m, t) => Math.max(m, t.number), 0) + 1

  // onChange hears a finished gesture of the frame canvas: shape i changed
  // (a keyframe of its track here), or a new one drawn past the list's end.
  const keyHere = (s) => {
    const kf = keyOf({ ...s, frame: at })
    for (const f of ['key', 'number', 'label', 'source', 'operation', 'track', 'id', '_bits']) delete kf[f]
    return kf
  }
  const onChange = (next, i) => {
    if (!canWrite || !tracks) return
    const s = next[i]
    const kf = keyHere(s)
    const type = s.type || 'box'
    if (i < shapes.length) return save(setKeyframe(byNumber(shapes[i].number), kf))
    const t = primary
    if (t && !shapeAt(t, at) && (t.type || 'box') === type) return save(setKeyframe(t, kf))
    const n = nextNumber()
    setSelected([n])
    save({ number: n, label, type, keyframes: [kf], outside: [] })
  }

  const edit = (f, what) => {
    if (!primary || !canWrite) return
    try {
      const t = f(primary)
      if (t) save(t)
      else if (what) setNote(what)
    } catch (e) {
      setNote(e.message)
    }
  }
  const removeKey = () => {
    if (!primary || !canWrite) return
    if (!primary.keyframes.some((k) => k.frame === at)) return setNote(`track #${primary.number} has no keyframe on frame ${at}`)
    const t = removeKeyframe(primary, at)
    if (t) return save(t)
    dropTrack(primary.number)
  }
  const dropTrack = async (n) => {
    setTracks((ts) => ts.filter((t) => t.number !== n))
    setSelected([])
    try {
      await deleteTrack(src, op, n)
      setNote(`track #${n} deleted`)
    } catch (e) {
      setNote('not deleted: ' + e.message)
      reload()
    }
  }
  const split = () => {
    if (!primary) return
    const parts = splitTrack(primary, at, nextNumber())
    if (!parts) return setNote(`track #${primary.number} cannot be split on frame ${at}: a part would be empty`)
    setSelected([parts[1].number])
    saveAll([...tracks.filter((t) => t.number !== primary.number), ...parts].sort((a, b) => a.number - b.number),
      `track #${primary.number} split: #${parts[1].number} from frame ${at}`)
  }
  const merge = () => {
    if (selected.length !== 2) return
    const [a, b] = selected.map(byNumber).sort((x, y) => x.keyframes[0].frame - y.keyframes[0].frame)
    if ((a.type || 'box') !== (b.type || 'box')) return setNote(`#${a.number} is a ${a.type} track, #${b.number} a ${b.type}: one type a track`)
    const m = mergeTracks(a, b)
    setSelected([a.number])
    saveAll(tracks.filter((t) => t.number !== b.number).map((t) => (t.number === a.number ? m : t)), `#${b.number} merged into #${a.number}`)
  }
  const moveKey = (n, from, to) => {
    const t = byNumber(n)
    const moved = t && moveKeyframe(t, from, to)
    if (!moved) return setNote(`the keyframe stays on frame ${from}: it cannot pass its neighbours`)
    save(moved)
    goFrame(moved.keyframes.find((k, j) => t.keyframes[j].frame === from).frame)
  }
  // trackNext proposes the selected track's shape here moved onto the next
  // frame by the motion of its box's pixels (assist.js trackShift, on the
  // frames as shown: the frames route's images at the video's size).
  const trackNext = async () => {
    const s = primary && shapes.find((x) => x.number === primary.number)
    if (!s || !canWrite) return setNote(primary ? `track #${primary.number} is not on frame ${at}` : 'select a track to follow')
    if (at >= last) return setNote(`frame ${at} is the last here`)
    setNote('tracking…')
    try {
      const t0 = performance.now()
      const [ua, uc] = await Promise.all([cache.current.get(at), cache.current.get(at + 1)])
      const [a, c] = await Promise.all([framePixels(ua, item.width, item.height), framePixels(uc, item.width, item.height)])
      const box = (s.type || 'box') === 'box'
      const b = box ? { x: Math.round(s.x), y: Math.round(s.y), width: Math.round(s.width), height: Math.round(s.height) } : shapeBox(s)
      if (!b || b.width < 2 || b.height < 2) throw new Error('the shape is empty')
      const m = trackShift(a, c, b)
      const moved = box ? { ...s, x: s.x + m.dx, y: s.y + m.dy } : shifted(s, m.dx, m.dy)
      delete moved.interpolated
      setProposal({ kind: 'track', frame: name + '@' + (at + 1), number: s.number, shape: moved, dx: m.dx, dy: m.dy, score: m.score, ms: performance.now() - t0 })
      setNote('')
      goFrame(at + 1)
    } catch (e) { setNote('not tracked: ' + e.message) }
  }
  // onAssist takes the scissors' closed outline (draw.js) as a draft here.
  const onAssist = (a) => {
    if (a.kind !== 'scissors') return
    const vertices = a.polygon.reduce((n, r) => n + r.length / 2, 0)
    setProposal({ kind: 'scissors', frame: name + '@' + at, vertices, shape: { type: 'polygon', polygon: a.polygon, label, attributes: {} } })
  }
  // acceptProposal makes the draft its track's keyframe on its frame (a
  // tracked draft), or a drawn polygon's keyframe (the scissors').
  const acceptProposal = () => {
    const p = proposal
    if (!p || p.frame !== name + '@' + at) return false
    setProposal(null)
    if (p.kind === 'scissors') {
      onChange([...shapes, { ...p.shape, label }], shapes.length)
      return true
    }
    const t = byNumber(p.number)
    if (t && canWrite) save(setKeyframe(t, keyHere(p.shape)))
    return true
  }

  const track = async (backward) => {
    if (!primary) return
    const number = primary.number
    setJob({ number, backward, status: 'queued', pct: 0 })
    try {
      const r = await propagate(src, op, number, { from: at, backward, every: Math.max(1, +every || 10) })
      setJob({ id: r.jobId, number, backward, status: 'queued', pct: 0 })
    } catch (e) {
      setJob({ number, backward, status: 'failed', error: e.message })
    }
  }
  // A propagation job is polled until it ends, its frames done of its total
  // shown as they come; its keyframes are then read. Task mode reads it
  // through the project's route (members may not read the lake's jobs).
  // Polling pauses while the tab is hidden and resumes when it is shown.
  useEffect(() => {
    if (!job?.id || !['queued', 'running'].includes(job.status)) return
    const path = task ? src + '/propagations/' + encodeURIComponent(job.id) : '/jobs/' + encodeURIComponent(job.id)
    let timer = 0
    let stop = false
    const poll = () => document.visibilityState === 'visible' && api(path).then((j) => {
      if (stop) return
      const p = progressOf(j)
      setJob((cur) => (cur?.id === j.id ? { ...cur, status: j.status, pct: p.pct, done: j.done ?? 0, total: j.total ?? 0, count: p.count, result: j.result, error: j.error, polls: (cur.polls ?? 0) + 1 } : cur))
      if (j.status === 'completed') reload()
    }, (e) => { if (!stop) setJob((cur) => ({ ...cur, status: 'failed', error: e.message })) })
    const visible = () => { if (document.visibilityState === 'visible') { clearTimeout(timer); timer = setTimeout(poll, 0) } }
    if (document.visibilityState === 'visible') timer = setTimeout(poll, 400)
    document.addEventListener('visibilitychange', visible)
    return () => { stop = true; clearTimeout(timer); document.removeEventListener('visibilitychange', visible) }
  }, [job])

  // Play: one frame every 1/fps seconds, each shown once its image is in
  // (a frame late is shown late, not skipped); the next ones fetched ahead,
  // one after another. It buffers the next second first, as a player does,
  // so the clock starts with frames in hand.
  useEffect(() => {
    if (!playing) return
    let stop = false
    const period = 1000 / fps
    let due = performance.now()
    // The loop counts its own frames: frameRef follows a render, which comes
    // after the next step has begun, so reading it there played each frame
    // twice (half the rate).
    let cur = frameRef.current
    const step = async () => {
      const f = cur + 1
      if (f > last) return setPlaying(false)
      await cache.current.get(f).catch(() => {})
      if (!cache.current.has(f + 8)) cache.current.ahead(f + 1, 12, last)
      if (stop) return
      due = Math.max(due + period, performance.now() - period)
      setTimeout(() => { if (!stop) { cur = f; setFrame(f); step() } }, Math.max(0, due - performance.now()))
    }
    cache.current.ahead(frameRef.current + 1, Math.ceil(fps), last).then(() => {
      due = performance.now()
      if (!stop) step()
    })
    return () => { stop = true }
  }, [playing])

  onKey.current = (e) => {
    if (typing() || !item) return
    if (task && jobKeys.current?.(e)) return e.preventDefault()
    if (e.ctrlKey || e.metaKey || e.altKey) return
    if (e.code === 'Comma') goFrame(frame - (e.shiftKey ? 10 : 1))
    else if (e.code === 'Period') goFrame(frame + (e.shiftKey ? 10 : 1))
    else if (e.key === ' ') setPlaying((p) => !p)
    else if (e.key === 'Enter' && acceptProposal()) {}
    else if (e.key === 'Enter' && editor.current.finish()) {}
    else if (e.key === 'Escape' && editor.current.cancel()) {}
    else if (e.key === 'Escape' && proposal) setProposal(null)
    else if (e.key === 't' && canWrite) trackNext()
    else if (e.key === 'Escape') setSelected([])
    else if (TOOLS[e.key]) { editor.current.cancel(); setTool(TOOLS[e.key]) }
    else if (e.key === 'o' && canWrite) edit((t) => toggleOutside(t, at))
    else if ((e.key === 'Delete' || e.key === 'Backspace') && canWrite) removeKey()
    else return
    e.preventDefault()
  }
  useEffect(() => {
    const key = (e) => onKey.current?.(e)
    addEventListener('keydown', key)
    return () => removeEventListener('keydown', key)
  }, [])

  if (error) return <div class="error" role="alert">{error.message}</div>
  if (!item || !tracks) return <div class="loading-page">Loading…</div>
  const selIndex = primary ? shapes.findIndex((s) => s.number === primary.number) : -1
  const onKeyframe = primary?.keyframes.some((k) => k.frame === at)
  const labels = [...new Set([label, ...tracks.map((t) => t.label)])]
  const frameObj = { uniqueName: name + '@' + at, url: shown?.url ?? '', width: item.width, height: item.height }
  return (
    <div class="workspace video-ws" data-testid="video-workspace" data-frame={at} data-ready={shown?.frame === frame ? '1' : '0'} data-op={op}>
      {task && <JobBar taskId={task.taskId} jobh={task.jobh} me={me} setNote={setNote} frameName={String(at)} keys={jobKeys} />}
      <div class="ws-top">
        {task ? <span>{item.name} · frames {first}–{last}</span> : (
          <a href={'/items/' + encodeURIComponent(name)} onClick={(e) => { e.preventDefault(); navigate('/items/' + encodeURIComponent(name)) }}>{item.name}</a>
        )}
        <span data-testid="vws-frame" data-frame={at}>frame {at} / {last}</span>
        <button class="ghost" title="10 frames back (Shift+,)" onClick={() => goFrame(frame - 10)}>«</button>
        <button class="ghost" data-testid="vws-prev" title="previous frame (,)" onClick={() => goFrame(frame - 1)}>‹</button>
        <button class="ghost" data-testid="vws-play" data-playing={playing ? '1' : '0'} title="play or pause (Space)" onClick={() => setPlaying((p) => !p)}>{playing ? '❚❚' : '▶'}</button>
        <button class="ghost" data-testid="vws-next" title="next frame (.)" onClick={() => goFrame(frame + 1)}>›</button>
        <button class="ghost" title="10 frames on (Shift+.)" onClick={() => goFrame(frame + 10)}>»</button>
        <span class="muted">{fps.toFixed(fps % 1 ? 3 : 0)} fps</span>
        <PlayRate rate={rate} fps={fps} playing={playing} />
        {!task && <label class="muted">operation{' '}
          <input class="vws-op" data-testid="vws-op" list="vws-ops" value={op} size="14"
            onChange={(e) => { const v = e.currentTarget.value.trim(); if (v) { setSelected([]); setOp(v) } }} />
          <datalist id="vws-ops">{ops.map((o) => <option value={o} />)}</datalist>
        </label>}
        {!task && isCurator(me) && <a class="muted" data-testid="vws-make-task" href={'/video-task?video=' + encodeURIComponent(name)}
          onClick={(e) => { e.preventDefault(); navigate('/video-task?video=' + encodeURIComponent(name)) }}>Make a task of this video</a>}
        <span class="ws-note" data-testid="save-state">{note}</span>
      </div>
      <div class="ws-body">
        <div class="stage ws-stage vws-stage" ref={stage}>
          {shown && (
            <FrameCanvas frame={frameObj} boxes={shapes} suggestions={[]} selected={selIndex >= 0 ? { index: selIndex } : null}
              onSelect={(i) => { if (i != null && shapes[i]) setSelected([shapes[i].number]) }}
              onChange={onChange} label={label} readOnly={!canWrite} ready={shown.frame === frame} onLoad={() => {}}
              zoomRef={zoom.ref} zoomStyle={zoom.style} fit={fit} zoom={zoom.scale} editor={editor.current}
              tool={canWrite ? tool : 'box'} onDraft={setDraft} proposal={proposal} onAssist={onAssist} />
          )}
        </div>
        <aside class="details ws-side vws-side">
          <TrackTools {...{ canWrite, tool, setTool, label, setLabel, labels, primary, selected, at, onKeyframe, every, setEvery, job, proposal, draft }}
            onTrackNext={trackNext} onAccept={acceptProposal} onDrop={() => setProposal(null)}
            onTrack={track} onOutside={() => edit((t) => toggleOutside(t, at))} onSplit={split} onMerge={merge}
            onRemoveKey={removeKey} onDelete={() => primary && dropTrack(primary.number)}
            onRelabel={() => primary && save({ ...primary, label })} editor={editor.current} />
          <h3>Tracks ({tracks.length})</h3>
          <ul class="vws-tracks">
            {tracks.map((t) => (
              <li class={selected.includes(t.number) ? 'on' : ''} data-testid="track-row" data-number={t.number} data-label={t.label}
                data-keyframes={t.keyframes.length}
                onClick={(e) => setSelected((s) => (e.ctrlKey || e.metaKey || e.shiftKey ? pick(s, t.number) : [t.number]))}>
                <b>#{t.number}</b> {t.label} <span class="muted">{t.type} · {t.keyframes.length} key · {t.firstFrame ?? t.keyframes[0].frame}–{t.lastFrame ?? t.keyframes[t.keyframes.length - 1].frame}</span>
              </li>
            ))}
          </ul>
          <HistoryPanel projectId={task?.projectId} uniqueName={name} frame={at} preview={preview} setPreview={setPreview}
            canRestore={canWrite} onRestored={() => reload()} />
          <p class="muted keys" data-testid="vws-hints">
            , . frame · Shift+, Shift+. 10 frames · Space play · drag on the frame: a box (b) or polygon (p) ·
            i intelligent scissors: click anchors, double-click or Enter closes, Enter keeps · o out of view from here ·
            t track the selected shape to the next frame (Enter keeps it, Esc drops it) ·
            Del the keyframe here · Esc deselect (the next box starts a track) · timeline: drag to scrub, drag a keyframe, Ctrl-click picks two to merge
          </p>
        </aside>
      </div>
      <Timeline tracks={tracks} frames={task ? item.frameCount : last + 1} frame={frame} selected={selected} onJump={goFrame}
        onSelect={(n, additive) => setSelected((s) => (additive ? pick(s, n) : [n]))} onMoveKey={canWrite ? moveKey : () => {}} />
    </div>
  )
}

// TOOLS are the drawing tools here, on the image workspace's keys.
const TOOLS = Object.fromEntries(Object.entries(TOOL_KEYS).filter(([, t]) => ['box', 'polygon', 'scissors'].includes(t)))

// pick adds n to the picked tracks (at most two: a merge's), or takes it out.
const pick = (s, n) => (s.includes(n) ? s.filter((x) => x !== n) : [...s.slice(-1), n])

// TrackTools are the selected track's actions: label, tools, outside, split,
// merge, delete, and propagation with its job's progress.
function TrackTools({ canWrite, tool, setTool, label, setLabel, labels, primary, selected, at, onKeyframe, every, setEvery, job, proposal, draft,
  onTrackNext, onAccept, onDrop, onTrack, onOutside, onSplit, onMerge, onRemoveKey, onDelete, onRelabel, editor }) {
  if (!canWrite) return <p class="muted" data-testid="vws-readonly">read-only here: tracks are shown, not edited</p>
  const running = job && ['queued', 'running'].includes(job.status)
  const canTrack = primary && (primary.type || 'box') === 'box' && onKeyframe && !running
  const here = proposal?.frame.endsWith('@' + at)
  // Why the track cannot be tracked from here, when that is so now: not
  // beside a tracked draft on this frame (Enter makes it the keyframe).
  const why = !primary || running || canTrack ? ''
    : (primary.type || 'box') !== 'box' ? `tracking forward and backward follows box tracks: #${primary.number} is a ${primary.type} track`
      : here && proposal.number === primary.number ? '' : `tracking starts from a keyframe: frame ${at} is not one of #${primary.number}`
  return (
    <div class="vws-tools">
      <h3>Draw</h3>
      <div>
        {Object.entries(TOOLS).map(([k, t]) => (
          <button class={'ghost' + (tool === t ? ' on' : '')} data-testid="tool" data-tool={t} title={k} onClick={() => { editor.cancel(); setTool(t) }}>{t}</button>
        ))}
      </div>
      {tool === 'scissors' && <p class="muted">click anchors around the object: the edge from the last one follows the image to the cursor; double-click or Enter closes</p>}
      {draft && <p class="muted" data-testid="draft-state">{draft}</p>}
      <label class="attr">label
        <DraftInput data-testid="vws-label" list="vws-labels" value={label} onCommit={(text) => setLabel(text.trim() || 'object')} />
        <datalist id="vws-labels">{labels.map((l) => <option value={l} />)}</datalist>
      </label>
      <h3>{primary ? <>Track #{primary.number} <span class="muted">{primary.label}</span></> : 'No track selected'}</h3>
      {primary && (
        <div data-testid="track-tools" data-number={primary.number}>
          <button class="ghost" data-testid="track-outside" onClick={onOutside} title="o">Out of view from here</button>
          <button class="ghost" data-testid="track-split" onClick={onSplit}>Split here</button>
          <button class="ghost" data-testid="track-remove-key" onClick={onRemoveKey} disabled={!onKeyframe}>Delete keyframe</button>
          <button class="ghost" data-testid="track-relabel" onClick={onRelabel} disabled={primary.label === label}>Relabel as {label}</button>
          <button class="ghost" data-testid="track-delete" onClick={onDelete}>Delete track</button>
          <button class="ghost" data-testid="assist-track" onClick={onTrackNext} title="t: follow the shape's pixels into the next frame">Track to next frame (t)</button>
          <div class="vws-prop">
            <button data-testid="track-backward" disabled={!canTrack} onClick={() => onTrack(true)}>◀ Track backward</button>
            <button data-testid="track-forward" disabled={!canTrack} onClick={() => onTrack(false)}>Track forward ▶</button>
            <label class="muted">keyframe every <input type="number" min="1" max="1000" value={every} data-testid="track-every"
              onChange={(e) => setEvery(e.currentTarget.value)} /> frames</label>
            {why && <small class="muted" data-testid="track-hint">{why}</small>}
          </div>
        </div>
      )}
      {proposal && (
        <div class="assist-state" data-testid="assist-state" data-kind={proposal.kind} data-ready={here ? '1' : '0'} data-vertices={proposal.vertices ?? ''}>
          {proposal.kind === 'scissors' ? <><strong>intelligent scissors</strong> <span class="muted">{proposal.vertices} vertices</span></> : <>
            <strong>tracked from the last frame</strong>{' '}
            <span class="muted">#{proposal.number} moved {proposal.dx}, {proposal.dy} px · match {proposal.score.toFixed(2)} · {Math.round(proposal.ms)} ms</span>
          </>}
          <div>
            <button data-testid="assist-accept" onClick={onAccept}>Keyframe here (Enter)</button>
            <button class="ghost" data-testid="assist-drop" onClick={onDrop}>Drop (Esc)</button>
          </div>
        </div>
      )}
      {selected.length === 2 && <button data-testid="track-merge" onClick={onMerge}>Merge #{selected[0]} and #{selected[1]}</button>}
      {/* A propagation that has ended is the selected track's news only: it goes when another track is selected. */}
      {job && (running || job.number === primary?.number) && (
        <div class="vws-job" data-testid="propagate-job" data-number={job.number} data-status={job.status} data-job-id={job.id ?? ''}
          data-stopped-at={job.result?.stoppedAt ?? ''} data-reason={job.result?.reason ?? ''}
          data-done={job.done ?? ''} data-total={job.total ?? ''} data-polls={job.polls ?? 0}>
          tracking #{job.number} {job.backward ? 'backward' : 'forward'}: {job.status}{' '}
          {running && <progress max="100" value={job.pct} />}
          {job.count && <span class="muted" data-testid="propagate-count"> frames {job.count}</span>}
          {job.result && <> · stopped at frame {job.result.stoppedAt} ({job.result.reason.replace(/_/g, ' ')}), {job.result.keyframes} keyframes</>}
          {job.error && <span class="error"> {job.error}</span>}
        </div>
      )}
    </div>
  )
}
