import { useEffect, useState } from 'preact/hooks'

// A tiny history router: pages are picked from location.pathname, and the
// server answers every such path with index.html, so links can be bookmarked.
export function navigate(to, { replace = false } = {}) {
  if (to === location.pathname + location.search) return
  history[replace ? 'replaceState' : 'pushState'](null, '', to)
  dispatchEvent(new PopStateEvent('popstate'))
}

export function useLocation() {
  const [loc, setLoc] = useState(() => ({ path: location.pathname, search: location.search }))
  useEffect(() => {
    const on = () => setLoc({ path: location.pathname, search: location.search })
    addEventListener('popstate', on)
    return () => removeEventListener('popstate', on)
  }, [])
  return loc
}

export function route(path) {
  let m
  if ((m = path.match(/^\/videos\/(.+)\/label$/))) return { page: 'video-label', id: decodeURIComponent(m[1]) }
  if ((m = path.match(/^\/items\/(.+)$/))) return { page: 'item', id: decodeURIComponent(m[1]) }
  if ((m = path.match(/^\/datasets\/([^/]+)$/))) return { page: 'dataset', id: decodeURIComponent(m[1]) }
  if ((m = path.match(/^\/jobs\/([^/]+)$/))) return { page: 'job', id: decodeURIComponent(m[1]) }
  if ((m = path.match(/^\/tasks\/([^/]+)$/))) return { page: 'task', id: decodeURIComponent(m[1]) }
  if ((m = path.match(/^\/tasks\/([^/]+)\/jobs$/))) return { page: 'task-jobs', id: decodeURIComponent(m[1]) }
  if ((m = path.match(/^\/tasks\/([^/]+)\/jobs\/(\d+)$/))) return { page: 'label-job', task: decodeURIComponent(m[1]), id: +m[2] }
  if (path === '/evaluations/compare') return { page: 'eval-compare' }
  if ((m = path.match(/^\/evaluations\/([^/]+)$/))) return { page: 'evaluation', id: decodeURIComponent(m[1]) }
  if (path === '/evaluations') return { page: 'evaluations' }
  if (path === '/label-next') return { page: 'label-next' }
  if (path === '/video-task') return { page: 'video-task' }
  if (path === '/projects') return { page: 'projects' }
  if (path === '/queue') return { page: 'queue' }
  if (path === '/users') return { page: 'users' }
  if (path === '/stats') return { page: 'stats' }
  if (path === '/review') return { page: 'review' }
  if (path === '/jobs') return { page: 'jobs' }
  if (path === '/datasets') return { page: 'datasets' }
  if (path === '/map') return { page: 'map' }
  if (path === '/models') return { page: 'models' }
  if (path === '/') return { page: 'grid' }
  return { page: 'missing' }
}
