// CPU time from /proc for bench.mjs and profile.mjs (Linux clock ticks of 10 ms).
import { readFileSync, readdirSync } from 'node:fs'

// procs lists every process: its parent, CPU milliseconds (user and system)
// and Chromium process type (browser, renderer, gpu-process, utility:<sub-type>).
export function procs() {
  const stat = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8')
      const v = f.slice(f.lastIndexOf(')') + 2).split(' ')
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8')
      const type = /--type=([\w-]+)/.exec(cmd)?.[1] ?? 'browser'
      const sub = /--utility-sub-type=([\w.]+)/.exec(cmd)?.[1]
      stat.set(+d, { ppid: +v[1], ms: (+v[11] + +v[12]) * 10, type: sub ? type + ':' + sub : type })
    } catch { /* gone */ }
  }
  return stat
}

// children are the processes under this one (Chromium's) in a procs() table.
export function children(stat) {
  const ours = (pid) => { for (let p = pid; p > 1; p = stat.get(p)?.ppid ?? 0) if (p === process.pid) return true; return false }
  return [...stat].filter(([pid]) => pid !== process.pid && ours(pid)).map(([, v]) => v)
}
