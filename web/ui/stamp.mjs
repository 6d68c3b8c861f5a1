// Records in dist/SOURCES a hash of what the build was made from; the Go
// test TestUIBuildIsCurrent recomputes it to catch a stale committed build.
// The rule (keep in step with web/ui_test.go): the files below, sorted by
// path, each contributing "<path>\n<sha256 hex of its bytes>\n".
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const roots = ['index.html', 'package.json', 'package-lock.json', 'vite.config.js', 'src']

function walk(p) {
  try {
    return readdirSync(p, { withFileTypes: true }).flatMap((e) => walk(join(p, e.name)))
  } catch (e) {
    if (e.code === 'ENOTDIR') return [p]
    throw e
  }
}

const files = roots.flatMap(walk).sort()
const all = createHash('sha256')
for (const f of files) all.update(`${f}\n${createHash('sha256').update(readFileSync(f)).digest('hex')}\n`)
writeFileSync('dist/SOURCES', `sha256 ${all.digest('hex')}\n`)
