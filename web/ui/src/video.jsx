import { useEffect, useRef, useState } from 'preact/hooks'
import { Boxes } from './boxes.jsx'

// frameAt is the frame shown at media time t. Seeks aim at the middle of a
// frame ((n + 0.5) / fps) and decoded frames report their start (n / fps), so
// both land on n whatever the rounding of the time.
export const frameAt = (t, fps) => Math.floor(t * fps + 1e-4)

// VideoPlayer plays a video with the boxes of the frame on screen, steps one
// frame with , and . (paused), and seeks to a typed frame number, using the
// stored frame rate. Boxes are matched by their frame index.
export function VideoPlayer({ item }) {
  const video = useRef()
  const fps = item.frameRate || 25
  const last = Math.max(0, (item.frameCount || 1) - 1)
  const [frame, setFrame] = useState(0)

  const seek = (n) => {
    const v = video.current
    n = Math.max(0, Math.min(last, n))
    v.pause()
    v.currentTime = (n + 0.5) / fps
    setFrame(n)
  }

  useEffect(() => {
    const v = video.current
    let handle
    // While playing, each presented frame reports its own media time.
    const onFrame = (_, meta) => {
      setFrame(frameAt(meta.mediaTime, fps))
      handle = v.requestVideoFrameCallback(onFrame)
    }
    if (v.requestVideoFrameCallback) handle = v.requestVideoFrameCallback(onFrame)
    const onSeeked = () => setFrame(frameAt(v.currentTime, fps))
    v.addEventListener('seeked', onSeeked)
    return () => {
      v.removeEventListener('seeked', onSeeked)
      if (handle != null) v.cancelVideoFrameCallback?.(handle)
    }
  }, [item.uniqueName, fps])

  useEffect(() => {
    const key = (e) => {
      if (/INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName)) return
      if (e.key === '.') seek(frameAt(video.current.currentTime, fps) + 1)
      else if (e.key === ',') seek(frameAt(video.current.currentTime, fps) - 1)
      else return
      e.preventDefault()
    }
    addEventListener('keydown', key)
    return () => removeEventListener('keydown', key)
  }, [item.uniqueName, fps, last])

  const boxes = item.boxes.filter((b) => b.frame === frame)
  return (
    <div class="video-player">
      <div class="frame video-frame" style={{ aspectRatio: `${item.width || 16} / ${item.height || 9}` }}>
        <video ref={video} src={item.url} preload="auto" class="media" data-testid="item-video" controls
          onClick={(e) => { e.preventDefault(); const v = video.current; v.paused ? v.play() : v.pause() }} />
        <Boxes boxes={boxes} width={item.width} height={item.height} />
      </div>
      <div class="video-bar">
        <button class="ghost" onClick={() => seek(frame - 1)} title="previous frame (,)">‹</button>
        <span data-testid="video-frame" data-frame={frame}>frame {frame} / {last}</span>
        <button class="ghost" onClick={() => seek(frame + 1)} title="next frame (.)">›</button>
        <form onSubmit={(e) => { e.preventDefault(); seek(+e.currentTarget.elements.f.value) }}>
          <input name="f" type="number" min="0" max={last} placeholder="go to frame" data-testid="video-frame-input" />
        </form>
        <span class="muted">{fps.toFixed(fps % 1 ? 3 : 0)} fps · {boxes.length} {boxes.length === 1 ? 'box' : 'boxes'} on this frame</span>
      </div>
    </div>
  )
}
