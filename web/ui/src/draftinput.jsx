import { useRef, useState } from 'preact/hooks'

// DraftInput is a text input whose typing is its own until it is committed
// (a change: Enter or leaving the field). A controlled input is set back to
// its stored value by any render in between, and the workspace renders on
// its own (a comment poll, a save's answer): what was typed would be lost
// before it was committed. onDraft sees every keystroke (to say at once what
// is wrong with it); onCommit returning false keeps the typed text in the
// field (refused: the person corrects it rather than retyping it).
export function DraftInput({ value, onCommit, onDraft, ...rest }) {
  const [draft, setDraft] = useState(null)
  return (
    <input {...rest} value={draft ?? value}
      onInput={(e) => { setDraft(e.currentTarget.value); onDraft?.(e.currentTarget.value) }}
      onChange={(e) => { if (onCommit(e.currentTarget.value) !== false) setDraft(null) }} />
  )
}

// DateInput is a day picker that commits its day once it is chosen: from the
// calendar, on Enter, or on leaving the field. Chromium changes the value at
// every key that makes a valid day, and a year typed digit by digit passes
// through 0002, 0020 and 0202 on its way to 2026: each was a query before.
export function DateInput({ value, onCommit, ...rest }) {
  const [draft, setDraft] = useState(null)
  const keyed = useRef(false) // the value changes by typing, not by the calendar
  const commit = (v) => {
    keyed.current = false
    setDraft(null)
    if (v !== value) onCommit(v)
  }
  return (
    <input {...rest} type="date" value={draft ?? value}
      onKeyDown={(e) => { if (e.key === 'Enter') commit(e.currentTarget.value); else keyed.current = true }}
      onPointerDown={() => { keyed.current = false }}
      onChange={(e) => (keyed.current ? setDraft(e.currentTarget.value) : commit(e.currentTarget.value))}
      onBlur={(e) => { if (draft !== null) commit(e.currentTarget.value) }} />
  )
}
