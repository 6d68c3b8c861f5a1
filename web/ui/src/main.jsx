import { render } from 'preact'
import { SignIn, useSignedIn } from './signin.jsx'
import { Queue, TaskJobs } from './queue.jsx'
import { Users } from './users.jsx'
import { Stats } from './stats.jsx'
import { homeOf, isAdmin, teamOnly } from './team.js'
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
import { LabelJob, NewVideoTask } from './videotask.jsx'
import './style.css'

// App: nothing but sign-in until a person or key is verified (signin.jsx);
// then the page the address names, so deep links open after sign-in.
function App() {
  const { me, checking, signedIn, signOut } = useSignedIn()
  const loc = useLocation()

  if (checking) return null
  if (!me) return <SignIn onSignedIn={signedIn} />
  const r = route(loc.path)
  return (
    <div class={'shell role-' + me.role}>
      <header class="top">
        <a class="brand" href={homeOf(me)} onClick={(e) => { e.preventDefault(); navigate(homeOf(me)) }}>framelake</a>
        <nav>
          {!teamOnly(me) && <>
          <NavLink to="/" on={r.page === 'grid' || r.page === 'item' || r.page === 'video-label'}>Lake</NavLink>
          <NavLink to="/datasets" on={r.page === 'datasets' || r.page === 'dataset'}>Datasets</NavLink>
          <NavLink to="/map" on={r.page === 'map'}>Map</NavLink>
          <NavLink to="/models" on={r.page === 'models'}>Models</NavLink>
          <NavLink to="/jobs" on={r.page === 'jobs' || r.page === 'job'}>Jobs</NavLink>
          <NavLink to="/projects" on={r.page === 'projects' || r.page === 'task' || r.page === 'task-jobs' || r.page === 'label-job'}>Projects</NavLink>
          <NavLink to="/review" on={r.page === 'review'}>Review</NavLink>
          <NavLink to="/evaluations" on={r.page.startsWith('eval')}>Evaluations</NavLink>
          <NavLink to="/label-next" on={r.page === 'label-next'}>Label next</NavLink>
          </>}
          <NavLink to="/queue" on={r.page === 'queue'}>My queue</NavLink>
          <NavLink to="/stats" on={r.page === 'stats'}>Statistics</NavLink>
          {isAdmin(me) && <NavLink to="/users" on={r.page === 'users'}>People</NavLink>}
        </nav>
        <span class="who" data-testid="who" data-role={me.role} data-name={me.name}>{me.name || me.key} <span class="role">{me.role}</span></span>
        <button class="ghost" data-testid="sign-out" onClick={signOut}>Sign out</button>
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
        {r.page === 'label-job' && <LabelJob taskId={r.task} number={r.id} search={loc.search} me={me} />}
        {r.page === 'video-task' && <NewVideoTask search={loc.search} me={me} />}
        {r.page === 'task-jobs' && <TaskJobs id={r.id} me={me} />}
        {r.page === 'queue' && <Queue me={me} />}
        {r.page === 'users' && <Users me={me} />}
        {r.page === 'stats' && <Stats me={me} search={loc.search} />}
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

render(<App />, document.getElementById('app'))
