// The intelligent scissors' worker: one live-wire map (livewire.js) per
// anchor, over a window of the frame's pixels, so neither the Dijkstra nor
// the window's cut runs on the page's main thread. The page sends the
// frame's pixels once (a copy, transferred: the page keeps its own for the
// snap), then only each map's window; cutting a 2,000² window out of a 4K
// frame on the page cost a 16 MB allocation and copy in a pointermove
// (a 378 ms task at load 25, with the garbage collection it started).
import { wireMap } from './livewire.js'

let frame = null // {url, data, w, h}: the frame's RGBA

self.onmessage = (e) => {
  const { id, url, rgba, fw, fh, x0, y0, w, h, ax, ay } = e.data
  if (rgba) frame = { url, data: new Uint8ClampedArray(rgba), w: fw, h: fh }
  if (frame?.url !== url) return self.postMessage({ id, error: 'the scissors worker has not the frame' })
  const t0 = performance.now()
  const win = new Uint8ClampedArray(w * h * 4)
  for (let y = 0; y < h; y++) win.set(frame.data.subarray(((y0 + y) * frame.w + x0) * 4, ((y0 + y) * frame.w + x0 + w) * 4), y * w * 4)
  const dir = wireMap(win, w, h, ax, ay)
  self.postMessage({ id, dir, ms: performance.now() - t0 }, [dir.buffer])
}
