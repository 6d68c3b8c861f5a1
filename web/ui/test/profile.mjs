// Profiles one grid update on a running server, as bench.mjs times it:
//   BASE, KEY, SECRET  the server and a read key
//   STEP   labelFacet (default), facet (annotation source machine), query or jump
//   TRACE  a file to write the Chrome trace to (optional)
//   CPUPROFILE  a file to write the JavaScript profile to (optional; DevTools opens it)
//   SAMPLE_US   the JavaScript sampling interval (default 200 µs)
//   INVALIDATIONS=1  trace what invalidated style and layout (each with its stack,
//                    which makes DOM writes many times slower: not for timing)
// It prints the API requests with their start and end (ms from the step's
// start), the CPU milliseconds of each Chromium process type, and the
// trace's busiest events per thread (self time).
import { writeFileSync } from 'node:fs'
import { launch } from './chromium.mjs'
import { children, procs } from './procs.mjs'
import { countChanges as countFrom, thumbsLoaded as thumbsIn } from './gridwait.mjs'

const { BASE, KEY, SECRET } = process.env
const STEP = process.env.STEP || 'labelFacet'
const { ctx, page, close } = await launch()
await ctx.addInitScript(([k, s]) => {
  sessionStorage.setItem('framelake.key', k)
  sessionStorage.setItem('framelake.secret', s)
}, [KEY, SECRET])

function cpuByType() {
  const out = {}
  for (const p of children(procs())) out[p.type] = (out[p.type] ?? 0) + p.ms
  return out
}

let t0 = 0
const reqs = []
page.on('request', (r) => r.url().includes('/api/') && reqs.push({ r, start: Date.now() - t0 }))
page.on('requestfinished', (r) => { const x = reqs.find((q) => q.r === r); if (x) x.end = Date.now() - t0 })

const thumbsLoaded = (i) => thumbsIn(page, i)
const count = () => page.getByTestId('item-count').textContent()
const countChanges = (from) => countFrom(page, from)
const settled = async () => { while (reqs.some((x) => x.end == null)) await new Promise((r) => setTimeout(r, 5)) }

try {
  await page.goto(`${BASE}/`)
  await thumbsLoaded()
  await countChanges('')
  await settled()
  await new Promise((r) => setTimeout(r, 1500))
  const cdp = await page.context().newCDPSession(page)
  const events = []
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value))
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r))
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink', 'cc', 'gpu', 'viz', 'toplevel', 'loading', 'netlog', 'disabled-by-default-devtools.timeline.frame',
      ...(process.env.INVALIDATIONS ? ['disabled-by-default-devtools.timeline.invalidationTracking'] : [])] },
  })
  await cdp.send('Profiler.enable')
  await cdp.send('Profiler.setSamplingInterval', { interval: +(process.env.SAMPLE_US || 200) })
  await cdp.send('Profiler.start')
  const before = await count()
  reqs.length = 0
  const c0 = cpuByType()
  t0 = Date.now()
  if (STEP === 'facet') {
    await page.locator('[data-testid=facet-value][data-field="annotation.source"][data-value=machine]').click()
  } else if (STEP === 'labelFacet') {
    await page.locator('[data-testid=facet-value][data-field="annotation.label"]').nth(0).click()
  } else if (STEP === 'query') {
    await page.getByTestId('query-input').fill('annotation.label = label07')
    await page.getByTestId('query-input').press('Enter')
  } else if (STEP === 'jump') {
    await page.getByTestId('goto-input').fill('900000')
    await page.getByTestId('goto-input').press('Enter')
  }
  if (STEP === 'jump') await thumbsLoaded(899999)
  else { await countChanges(before); await settled(); await thumbsLoaded() }
  const wall = Date.now() - t0
  const c1 = cpuByType()
  await settled()
  const { profile } = await cdp.send('Profiler.stop')
  await cdp.send('Tracing.end')
  await done
  if (process.env.TRACE) writeFileSync(process.env.TRACE, JSON.stringify({ traceEvents: events }))
  if (process.env.CPUPROFILE) writeFileSync(process.env.CPUPROFILE, JSON.stringify(profile))
  console.log(`${STEP}: ${wall} ms wall`)
  for (const x of reqs) console.log(`  ${String(x.start).padStart(5)} → ${String(x.end ?? '-').padStart(5)}  ${x.r.method()} ${decodeURIComponent(x.r.url().replace(BASE, '')).slice(0, 150)}`)
  console.log('CPU ms by process:', Object.fromEntries(Object.keys(c1).map((k) => [k, c1[k] - (c0[k] ?? 0)]).filter(([, v]) => v > 0)))
  summarize(events)
  jsProfile(profile)
} finally {
  await close()
}

// summarize prints each thread's busiest event names by self time.
function summarize(events) {
  const names = new Map()
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(e.pid + ':' + e.tid, e.args.name)
  const byThread = new Map()
  for (const e of events) {
    if (e.ph !== 'X' || e.dur == null) continue
    const k = e.pid + ':' + e.tid
    if (!byThread.has(k)) byThread.set(k, [])
    byThread.get(k).push(e)
  }
  for (const [k, evs] of byThread) {
    evs.sort((a, b) => a.ts - b.ts || b.dur - a.dur)
    const self = new Map(), stack = []
    let total = 0, cpu = 0
    for (const e of evs) {
      while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop()
      const parent = stack.at(-1)
      if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur)
      else { total += e.dur; cpu += e.tdur ?? 0 }
      self.set(e.name, (self.get(e.name) ?? 0) + e.dur)
      stack.push(e)
    }
    if (total < 5000) continue
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([n, d]) => `${n} ${(d / 1000).toFixed(1)}`)
    console.log(`${names.get(k) ?? k}: ${(total / 1000).toFixed(0)} ms busy, ${(cpu / 1000).toFixed(0)} ms on a core; ${top.join(', ')}`)
  }
}

// jsProfile prints the JavaScript functions with the most self time.
function jsProfile(p) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const self = new Map()
  const dt = p.timeDeltas
  p.samples.forEach((id, i) => {
    const n = byId.get(id).callFrame
    const k = `${n.functionName || '(anon)'} ${n.url.split('/').pop()}:${n.lineNumber}:${n.columnNumber}`
    self.set(k, (self.get(k) ?? 0) + (dt[i + 1] ?? 0))
  })
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)
  console.log('JS self time (ms):')
  for (const [k, us] of top) console.log(`  ${(us / 1000).toFixed(1).padStart(7)}  ${k}`)
}
