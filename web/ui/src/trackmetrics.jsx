import { useEffect, useState } from 'preact/hooks'
import { api, qs } from './api.js'
import { Field, Link } from './evalkit.jsx'
import { loadTracks } from './tracks.js'
import { videoLabelPath } from './videows.jsx'

// TrackMetrics is the evaluations page's tracking section: a video's tracks
// of one operation (the truth: people's) scored against another's (a
// model's, a tracker's import or a propagation run) by GET
// /lake/files/{uniqueName}/tracks/metrics: MOTA and MOTP (CLEAR MOT), IDF1
// (Ristani et al.) and HOTA (Luiten et al.), label by label and over all
// labels. Detection evaluations above score boxes of images; every figure
// here is the route's, shown as it answers.
export function TrackMetrics() {
  const [videos, setVideos] = useState(null)
  const [video, setVideo] = useState('')
  const [ops, setOps] = useState(null) // [{operation, source, tracks}]
  const [truth, setTruth] = useState('')
  const [predicted, setPredicted] = useState('')
  const [res, setRes] = useState(null)
  const [error, setError] = useState(null)

  // Videos with tracks of two operations at least have two tracks.
  useEffect(() => {
    api('/lake/items?' + qs({ itemType: 'video', query: 'track.count >= 2', pageSize: 100 }))
      .then((r) => { setVideos(r.items); if (r.items.length) setVideo(r.items[0].uniqueName) }, setError)
  }, [])
  useEffect(() => {
    if (!video) return
    setOps(null)
    setRes(null)
    loadTracks(video).then((ts) => {
      const by = new Map()
      for (const t of ts) {
        const o = by.get(t.operation) ?? { operation: t.operation, source: t.source, tracks: 0 }
        o.tracks++
        if (t.source === 'machine') o.source = 'machine'
        by.set(t.operation, o)
      }
      const list = [...by.values()]
      setOps(list)
      const gt = list.find((o) => o.source === 'human') ?? list[0]
      const pr = list.find((o) => o.source === 'machine' && o !== gt) ?? list.find((o) => o !== gt)
      setTruth(gt?.operation ?? '')
      setPredicted(pr?.operation ?? '')
    }, setError)
  }, [video])
  useEffect(() => {
    if (!video || !truth || !predicted || truth === predicted) return setRes(null)
    let live = true
    setError(null)
    api('/lake/files/' + encodeURIComponent(video) + '/tracks/metrics?' + qs({ truth, predicted }))
      .then((r) => live && setRes(r), (e) => live && setError(e))
    return () => { live = false }
  }, [video, truth, predicted])

  if (!videos) return null
  return (
    <section class="track-metrics" data-testid="track-metrics">
      <h2>Tracking <span class="muted">(videos)</span></h2>
      {videos.length === 0 ? <p class="muted">No video has tracks of two operations to compare yet.</p> : (
        <>
          <div class="eval-form">
            <Field label="video">
              <select data-testid="tm-video" value={video} onChange={(e) => setVideo(e.currentTarget.value)}>
                {videos.map((v) => <option value={v.uniqueName}>{v.name}</option>)}
              </select>
            </Field>
            {ops && <OpSelect label="truth" id="tm-truth" ops={ops} value={truth} set={setTruth} />}
            {ops && <OpSelect label="predicted" id="tm-predicted" ops={ops} value={predicted} set={setPredicted} />}
          </div>
          {ops && ops.length < 2 && <p class="muted">This video's tracks are of one operation: nothing to score them against.</p>}
          {error && <p class="error" role="alert">{error.message}</p>}
          {res && <MetricsTable res={res} video={video} />}
        </>
      )}
    </section>
  )
}

const OpSelect = ({ label, id, ops, value, set }) => (
  <Field label={label}>
    <select data-testid={id} value={value} onChange={(e) => set(e.currentTarget.value)}>
      {ops.map((o) => <option value={o.operation}>{o.operation} ({o.source}, {o.tracks} tracks)</option>)}
    </select>
  </Field>
)

// fig shows a figure to three places; MOTA may be negative (more errors
// than true objects), so a sign is no sentinel here.
const fig = (v) => (v == null || Number.isNaN(v) ? '–' : v.toFixed(3))

// MetricsTable lists every label's figures, all labels ("") first.
function MetricsTable({ res, video }) {
  const rows = Object.entries(res.labels).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)))
  return (
    <>
      <table class="table" data-testid="tm-table">
        <thead><tr><th>label</th><th>MOTA</th><th>MOTP</th><th>IDF1</th><th>HOTA</th><th>ID switches</th><th>frag.</th>
          <th>true tracks</th><th>mostly tracked</th></tr></thead>
        <tbody>
          {rows.map(([label, m]) => (
            <tr data-testid="tm-row" data-label={label} data-mota={m.mota} data-motp={m.motp} data-idf1={m.idf1} data-hota={m.hota}>
              <td>{label || 'all labels'}</td><td>{fig(m.mota)}</td><td>{fig(m.motp)}</td><td>{fig(m.idf1)}</td><td>{fig(m.hota)}</td>
              <td>{m.idsw}</td><td>{m.frag}</td><td>{m.gtTracks}</td><td>{m.mostlyTracked}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        {res.predicted} against {res.truth}: CLEAR MOT and identity at IoU 0.5, HOTA over α 0.05–0.95, interpolated frames
        included (docs/tracks.md). <Link to={videoLabelPath(video, { op: res.predicted })}>Open the predicted tracks</Link>
      </p>
    </>
  )
}
