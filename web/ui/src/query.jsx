import { useRef } from 'preact/hooks'
import { useCompletion } from './complete.jsx'

// The query bar: Enter runs the query (Shift+Enter breaks the line); a
// parse error from the server ("query <line>:<column>: ...") is shown under
// the text with a caret at its place in the query that was run. Completion
// (complete.jsx) offers field names and values as the person types.
export function QueryBar({ value, submitted, onInput, onSubmit, error }) {
  const input = useRef()
  const completion = useCompletion(input, value, onInput)
  return (
    <div class="query">
      <textarea
        ref={input}
        data-testid="query-input"
        class="query-input"
        rows={Math.min(6, value.split('\n').length)}
        spellcheck={false}
        placeholder='Query the lake, e.g. annotation.label = "car" and width > 640   (press / to focus)'
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        onBlur={completion.close}
        onKeyDown={(e) => {
          if (completion.onKey(e)) return
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault()
            onSubmit()
          }
        }}
      />
      {completion.popup}
      {error && <QueryError error={error} text={submitted} />}
    </div>
  )
}

function QueryError({ error, text }) {
  const m = error.message.match(/(\d+):(\d+)/)
  const line = m ? text.split('\n')[+m[1] - 1] : undefined
  return (
    <div class="query-error" data-testid="query-error" role="alert">
      {line !== undefined && (
        <pre class="query-caret">
          {line}
          {'\n' + ' '.repeat(Math.max(0, +m[2] - 1)) + '^'}
        </pre>
      )}
      <div>{error.message}</div>
    </div>
  )
}
