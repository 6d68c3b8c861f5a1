import { useEffect, useRef, useState } from 'preact/hooks'

// usePlayRate measures the frames shown per second while playing, over the
// last two seconds: what a browser test reads to check play keeps up with
// the video's rate.
export function usePlayRate(playing, shown) {
  const times = useRef([])
  const [rate, setRate] = useState(null)
  useEffect(() => { if (playing) times.current = [] }, [playing])
  useEffect(() => {
    if (!playing || !shown) return
    const now = performance.now()
    const t = (times.current = [...times.current.filter((x) => now - x <= 2000), now])
    if (t.length >= 3) setRate(((t.length - 1) * 1000) / (t[t.length - 1] - t[0]))
  }, [shown])
  return rate
}

// PlayRate shows that rate beside the video's own.
export function PlayRate({ rate, fps, playing }) {
  return (
    <span class="muted vws-rate" data-testid="vws-rate" data-rate={rate == null ? '' : rate.toFixed(2)} data-fps={fps} data-playing={playing ? '1' : '0'}
      title="frames shown per second while playing, over the last 2 s">
      {rate == null ? '' : `${playing ? 'playing' : 'played'} at ${rate.toFixed(1)} fps`}
    </span>
  )
}
