import { useEffect, useRef, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { BOX_FIELDS, contextAt, quote } from './qtext.js'

// useCompletion drives the query bar's completion: what the word at the
// cursor may become (a field name, or a value of the field before it, from
// GET /api/v1/lake/complete), shown in a list that the keyboard walks:
// ↑ ↓ move, Tab or Enter accept, Esc closes, Ctrl+Space opens (typing opens
// it once a word has begun). A list belongs to the text and cursor it was
// asked for: once either has changed it neither shows nor takes a key, so an
// answer that arrives late, or a key pressed before the next question, cannot
// write a completion over text it was not made for.
export function useCompletion(input, value, setValue) {
  const [list, setList] = useState(null) // {text, cursor, ctx, items, at}
  const asked = useRef(0)
  const pause = useRef(0)

  // Typing asks once a word has begun (so Enter after `label = ` still runs
  // the query); Ctrl+Space asks at once.
  const ask = (text, cursor, now = false) => {
    const ctx = contextAt(text, cursor)
    const n = ++asked.current
    if (!ctx || (!now && ctx.prefix === '')) return setList(null)
    const show = (items) => n === asked.current && setList(items.length ? { text, cursor, ctx, items, at: 0 } : null)
    const starts = (v) => v.toLowerCase().startsWith(ctx.prefix.toLowerCase()) && v !== ctx.prefix
    if (ctx.kind === 'field' && ctx.inBox) return show(BOX_FIELDS.filter(starts).map((v) => ({ v, text: v + ' ' })))
    if (ctx.fixed) return show(ctx.fixed.filter(starts).map((v) => ({ v, text: v + ' ' })))
    const params = ctx.kind === 'field' ? { prefix: ctx.prefix } : { field: ctx.vocab, prefix: ctx.prefix }
    api('/lake/complete?' + qs({ ...params, limit: 12 })).then(
      (r) => show(r.values.filter((v) => v !== ctx.prefix).map((v) => ({ v, text: (ctx.kind === 'field' ? v : quote(v)) + ' ' }))),
      () => show([]))
  }

  // Asked again whenever the text changes, after the person pauses briefly;
  // the text and cursor are read together from the element when asking.
  useEffect(() => {
    const el = input.current
    if (!el || document.activeElement !== el) return
    asked.current++ // an answer on its way is for the text before
    pause.current = setTimeout(() => ask(el.value, el.selectionStart), 60)
    return () => clearTimeout(pause.current)
  }, [value])

  // current is the list if it was made for the element's text and cursor now.
  const current = () => {
    const el = input.current
    return list && el && list.text === el.value && list.cursor === el.selectionStart ? list : null
  }

  const accept = (item) => {
    if (!current()) return close()
    const { start, end } = list.ctx
    const next = list.text.slice(0, start) + item.text + list.text.slice(end)
    const at = start + item.text.length
    // The text and cursor change together, now: a cursor placed on a later
    // frame lands behind keys typed in between (a fast typist, a busy tab).
    const el = input.current
    if (el) {
      el.value = next
      el.setSelectionRange(at, at)
    }
    setValue(next)
    setList(null)
  }

  // forget drops a question not yet asked and an answer still on its way,
  // so no list opens after Esc, a run query or a lost focus.
  const forget = () => {
    clearTimeout(pause.current)
    asked.current++
  }
  const close = () => {
    forget()
    setList(null)
  }

  // onKey handles the list's keys; it returns true when it used the key.
  const onKey = (e) => {
    if (e.key === ' ' && e.ctrlKey) {
      e.preventDefault()
      ask(e.currentTarget.value, e.currentTarget.selectionStart, true)
      return true
    }
    if (!current()) {
      if (list) setList(null)
      if (e.key === 'Escape' || (e.key === 'Enter' && !e.shiftKey)) forget()
      return false
    }
    const n = list.items.length
    const move = { ArrowDown: 1, ArrowUp: -1 }[e.key]
    if (move) {
      e.preventDefault()
      setList({ ...list, at: (list.at + move + n) % n })
      return true
    }
    if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey)) {
      e.preventDefault()
      accept(list.items[list.at])
      return true
    }
    if (e.key === 'Escape') {
      e.preventDefault()
      close()
      return true
    }
    return false
  }

  const popup = current() && list.text === value && (
    <ul class="completions" data-testid="completion-list" role="listbox">
      {list.items.map((it, i) => (
        <li role="option" aria-selected={i === list.at} class={i === list.at ? 'on' : ''} data-testid="completion"
          data-value={it.v} onMouseDown={(e) => { e.preventDefault(); accept(it) }}>
          {it.v}
        </li>
      ))}
    </ul>
  )
  return { popup, onKey, close }
}
