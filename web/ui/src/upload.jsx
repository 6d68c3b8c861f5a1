import { useState } from 'preact/hooks'
import { authHeaders } from './api.js'

// Upload sends dropped or chosen files into a collection, one request per
// file so that each has its own progress and, when refused, its own reason.
export function Upload({ onDone, onClose }) {
  const [collection, setCollection] = useState('uploads')
  const [files, setFiles] = useState([])
  const [over, setOver] = useState(false)

  const start = async (list) => {
    const rows = [...list].map((f) => ({ file: f, name: f.name, progress: 0, state: 'waiting', reason: '' }))
    setFiles((fs) => [...fs, ...rows])
    const update = (row, change) => {
      Object.assign(row, change)
      setFiles((fs) => [...fs])
    }
    let next = 0
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++]
        update(row, { state: 'sending' })
        try {
          await send(row.file, collection, (p) => update(row, { progress: p }))
          update(row, { state: 'stored', progress: 1 })
        } catch (e) {
          update(row, { state: 'rejected', reason: e.message })
        }
      }
    }
    await Promise.all([worker(), worker()])
    onDone()
  }

  return (
    <div class="upload" data-testid="upload-panel">
      <div class="upload-head">
        <label>collection <input value={collection} onInput={(e) => setCollection(e.currentTarget.value)} data-testid="upload-collection" /></label>
        <label class="pick">choose files<input type="file" multiple hidden data-testid="upload-input" onChange={(e) => start(e.currentTarget.files)} /></label>
        <button class="ghost" onClick={onClose}>Close</button>
      </div>
      <div class={'dropzone' + (over ? ' over' : '')}
        onDragOver={(e) => { e.preventDefault(); setOver(true) }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => { e.preventDefault(); setOver(false); start(e.dataTransfer.files) }}>
        Drop images or videos here
      </div>
      <ul class="upload-list">
        {files.map((f) => (
          <li data-testid="upload-row" data-name={f.name} data-state={f.state} class={f.state}>
            <span class="upload-name">{f.name}</span>
            {f.state === 'rejected' ? <span class="error">{f.reason}</span> : <progress max="1" value={f.progress} />}
            <span class="muted">{f.state}</span>
          </li>
        ))}
      </ul>
    </div>
  )
}

// send posts one file with XMLHttpRequest, whose upload events give progress.
function send(file, collection, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData()
    form.append('collectionName', collection)
    form.append('files', file, file.name)
    const x = new XMLHttpRequest()
    x.open('POST', '/api/v1/lake/files')
    for (const [k, v] of Object.entries(authHeaders('POST'))) x.setRequestHeader(k, v)
    x.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total)
    x.onload = () => {
      let body = null
      try { body = JSON.parse(x.responseText) } catch {}
      if (x.status === 200) resolve(body)
      else reject(new Error(body?.error?.message ?? `HTTP ${x.status}`))
    }
    x.onerror = () => reject(new Error('network error'))
    x.send(form)
  })
}
