import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, forgetCreds, savedCreds, saveCreds } from './api.js'
import { Grid } from './grid.jsx'
import { ItemView } from './item.jsx'
import { Job, Jobs } from './jobs.jsx'
import { Dataset, Datasets } from './datasets.jsx'
import { Projects } from './projects.jsx'
import { Review } from './review.jsx'
import { navigate, route, useLocation } from './router.js'
import { MapPage } from './lazy.jsx'
import { Models } from './models.jsx'
import { TaskWorkspace } from './workspace.jsx'
import { Evaluations } from './evaluations.jsx'
import { Evaluation } from './evaluation.jsx'
import { EvalCompare } from './evalcompare.jsx'
import { LabelNext } from './labelnext.jsx'
import { VideoWorkspace } from './videows.jsx'
import './style.css'

// App: nothing but sign-in until a key is verified (GET /api/v1/me); then
// the page the address names, so deep links open after sign-in.
function App() {
  const [me, setMe] = useState(null)
  const [checking, setChecking] = useState(() => savedCreds() != null)
  const loc = useLocation()

  useEffect(() => {
    if (!savedCreds()) return
    api('/me').then(setMe, () => forgetCreds()).finally(() => setChecking(false))
  }, [])

  if (checking) return null
  if (!me) return <SignIn onSignedIn={setMe} />
  const r = route(loc.path)
  return (
    <div class={'shell role-' + me.role}>
      <header class="top">
        <a class="brand" href="/" onClick={(e) => { e.preventDefault(); navigate('/') }}>framelake</a>
        <nav>
          <NavLink to="/" on={r.page === 'grid' || r.page === 'item' || r.page === 'video-label'}>Lake</NavLink>
          <NavLink to="/datasets" on={r.page === 'datasets' || r.page === 'dataset'}>Datasets</NavLink>
          <NavLink to="/map" on={r.page === 'map'}>Map</NavLink>
          <NavLink to="/models" on={r.page === 'models'}>Models</NavLink>
          <NavLink to="/jobs" on={r.page === 'jobs' || r.page === 'job'}>Jobs</NavLink>
          <NavLink to="/projects" on={r.page === 'projects' || r.page === 'task'}>Projects</NavLink>
          <NavLink to="/review" on={r.page === 'review'}>Review</NavLink>
          <NavLink to="/evaluations" on={r.page.startsWith('eval')}>Evaluations</NavLink>
          <NavLink to="/label-next" on={r.page === 'label-next'}>Label next</NavLink>
        </nav>
        <span class="who" data-testid="who" data-role={me.role}>{me.name || me.key} <span class="role">{me.role}</span></span>
        <button class="ghost" onClick={() => { forgetCreds(); setMe(null) }}>Sign out</button>
      </header>
      <main>
        {r.page === 'grid' && <Grid search={loc.search} me={me} />}
        {r.page === 'item' && <ItemView name={r.id} />}
        {r.page === 'video-label' && <VideoWorkspace name={r.id} search={loc.search} me={me} />}
        {r.page === 'jobs' && <Jobs me={me} search={loc.search} />}
        {r.page === 'job' && <Job id={r.id} me={me} />}
        {r.page === 'datasets' && <Datasets />}
        {r.page === 'dataset' && <Dataset id={r.id} />}
        {r.page === 'map' && <MapPage search={loc.search} me={me} />}
        {r.page === 'models' && <Models search={loc.search} />}
        {r.page === 'projects' && <Projects me={me} />}
        {r.page === 'review' && <Review search={loc.search} me={me} />}
        {r.page === 'task' && <TaskWorkspace id={r.id} search={loc.search} me={me} />}
        {r.page === 'evaluations' && <Evaluations me={me} />}
        {r.page === 'evaluation' && <Evaluation id={r.id} />}
        {r.page === 'eval-compare' && <EvalCompare search={loc.search} />}
        {r.page === 'label-next' && <LabelNext me={me} search={loc.search} />}
        {r.page === 'missing' && <div class="error">No page at {loc.path}.</div>}
      </main>
    </div>
  )
}

function NavLink({ to, on, children }) {
  return <a href={to} class={on ? 'on' : ''} onClick={(e) => { e.preventDefault(); navigate(to) }}>{children}</a>
}

function SignIn({ onSignedIn }) {
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    const creds = { key: f.key.value.trim(), secret: f.secret.value.trim() }
    setBusy(true)
    setError(null)
    try {
      const me = await api('/me', { creds })
      saveCreds(creds)
      onSignedIn(me)
    } catch (err) {
      setError(err.message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="signin" onSubmit={submit}>
      <h1>framelake</h1>
      <label>API key<input name="key" data-testid="signin-key" autocomplete="username" required autofocus /></label>
      <label>Secret<input name="secret" type="password" data-testid="signin-secret" autocomplete="current-password" required /></label>
      <button type="submit" data-testid="signin-submit" disabled={busy}>Sign in</button>
      {error && <div class="error" data-testid="signin-error" role="alert">{error}</div>}
      <p class="muted">The key stays in this tab only. Make one with <code>framelake keys create</code>.</p>
    </form>
  )
}

render(<App />, document.getElementById('app'))
