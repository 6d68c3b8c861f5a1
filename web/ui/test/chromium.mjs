// launch starts Debian's headless Chromium for the page scripts, in a
// viewport of 1280x800 unless told; close() also removes the throwaway
// profile. There is no GPU here, so Chromium composites the page in software,
// as it does on any machine without a usable GPU, and runs WebGL (the
// embedding map) through SwiftShader. COMPOSITING=swiftshader composites
// through SwiftShader's emulated GPU instead, which the benchmarks used
// before: it draws the same frames at about twice Chromium's CPU time.
import { chromium } from 'playwright-core'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const compositing = process.env.COMPOSITING === 'swiftshader' ? 'swiftshader' : 'software'

const chromiumArgs = () => ['--headless', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
  ...(compositing === 'software' ? ['--disable-gpu-compositing'] : [])]

export async function launch({ viewport = { width: 1280, height: 800 } } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'framelake-chromium-'))
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport,
    args: chromiumArgs(),
  })
  if (process.env.UI_DIST) await serveDist(ctx, process.env.UI_DIST)
  const page = ctx.pages()[0] ?? (await ctx.newPage())
  const close = async () => {
    await ctx.close()
    rmSync(profile, { recursive: true, force: true })
  }
  return { ctx, page, close }
}

// launchBrowser starts one Chromium for pages in separate contexts (own
// cookies and storage each: several people at once, as test/team.mjs
// drives them); newContext() opens one with the app's files from UI_DIST
// when set.
export async function launchBrowser({ viewport = { width: 1280, height: 800 } } = {}) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: chromiumArgs() })
  const newContext = async () => {
    const ctx = await browser.newContext({ viewport })
    if (process.env.UI_DIST) await serveDist(ctx, process.env.UI_DIST)
    return ctx
  }
  return { browser, newContext, close: () => browser.close() }
}

// serveDist answers the app's own files (index.html and assets) from dir, a
// freshly built dist/, instead of the server's embedded copy: UI_DIST=dist
// tries a rebuilt app against a running server without building the binary.
async function serveDist(ctx, dir) {
  const types = { js: 'text/javascript', css: 'text/css', html: 'text/html', svg: 'image/svg+xml' }
  await ctx.route((u) => !/^\/(api|media|thumbs|crops)\//.test(u.pathname), (route) => {
    const p = new URL(route.request().url()).pathname
    const f = p.startsWith('/assets/') && existsSync(join(dir, p)) ? join(dir, p) : join(dir, 'index.html')
    route.fulfill({ body: readFileSync(f), contentType: types[f.split('.').pop()] ?? 'application/octet-stream' })
  })
}

// mapDrawn waits until the embedding map has drawn n points.
export const mapDrawn = (page, n, timeout = 60000) => page.waitForFunction((n) => {
  const c = document.querySelector('[data-testid=map-canvas]')
  return c && +c.dataset.points === n && c.dataset.drawMs !== ''
}, n, { timeout })
