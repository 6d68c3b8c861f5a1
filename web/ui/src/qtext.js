// The query's text as the sidebar and the completion read it: a lexer for
// the lake query language (lake/query/GRAMMAR.md) and edits of its top-level
// AND terms. The sidebar keeps no state of its own: what it shows as chosen
// is read from the query text, and a click writes new query text.

const WORD = /[A-Za-z0-9_.\-:/+@]/
const OPS = ['==', '!=', '<>', '<=', '>=', '!~', '=', '<', '>', '~']
const KEYWORDS = ['AND', 'OR', 'NOT', 'IN']

// lex splits text into tokens {t: word|str|op|(|)|,, v, start, end, open}; a
// string left open (the person is typing it) ends at the text's end.
export function lex(text) {
  const out = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (/\s/.test(c)) { i++; continue }
    const start = i
    if (c === '"' || c === "'") {
      let v = ''
      i++
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\' && i + 1 < text.length) i++
        v += text[i++]
      }
      const open = i >= text.length
      if (!open) i++
      const prev = out[out.length - 1]
      if (prev && prev.t === 'word' && prev.end === start && /^metadata\.$/i.test(prev.v)) {
        Object.assign(prev, { v: prev.v + quote(v), end: i, key: v, open }) // metadata."a key"
      } else out.push({ t: 'str', v, start, end: i, open })
      continue
    }
    if ('(),'.includes(c)) { out.push({ t: c, v: c, start, end: ++i }); continue }
    const op = OPS.find((o) => text.startsWith(o, i))
    if (op) { i += op.length; out.push({ t: 'op', v: op, start, end: i }); continue }
    if (WORD.test(c)) {
      while (i < text.length && WORD.test(text[i])) i++
      out.push({ t: 'word', v: text.slice(start, i), start, end: i })
      continue
    }
    out.push({ t: '?', v: c, start, end: ++i })
  }
  return out
}

const isKw = (tok, kw) => tok && tok.t === 'word' && tok.v.toUpperCase() === kw

// quote writes a value bare when it reads back as itself, quoted otherwise.
export function quote(v) {
  v = String(v)
  if (/^[A-Za-z_][A-Za-z0-9_.\-:/+@]*$/.test(v) && !KEYWORDS.includes(v.toUpperCase())) return v
  return '"' + v.replace(/["\\]/g, '\\$&') + '"'
}

// fieldKey names a field for comparison: built-in names are case-insensitive.
export const fieldKey = (f) => {
  const k = f.toLowerCase()
  return k === 'metadata.tags' ? 'tags' : k.startsWith('metadata.') ? 'metadata.' + f.slice(9) : k
}

// terms splits q at its top-level ANDs; or is set when the top level has an
// OR, so no term stands for the whole query's meaning.
export function terms(q) {
  const toks = lex(q)
  const out = []
  let depth = 0, cur = [], or = false
  const flush = () => {
    if (cur.length) out.push(termOf(q, cur))
    cur = []
  }
  for (const t of toks) {
    if (t.t === '(') depth++
    if (t.t === ')') depth--
    if (depth === 0 && isKw(t, 'AND')) { flush(); continue }
    if (depth === 0 && isKw(t, 'OR')) or = true
    cur.push(t)
  }
  flush()
  return { list: out, or }
}

// termOf reads a term: a comparison (field op value), an IN list, or
// anything else (kept as text).
function termOf(q, toks) {
  const text = q.slice(toks[0].start, toks[toks.length - 1].end)
  const norm = toks.map((t) => (t.t === 'str' ? quote(t.v) : t.t === 'word' && KEYWORDS.includes(t.v.toUpperCase()) ? t.v.toUpperCase() : t.v)).join(' ')
  const term = { text, norm }
  const [f, op, ...rest] = toks
  const val = (t) => t && (t.t === 'word' || t.t === 'str') && t.v
  if (f?.t === 'word' && op?.t === 'op' && rest.length === 1 && val(rest[0]) !== false) {
    return { ...term, field: fieldKey(f.v), op: op.v === '==' ? '=' : op.v, values: [rest[0].v] }
  }
  if (f?.t === 'word' && isKw(op, 'IN') && rest[0]?.t === '(' && rest[rest.length - 1]?.t === ')') {
    const vs = rest.slice(1, -1).filter((t) => t.t !== ',')
    if (vs.every((t) => val(t) !== false)) return { ...term, field: fieldKey(f.v), op: 'IN', values: vs.map((t) => t.v) }
  }
  return term
}

const join = (list) => list.map((t) => t.text).join(' AND ')

// chosen lists the values a facet field is narrowed to: `field = v` and
// `field IN (a, b)` terms at the top level.
export function chosen(q, field) {
  const { list, or } = terms(q)
  if (or) return []
  return list.filter((t) => t.field === fieldKey(field) && (t.op === '=' || t.op === 'IN')).flatMap((t) => t.values)
}

// withValues rewrites q so that field is narrowed to values (none: not at
// all): one term in place of the field's = and IN terms.
export function withValues(q, field, values) {
  const { list, or } = terms(q)
  const key = fieldKey(field)
  const term = values.length === 0 ? null
    : { text: values.length === 1 ? `${field} = ${quote(values[0])}` : `${field} IN (${values.map(quote).join(', ')})` }
  if (or) return term ? `(${q.trim()}) AND ${term.text}` : q
  const at = list.findIndex((t) => t.field === key && (t.op === '=' || t.op === 'IN'))
  const rest = list.filter((t) => !(t.field === key && (t.op === '=' || t.op === 'IN')))
  if (term) rest.splice(at < 0 ? rest.length : at, 0, term)
  return join(rest)
}

// toggleValue adds value to the field's chosen values, or takes it out.
export function toggleValue(q, field, value) {
  const vs = chosen(q, field)
  return withValues(q, field, vs.includes(value) ? vs.filter((v) => v !== value) : [...vs, value])
}

// hasTerm and toggleTerm treat a whole clause (annotation.count = 0) as one
// value: present as a top-level term, or not.
export function hasTerm(q, clause) {
  const { list, or } = terms(q)
  const want = terms(clause).list[0]?.norm
  return !or && list.some((t) => t.norm === want)
}

export function toggleTerm(q, clause) {
  const { list, or } = terms(q)
  const want = terms(clause).list[0]?.norm
  if (!or && list.some((t) => t.norm === want)) return join(list.filter((t) => t.norm !== want))
  if (!q.trim()) return clause
  return (or ? `(${q.trim()})` : q.trim()) + ' AND ' + clause
}

const RANGE = ['>=', '>', '<=', '<']

// rangeOf reads a field's bounds from top-level comparisons: {lo, hi} as
// written (text), each with its operator.
export function rangeOf(q, field) {
  const { list, or } = terms(q)
  const r = {}
  if (or) return r
  for (const t of list) {
    if (t.field !== fieldKey(field) || !RANGE.includes(t.op)) continue
    if (t.op[0] === '>') r.lo = { v: t.values[0], op: t.op }
    else r.hi = { v: t.values[0], op: t.op }
  }
  return r
}

// withRange replaces a field's bounds: lo and hi are {v, op} or null.
export function withRange(q, field, lo, hi) {
  const { list, or } = terms(q)
  const key = fieldKey(field)
  const add = [lo, hi].filter(Boolean).map((b) => ({ text: `${field} ${b.op} ${b.v}` }))
  if (or) return add.length ? `(${q.trim()}) AND ${join(add)}` : q
  return join([...list.filter((t) => !(t.field === key && RANGE.includes(t.op))), ...add])
}

// without takes a field's own terms out of q, so a facet counts the values
// the person may still add (the usual faceted search).
export function without(q, field) {
  const { list, or } = terms(q)
  if (or) return q
  return join(list.filter((t) => t.field !== fieldKey(field)))
}

// ownTerms is the text of a field's own terms in q, those without() leaves
// out ('' when none or when the top level has an OR).
export function ownTerms(q, field) {
  const { list, or } = terms(q)
  if (or) return ''
  return join(list.filter((t) => t.field === fieldKey(field)))
}

// VALUE_VOCAB maps a field to the completion list of its values.
const STATIC = { 'annotation.source': ['human', 'machine'], source: ['human', 'machine'], type: ['image', 'video', 'other'] }
function vocabOf(field) {
  const k = fieldKey(field)
  if (k === 'annotation.label' || k === 'label') return { vocab: 'annotation.label' }
  if (k === 'tags') return { vocab: 'Tags' }
  if (k === 'collection') return { vocab: 'collection' }
  if (STATIC[k]) return { fixed: STATIC[k] }
  if (k.startsWith('metadata.')) {
    const key = field.slice(9)
    return { vocab: 'metadata.' + (key.startsWith('"') ? key.slice(1, -1).replace(/\\(.)/g, '$1') : key) }
  }
  return null
}

// contextAt says what the word at the cursor is: a field name ({kind:
// 'field'}), a value of a field ({kind: 'value', vocab | fixed}), or nothing
// to complete; with the span [start, end) a completion replaces.
export function contextAt(q, cursor) {
  const toks = lex(q.slice(0, cursor))
  let last = toks[toks.length - 1]
  let partial = null
  if (last && last.end === cursor && (last.t === 'word' || (last.t === 'str' && last.open))) {
    partial = last
    toks.pop()
  }
  const start = partial ? partial.start : cursor
  const prefix = partial ? (partial.t === 'str' ? partial.v : partial.v) : ''
  const prev = toks[toks.length - 1]
  const ctx = { start, end: cursor, prefix }
  // value after an operator
  if (prev?.t === 'op' && toks[toks.length - 2]?.t === 'word') {
    const v = vocabOf(toks[toks.length - 2].v)
    return v ? { ...ctx, kind: 'value', ...v } : null
  }
  // value inside an IN list
  let i = toks.length - 1
  while (i >= 0 && (toks[i].t === ',' || toks[i].t === 'word' || toks[i].t === 'str') && !isKw(toks[i], 'IN')) i--
  if (toks[i]?.t === '(' && isKw(toks[i - 1], 'IN') && toks[i - 2]?.t === 'word') {
    const v = vocabOf(toks[i - 2].v)
    return v ? { ...ctx, kind: 'value', ...v } : null
  }
  if (partial?.t === 'str') return null
  // a field where a comparison may start
  if (!prev || prev.t === '(' || isKw(prev, 'AND') || isKw(prev, 'OR') || isKw(prev, 'NOT')) {
    return { ...ctx, kind: 'field', inBox: insideBox(toks) }
  }
  return null
}

// insideBox reports whether the cursor is inside annotation( ... ).
function insideBox(toks) {
  let depth = 0
  for (let i = toks.length - 1; i >= 0; i--) {
    if (toks[i].t === ')') depth++
    if (toks[i].t === '(') {
      if (depth === 0) return toks[i - 1]?.t === 'word' && toks[i - 1].v.toLowerCase() === 'annotation'
      depth--
    }
  }
  return false
}

export const BOX_FIELDS = ['label', 'source', 'confidence', 'operation', 'frame']
