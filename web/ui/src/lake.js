import { fn, api, qs } from './api.js'

// The listing the grid shows, kept while the tab lives so that the item view
// can step through it with the arrows and Esc returns to the same place.
// Pages are fetched on demand: jumping to item N loads the page holding N
// and nothing in between.
export const PAGE = 250

let current = null

// A listing is the lake's files in a sort order, or, with similar set, the
// files nearest to that one by a model's embeddings, nearest first.
export function listFor({ q = '', sortBy = 'date_modified', sortOrder = 'DESC', itemType = 'image', similar = '', model = '', picked = '' }) {
  const key = JSON.stringify([q, sortBy, sortOrder, itemType, similar, model, picked])
  if (!current || current.key !== key) {
    current = { key, q, sortBy, sortOrder, itemType, similar, model, picked, count: null, pages: new Map(), pending: new Map(), readying: new Map(), drawn: new Set(), cursor: -1, scrollTop: 0 }
  }
  return current
}

export const currentList = () => current

// invalidate drops the kept listing, after a change such as an upload, and
// re-renders the page so that counts and pages are fetched anew.
export function invalidate() {
  current = null
  dispatchEvent(new PopStateEvent('popstate'))
}

// gridPath is the grid's address for a listing: defaults are left out.
export function gridPath(list) {
  if (!list) return '/'
  const s = qs({ q: list.q, type: list.itemType === 'image' ? '' : list.itemType, sort: list.sortBy === 'date_modified' ? '' : list.sortBy,
    order: list.sortOrder === 'DESC' ? '' : list.sortOrder, similar: list.similar, model: list.similar ? list.model : '', picked: list.picked })
  return '/' + (s ? '?' + s : '')
}

// SIMILAR is how many neighbours a similarity listing asks for.
export const SIMILAR = 200

function hits(list) {
  list.hits ??= fn('find_similar', { model_name: list.model, unique_name: list.similar, k: SIMILAR, query: list.q || undefined })
    .then((r) => r.results)
  return list.hits
}

const quote = (s) => '"' + s.replace(/["\\]/g, '\\$&') + '"'

// similarPage views one page of neighbours, in order, each with its distance.
async function similarPage(list, index) {
  const h = (await hits(list)).slice(index * PAGE, (index + 1) * PAGE)
  if (h.length === 0) return []
  const r = await api('/lake/items?' + qs({ query: `uniqueName IN (${h.map((x) => quote(x.uniqueName)).join(', ')})`, pageSize: PAGE }))
  const by = new Map(r.items.map((i) => [i.uniqueName, i]))
  return h.filter((x) => by.has(x.uniqueName)).map((x) => ({ ...by.get(x.uniqueName), distance: x.distance }))
}

// A picked listing is a set of files chosen elsewhere (the embedding map's
// lasso), kept in this tab's sessionStorage under an id that the address
// carries (/?picked=<id>): thousands of names do not fit in an address.
export function pickNames(names) {
  const id = Date.now().toString(36)
  sessionStorage.setItem('framelake.picked.' + id, JSON.stringify(names))
  return id
}

const pickedNames = (list) => JSON.parse(sessionStorage.getItem('framelake.picked.' + list.picked) ?? '[]')

// pickedPage views one page of picked files in their order; a picked file
// may be an image or a video, and a listing asks for one type at a time.
async function pickedPage(list, index) {
  const names = pickedNames(list).slice(index * PAGE, (index + 1) * PAGE)
  if (names.length === 0) return []
  const query = `uniqueName IN (${names.map(quote).join(', ')})`
  const pages = await Promise.all(['image', 'video'].map((t) => api('/lake/items?' + qs({ query, itemType: t, pageSize: PAGE }))))
  const by = new Map(pages.flatMap((r) => r.items).map((i) => [i.uniqueName, i]))
  return names.filter((n) => by.has(n)).map((n) => by.get(n))
}

export function loadCount(list) {
  if (list.count != null) return Promise.resolve(list.count)
  if (list.picked) return Promise.resolve((list.count = pickedNames(list).length))
  if (list.similar) return hits(list).then((h) => (list.count = h.length))
  return fn('get_item_count_from_lake', { query: list.q, item_type: list.itemType }).then((r) => (list.count = r[0].count))
}

export function loadPage(list, index) {
  if (list.pages.has(index)) return Promise.resolve(list.pages.get(index))
  if (!list.pending.has(index)) {
    const get = list.picked
      ? pickedPage(list, index)
      : list.similar
      ? similarPage(list, index)
      : api('/lake/items?' + qs({ query: list.q, itemType: list.itemType, pageIndex: index, pageSize: PAGE, sortBy: list.sortBy, sortOrder: list.sortOrder }))
        .then((r) => r.items)
    const p = get
      .then((items) => {
        list.pages.set(index, items)
        return items
      })
      .finally(() => list.pending.delete(index))
    list.pending.set(index, p)
  }
  return list.pending.get(index)
}

export function itemAt(list, i) {
  return list?.pages.get(Math.floor(i / PAGE))?.[i % PAGE]
}

// readyPage resolves once page p is loaded and the thumbnails of its items
// in [from, to) are decoded (withThumbs); the grid draws a page's items only
// then (list.drawn), so each screen of them shows in one repaint.
export function readyPage(list, p, from, to, cell) {
  if (!list.readying.has(p)) {
    const ready = loadPage(list, p)
      .then(() => withThumbs(list, Math.max(from, p * PAGE), Math.min(to, (p + 1) * PAGE), cell))
      .then(() => { list.drawn.add(p) }, (err) => { list.readying.delete(p); throw err })
    list.readying.set(p, ready)
  }
  return list.readying.get(p)
}

// withThumbs resolves once the thumbnails of items [from, to) of a listing
// are fetched and decoded, or after wait milliseconds if that is sooner: a
// screen drawn when they are ready shows in one repaint, not in one more for
// each thumbnail as it arrives (their <img> elements then find them in the
// page's image cache).
export function withThumbs(list, from, to, cell, wait = 250) {
  const ready = []
  for (let i = from; i < to; i++) {
    const item = itemAt(list, i)
    if (!item?.thumbUrl) continue
    const img = new Image()
    img.src = thumbFor(item.thumbUrl, cell)
    ready.push(img.decode().catch(() => {}))
  }
  return Promise.race([Promise.all(ready), new Promise((r) => setTimeout(r, wait))])
}

// thumbFor picks the smallest fixed thumbnail size that fills a cell on this
// screen; the signature covers the file, not the size, so the URL's size
// part may change.
export function thumbFor(url, cell) {
  const need = cell * (globalThis.devicePixelRatio || 1)
  const size = [128, 256, 512].find((s) => s >= need) ?? 512
  return url.replace(/\/thumbs\/\d+\//, `/thumbs/${size}/`)
}
