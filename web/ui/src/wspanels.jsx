import { useEffect, useState } from 'preact/hooks'
import { api, fn } from './api.js'
import { DraftInput } from './draftinput.jsx'
import { interpolate, iou, loadFrame, saveFrame, toWire } from './frameio.js'

// FrameStrip lists the task's frames with their state (annotated or not);
// only those near the current one are in the DOM, so long tasks stay light.
export function FrameStrip({ frames, idx, goFrame }) {
  const from = Math.max(0, idx - 40)
  const shown = frames.slice(from, idx + 41)
  useEffect(() => {
    document.querySelector('.strip-frame.current')?.scrollIntoView({ block: 'nearest', inline: 'center' })
  }, [idx])
  return (
    <div class="strip" data-testid="frame-strip">
      {from > 0 && <span class="muted">… {from}</span>}
      {shown.map((f, j) => {
        const i = from + j
        return (
          <button class={'strip-frame' + (f.annotated ? ' annotated' : '') + (i === idx ? ' current' : '')} data-testid="frame-strip-item"
            data-annotated={f.annotated ? '1' : '0'} data-index={i} title={f.uniqueName} onClick={() => goFrame(i)}>
            {i + 1}
          </button>
        )
      })}
      {idx + 41 < frames.length && <span class="muted">{frames.length - idx - 41} …</span>}
    </div>
  )
}

// Attributes edits the selected box's attributes (a JSON object of strings).
export function Attributes({ box, spec, onChange }) {
  const [k, setK] = useState('')
  const entries = Object.entries(box.attributes ?? {})
  const set = (key, value) => onChange({ ...box.attributes, [key]: value })
  const drop = (key) => { const a = { ...box.attributes }; delete a[key]; onChange(a) }
  if (spec?.length) return <TypedAttributes box={box} spec={spec} set={set} drop={drop} />
  return (
    <div class="attrs" data-testid="attributes">
      <h3>Attributes of {box.label}</h3>
      {entries.map(([key, v]) => (
        <label class="attr">{key}
          <DraftInput data-testid="attr-value" data-key={key} value={typeof v === 'string' ? v : JSON.stringify(v)}
            onCommit={(text) => set(key, text)} />
          <button class="ghost" title="remove" onClick={() => drop(key)}>×</button>
        </label>
      ))}
      <form onSubmit={(e) => { e.preventDefault(); if (k.trim()) { set(k.trim(), ''); setK('') } }}>
        <input data-testid="attr-key" placeholder="new attribute" value={k} onInput={(e) => setK(e.currentTarget.value)} />
      </form>
    </div>
  )
}

// TypedAttributes are inputs of the label's declared attributes (a select's
// values, a number's range, a checkbox, text). A number out of its range or
// not a number is not sent: the API would refuse it (400) and nothing of the
// frame would be written; the input says why instead. The API's own message,
// when a write is refused anyway, shows in the save state.
function TypedAttributes({ box, spec, set, drop }) {
  const [bad, setBad] = useState({})
  const a = box.attributes ?? {}
  // wrong says what is wrong with a number typed for s, as it is typed.
  const wrong = (s, text) => {
    const v = Number(text)
    const why = text.trim() === '' ? null : !Number.isFinite(v) ? 'not a number'
      : s.min != null && v < s.min ? `below ${s.min}` : s.max != null && v > s.max ? `above ${s.max}` : null
    setBad((b) => ({ ...b, [s.name]: why }))
    return why
  }
  const number = (s, text) => {
    if (wrong(s, text)) return false
    if (text.trim() === '') drop(s.name)
    else set(s.name, Number(text))
  }
  return (
    <div class="attrs" data-testid="attributes">
      <h3>Attributes of {box.label}</h3>
      {spec.map((s) => (
        <label class="attr" data-testid="attr" data-key={s.name} data-type={s.type}>{s.name}{s.required ? ' *' : ''}
          {s.type === 'boolean' ? (
            <input type="checkbox" data-testid="attr-value" data-key={s.name} checked={a[s.name] === true} onChange={(e) => set(s.name, e.currentTarget.checked)} />
          ) : s.type === 'select' ? (
            <select data-testid="attr-value" data-key={s.name} value={a[s.name] ?? ''} onChange={(e) => (e.currentTarget.value ? set(s.name, e.currentTarget.value) : drop(s.name))}>
              <option value="">—</option>
              {s.values.map((v) => <option value={v}>{v}</option>)}
            </select>
          ) : s.type === 'number' ? (
            <DraftInput type="number" data-testid="attr-value" data-key={s.name} min={s.min} max={s.max} step="any" value={a[s.name] ?? ''}
              onDraft={(text) => wrong(s, text)} onCommit={(text) => number(s, text)} />
          ) : (
            <DraftInput data-testid="attr-value" data-key={s.name} value={a[s.name] ?? ''} onCommit={(text) => set(s.name, text)} />
          )}
          {bad[s.name] && <span class="attr-error" data-testid="attr-error" role="alert">{bad[s.name]}</span>}
        </label>
      ))}
    </div>
  )
}

// Suggestions lists the model's open boxes on the frame: accept (they become
// human boxes) or reject each, or accept every one at least as sure as the
// threshold.
export function Suggestions({ suggestions, selected, onDecide, min, setMin, onPick }) {
  if (!suggestions.length) return null
  const sorted = [...suggestions].sort((a, b) => b.confidence - a.confidence)
  const above = suggestions.filter((s) => s.confidence >= min).length
  return (
    <div class="suggestions" data-testid="suggestions">
      <h3>Suggestions ({suggestions.length}, {above} shown)</h3>
      <ul>
        {sorted.map((s) => (
          <li class={s.id === selected ? 'on' : ''} data-testid="suggestion" data-id={s.id} data-label={s.label} data-confidence={s.confidence}>
            <span onClick={() => onPick(s.id)}>{s.label} <span class="muted">{s.confidence.toFixed(2)}</span></span>
            <button data-testid="suggestion-accept" data-id={s.id} onClick={() => onDecide({ action: 'accept', ids: [s.id] })}>Accept</button>
            <button class="ghost" data-testid="suggestion-reject" data-id={s.id} onClick={() => onDecide({ action: 'reject', ids: [s.id] })}>Reject</button>
          </li>
        ))}
      </ul>
      <label class="threshold">≥ {min.toFixed(2)}
        <input type="range" min="0" max="1" step="0.05" value={min} data-testid="suggestion-threshold" onInput={(e) => setMin(+e.currentTarget.value)} />
      </label>
      <button data-testid="suggestion-accept-all" disabled={!above} onClick={() => onDecide({ action: 'accept', minConfidence: min })}>Accept {above}</button>
      <button class="ghost" data-testid="suggestion-reject-all" onClick={() => onDecide({ action: 'reject', minConfidence: 0 })}>Reject all</button>
    </div>
  )
}

// ModelRun runs the default detector, or the project's labels as prompts
// through auto annotation, on the task's frames as a job; their boxes come
// back as suggestions.
export function ModelRun({ ws, onDone }) {
  const [job, setJob] = useState(null)
  useEffect(() => {
    if (!job || job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') {
      if (job?.status === 'completed') onDone()
      return
    }
    const t = setTimeout(() => api('/jobs/' + job.id).then(setJob, (e) => setJob({ ...job, status: 'failed', error: e.message })), 700)
    return () => clearTimeout(t)
  }, [job])
  const start = (name, params) => fn(name, { collection_id: ws.collectionId, confidence_threshold: 0.25, ...params })
    .then((r) => setJob({ id: r.jobId, status: 'queued' }), (e) => setJob({ status: 'failed', error: e.message }))
  const prompts = ws.labels.map((l) => ({ label: l.labelName, description: l.labelDescription || l.labelName }))
  const busy = job && (job.status === 'queued' || job.status === 'running')
  return (
    <div class="model-run">
      <h3>Model-assisted</h3>
      <button class="ghost" data-testid="model-detect" disabled={busy} onClick={() => start('auto_tag_collection', {})}>Run detector</button>
      <button class="ghost" data-testid="model-prompts" disabled={busy} onClick={() => start('auto_annotate_collection', { prompts })}>Find labels by prompt</button>
      {job && <div class="muted" data-testid="model-job" data-status={job.status}>{job.status}{job.progress != null && busy ? ` ${job.progress}%` : ''}{job.error ? ': ' + job.error : ''}</div>}
    </div>
  )
}

// VideoTools: copy the frame's boxes onto the next frame, and fill the
// frames between the last keyframe holding a box of the selected box's label
// and this one with boxes interpolated linearly.
export function VideoTools({ ws, idx, boxes, selected, goFrame, setNote }) {
  const pid = ws.projectId
  const copyNext = async () => {
    const next = ws.frames[idx + 1]
    if (!next || !boxes.length) return
    const st = await loadFrame(pid, next.uniqueName)
    await saveFrame(pid, next.uniqueName, [...st.annotations, ...boxes.map(toWire)], st.version)
    goFrame(idx + 1)
  }
  const fill = async () => {
    for (let k = idx - 1; k >= 0; k--) {
      const st = await loadFrame(pid, ws.frames[k].uniqueName)
      const same = st.annotations.filter((a) => a.label === selected.label)
      if (!same.length) continue
      const from = same.reduce((b, a) => (iou(a, selected) > iou(b, selected) ? a : b))
      for (let j = k + 1; j < idx; j++) {
        const f = await loadFrame(pid, ws.frames[j].uniqueName)
        await saveFrame(pid, f.uniqueName, [...f.annotations, toWire(interpolate(from, selected, (j - k) / (idx - k)))], f.version)
      }
      setNote(`interpolated ${idx - k - 1} frames from frame ${k + 1}`)
      return
    }
    setNote('no earlier frame has a ' + selected.label + ' box')
  }
  const wrap = (f) => () => f().catch((e) => setNote(e.current ? 'a frame changed meanwhile: ' + e.message : e.message))
  return (
    <div class="video-tools">
      <h3>Frames</h3>
      <button class="ghost" data-testid="copy-next" disabled={!boxes.length || idx >= ws.frames.length - 1} onClick={wrap(copyNext)}>Copy boxes to next frame</button>
      <button class="ghost" data-testid="interpolate" disabled={!selected || idx === 0} onClick={wrap(fill)}>Interpolate from last keyframe</button>
    </div>
  )
}

// Disagreements lists, on this frame, the human boxes no shown model box of
// the same label overlaps at IoU >= 0.5, and the model boxes no human box
// does: the boxes a reviewer should look at first.
export function Disagreements({ boxes, suggestions, onPick }) {
  const agrees = (a, others) => others.some((b) => b.label === a.label && iou(a, b) >= 0.5)
  const human = boxes.map((b, i) => ({ b, i })).filter(({ b }) => !agrees(b, suggestions))
  const machine = suggestions.filter((s) => !agrees(s, boxes))
  if (!suggestions.length || (!human.length && !machine.length)) return null
  return (
    <div class="disagreements" data-testid="disagreements">
      <h3>Model and human disagree ({human.length + machine.length})</h3>
      <ul>
        {human.map(({ b, i }) => <li data-testid="disagreement" data-kind="human" onClick={() => onPick({ index: i })}>{b.label} <span class="muted">human, no model box</span></li>)}
        {machine.map((s) => <li data-testid="disagreement" data-kind="machine" onClick={() => onPick({ suggestion: s.id })}>{s.label} <span class="muted">model {s.confidence.toFixed(2)}, no human box</span></li>)}
      </ul>
    </div>
  )
}
