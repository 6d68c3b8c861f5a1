import { useState } from 'preact/hooks'

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
