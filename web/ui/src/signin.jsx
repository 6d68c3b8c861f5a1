import { useEffect, useState } from 'preact/hooks'
import { api, forgetCreds, restoreSession, saveCreds, savedCreds, signIn, signOut } from './api.js'
import { navigate } from './router.js'
import { homeOf } from './team.js'
import './team.css'

// useSignedIn is who the page acts as: {me, checking, signedIn(me),
// signOut()}. On load it checks a key kept in this tab (GET /me) or the
// session cookie (GET /session gives back the CSRF token, then GET /me).
export function useSignedIn() {
  const [me, setMe] = useState(null)
  const [checking, setChecking] = useState(true)
  // A person lands on their home (annotators and reviewers: their queue)
  // when they sign in or reload at /.
  const signedIn = (m) => {
    setMe(m)
    if (location.pathname === '/' && homeOf(m) !== '/') navigate(homeOf(m), { replace: true })
  }
  useEffect(() => {
    const check = savedCreds()
      ? api('/me').catch(() => { forgetCreds(); return null })
      : restoreSession().then((s) => (s ? api('/me') : null))
    check.then((m) => (m ? signedIn(m) : setMe(null)), () => setMe(null)).finally(() => setChecking(false))
    // A session ended elsewhere (sign-out in another tab, a disabled
    // person): the next request is a 401 and the page asks again.
    const out = () => setMe(null)
    addEventListener('framelake:signedout', out)
    return () => removeEventListener('framelake:signedout', out)
  }, [])
  return { me, checking, signedIn, signOut: () => signOut().then(() => setMe(null)) }
}

// SignIn is the page's front door: a name and password by default, an API
// key and secret below it for scripts' keys and older setups.
export function SignIn({ onSignedIn }) {
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const sso = useSSO()
  const attempt = async (e, how) => {
    e.preventDefault()
    const f = e.currentTarget.elements
    setBusy(true)
    setError(null)
    try {
      if (how === 'password') {
        await signIn(f.name.value.trim(), f.password.value)
        onSignedIn(await api('/me'))
      } else {
        const creds = { key: f.key.value.trim(), secret: f.secret.value.trim() }
        const me = await api('/me', { creds })
        saveCreds(creds)
        onSignedIn(me)
      }
    } catch (err) {
      setError(err.message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <div class="signin-page">
      <form class="signin" onSubmit={(e) => attempt(e, 'password')} data-testid="signin-form">
        <h1>framelake</h1>
        <label>Name<input name="name" data-testid="signin-name" autocomplete="username" required autofocus /></label>
        <label>Password<input name="password" type="password" data-testid="signin-password" autocomplete="current-password" required /></label>
        <button type="submit" data-testid="signin-password-submit" disabled={busy}>Sign in</button>
        {error && <div class="error" data-testid="signin-error" role="alert">{error}</div>}
        {sso && <a class="button sso" href={sso} data-testid="signin-sso">Sign in with SSO</a>}
      </form>
      <form class="signin signin-key" onSubmit={(e) => attempt(e, 'key')} data-testid="signin-key-form">
        <h2>Or with an API key</h2>
        <label>API key<input name="key" data-testid="signin-key" autocomplete="off" required /></label>
        <label>Secret<input name="secret" type="password" data-testid="signin-secret" autocomplete="off" required /></label>
        <button type="submit" class="ghost" data-testid="signin-submit" disabled={busy}>Sign in with the key</button>
        <p class="muted">The key stays in this tab only. Make one with <code>framelake keys create</code>.</p>
      </form>
    </div>
  )
}

// useSSO is where "Sign in with SSO" leads when the server has single
// sign-on (GET /session/sso, which needs no key: docs/team.md), else null.
// A plain link: the provider's round trip is whole-page navigation.
function useSSO() {
  const [url, setUrl] = useState(null)
  useEffect(() => {
    fetch('/api/v1/session/sso').then((r) => (r.ok ? r.json() : null))
      .then((r) => setUrl(r?.oidc && r.signInUrl ? r.signInUrl : null), () => setUrl(null))
  }, [])
  return url
}
