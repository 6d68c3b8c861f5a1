// The query bar: Enter runs the query (Shift+Enter breaks the line); a
// parse error from the server ("query <line>:<column>: ...") is shown under
// the text with a caret at its place in the query that was run.
export function QueryBar({ value, submitted, onInput, onSubmit, error }) {
  return (
    <div class="query">
      <textarea
        data-testid="query-input"
        class="query-input"
        rows={Math.min(6, value.split('\n').length)}
        spellcheck={false}
        placeholder='Query the lake, e.g. annotation.label = "car" and width > 640   (press / to focus)'
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault()
            onSubmit()
          }
        }}
      />
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
