// The intelligent scissors' worker: one live-wire map (livewire.js) per
// anchor, over the window of the frame's pixels the page sends, so the
// Dijkstra never runs on the page's main thread.
import { wireMap } from './livewire.js'

self.onmessage = (e) => {
  const { id, rgba, w, h, ax, ay } = e.data
  const t0 = performance.now()
  const dir = wireMap(new Uint8ClampedArray(rgba), w, h, ax, ay)
  self.postMessage({ id, dir, ms: performance.now() - t0 }, [dir.buffer])
}
