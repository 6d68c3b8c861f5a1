import { fn, api, qs } from './api.js'

// The listing the grid shows, kept while the tab lives so that the item view
// can step through it with the arrows and Esc returns to the same place.
// Pages are fetched on demand: jumping to item N loads the page holding N
// and nothing in between.
export const PAGE = 250

let current = null

export function listFor(q, sortBy, sortOrder, itemType) {
  const key = JSON.stringify([q, sortBy, sortOrder, itemType])
  if (!current || current.key !== key) {
    current = { key, q, sortBy, sortOrder, itemType, count: null, pages: new Map(), pending: new Map(), cursor: -1, scrollTop: 0 }
  }
  return current
}

export const currentList = () => current

// gridPath is the grid's address for a listing: defaults are left out.
export function gridPath(list) {
  if (!list) return '/'
  const s = qs({ q: list.q, type: list.itemType === 'image' ? '' : list.itemType, sort: list.sortBy === 'date_modified' ? '' : list.sortBy, order: list.sortOrder === 'DESC' ? '' : list.sortOrder })
  return '/' + (s ? '?' + s : '')
}

export function loadCount(list) {
  if (list.count != null) return Promise.resolve(list.count)
  return fn('get_item_count_from_lake', { query: list.q, item_type: list.itemType }).then((r) => (list.count = r[0].count))
}

export function loadPage(list, index) {
  if (list.pages.has(index)) return Promise.resolve(list.pages.get(index))
  if (!list.pending.has(index)) {
    const p = api('/lake/items?' + qs({ query: list.q, itemType: list.itemType, pageIndex: index, pageSize: PAGE, sortBy: list.sortBy, sortOrder: list.sortOrder }))
      .then((r) => {
        list.pages.set(index, r.items)
        return r.items
      })
      .finally(() => list.pending.delete(index))
    list.pending.set(index, p)
  }
  return list.pending.get(index)
}

export function itemAt(list, i) {
  return list?.pages.get(Math.floor(i / PAGE))?.[i % PAGE]
}

// thumbFor picks the smallest fixed thumbnail size that fills a cell on this
// screen; the signature covers the file, not the size, so the URL's size
// part may change.
export function thumbFor(url, cell) {
  const need = cell * (globalThis.devicePixelRatio || 1)
  const size = [128, 256, 512].find((s) => s >= need) ?? 512
  return url.replace(/\/thumbs\/\d+\//, `/thumbs/${size}/`)
}
