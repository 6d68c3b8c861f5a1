// A scatterplot of up to millions of points in plain WebGL, with the parts of
// regl-scatterplot's interface the map uses: draw, set, subscribe (pointOver,
// pointOut, select, deselect), getScreenPosition, destroy. regl compiles its
// draw commands with new Function, which the app's Content-Security-Policy
// (script-src 'self', no 'unsafe-eval') forbids, so the map drew nothing
// under it; this draws with two fixed shaders and no generated code.
//
// Points are given in [-1, 1] on each axis, which fills the canvas (map.jsx
// stretches the layout to it); the wheel zooms about the cursor, a drag pans,
// Shift-drag draws a lasso whose points are selected, a click on a point
// selects it and a click elsewhere clears the selection. The visible canvas is
// 2D: each frame is drawn by WebGL on a canvas of its own and copied over,
// with the lasso on top, so scripts may read its pixels with getImageData.

const VS = `
attribute vec2 pos;
attribute float cat;
attribute float sel;
uniform vec2 center;
uniform float zoom;
uniform float size;
uniform float pass; // 0 every point, 1 the selected points' ring, 2 the selected points
uniform vec3 colors[16];
varying vec3 color;
void main() {
  // In the selection's passes the other points are put outside the view (a point size of 0 may be drawn as 1).
  bool shown = pass == 0.0 || sel > 0.5;
  gl_Position = shown ? vec4((pos - center) * zoom, 0.0, 1.0) : vec4(2.0, 2.0, 2.0, 1.0);
  gl_PointSize = pass == 1.0 ? size + 6.0 : size;
  color = pass == 1.0 ? vec3(1.0) : colors[int(cat)];
}`

const FS = `
precision mediump float;
uniform float alpha;
varying vec3 color;
void main() {
  vec2 d = gl_PointCoord * 2.0 - 1.0;
  float r = dot(d, d);
  if (r > 1.0) discard;
  gl_FragColor = vec4(color, alpha * (1.0 - smoothstep(0.75, 1.0, r)));
}`

const hexRgb = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255)

export default function createScatterplot(opts) {
  const canvas = opts.canvas
  const out = canvas.getContext('2d')
  const glCanvas = document.createElement('canvas')
  const gl = glCanvas.getContext('webgl', { premultipliedAlpha: false, antialias: false })
  if (!gl) throw new Error('this browser has no WebGL: the map cannot be drawn')
  const prog = program(gl)
  const loc = (n) => gl.getUniformLocation(prog, n)
  const bufs = { pos: gl.createBuffer(), cat: gl.createBuffer(), sel: gl.createBuffer() }
  const subs = {}
  const emit = (ev, arg) => (subs[ev] ?? []).forEach((f) => f(arg))
  const st = {
    width: opts.width || 1, height: opts.height || 1, size: 6, colors: ['#5b9dff'], bg: hexRgb(opts.backgroundColor ?? '#000000'),
    alpha: opts.opacity ?? 1, lasso: opts.lassoColor ?? [0.36, 0.62, 1, 1],
    x: [], y: [], n: 0, selected: new Set(), center: [0, 0], zoom: 1, hover: -1, drawing: null, frame: 0, destroyed: false,
  }

  const toScreen = (i) => [((st.x[i] - st.center[0]) * st.zoom + 1) / 2 * st.width, (1 - (st.y[i] - st.center[1]) * st.zoom) / 2 * st.height]
  const toData = (sx, sy) => [(2 * sx / st.width - 1) / st.zoom + st.center[0], (1 - 2 * sy / st.height) / st.zoom + st.center[1]]

  function render() {
    st.frame = 0
    if (st.destroyed) return
    const dpr = window.devicePixelRatio || 1
    const w = Math.max(1, Math.round(st.width * dpr))
    const h = Math.max(1, Math.round(st.height * dpr))
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h }
    if (glCanvas.width !== w || glCanvas.height !== h) { glCanvas.width = w; glCanvas.height = h }
    gl.viewport(0, 0, w, h)
    gl.clearColor(st.bg[0], st.bg[1], st.bg[2], 1)
    gl.clear(gl.COLOR_BUFFER_BIT)
    if (st.n) {
      gl.useProgram(prog)
      gl.enable(gl.BLEND)
      gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA)
      attr('pos', 2)
      attr('cat', 1)
      attr('sel', 1)
      gl.uniform2f(loc('center'), st.center[0], st.center[1])
      gl.uniform1f(loc('zoom'), st.zoom)
      gl.uniform1f(loc('size'), st.size * dpr)
      gl.uniform1f(loc('alpha'), st.alpha)
      const cs = new Float32Array(48)
      st.colors.slice(0, 16).forEach((c, i) => cs.set(hexRgb(c), 3 * i))
      gl.uniform3fv(loc('colors[0]'), cs)
      const passes = st.selected.size ? [0, 1, 2] : [0]
      for (const p of passes) {
        gl.uniform1f(loc('pass'), p)
        gl.drawArrays(gl.POINTS, 0, st.n)
      }
    }
    out.setTransform(1, 0, 0, 1, 0, 0)
    out.clearRect(0, 0, w, h)
    out.drawImage(glCanvas, 0, 0)
    if (st.drawing?.lasso.length > 1) {
      out.setTransform(dpr, 0, 0, dpr, 0, 0)
      out.beginPath()
      st.drawing.lasso.forEach(([x, y], i) => (i ? out.lineTo(x, y) : out.moveTo(x, y)))
      out.strokeStyle = `rgba(${st.lasso.slice(0, 3).map((v) => Math.round(v * 255)).join(',')},${st.lasso[3]})`
      out.lineWidth = 2
      out.stroke()
    }
    const done = st.waiting
    st.waiting = []
    done?.forEach((f) => f())
  }
  const redraw = () => new Promise((resolve) => {
    ;(st.waiting ??= []).push(resolve)
    if (!st.frame) st.frame = requestAnimationFrame(render)
  })
  function attr(name, size) {
    const a = gl.getAttribLocation(prog, name)
    gl.bindBuffer(gl.ARRAY_BUFFER, bufs[name])
    gl.enableVertexAttribArray(a)
    gl.vertexAttribPointer(a, size, gl.FLOAT, false, 0, 0)
  }
  function upload(name, data) {
    gl.bindBuffer(gl.ARRAY_BUFFER, bufs[name])
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW)
  }
  function select(points) {
    st.selected = new Set(points)
    const s = new Float32Array(st.n)
    for (const i of st.selected) s[i] = 1
    upload('sel', s)
    redraw()
    if (st.selected.size) emit('select', { points: [...st.selected] })
    else emit('deselect')
  }

  // The point under (sx, sy): the nearest within its drawn radius.
  function pointAt(sx, sy) {
    const r = st.size / 2 + 2
    let best = -1
    let bd = r * r
    const kx = (st.zoom * st.width) / 2
    const ky = (st.zoom * st.height) / 2
    for (let i = 0; i < st.n; i++) {
      const dx = st.width / 2 + (st.x[i] - st.center[0]) * kx - sx
      const dy = st.height / 2 - (st.y[i] - st.center[1]) * ky - sy
      const d = dx * dx + dy * dy
      if (d <= bd) { bd = d; best = i }
    }
    return best
  }

  const local = (e) => { const r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top] }
  const onWheel = (e) => {
    e.preventDefault()
    const [sx, sy] = local(e)
    const d = toData(sx, sy)
    st.zoom = Math.min(1e4, Math.max(0.2, st.zoom * Math.exp(-e.deltaY / 300)))
    const m = [2 * sx / st.width - 1, 1 - 2 * sy / st.height]
    st.center = [d[0] - m[0] / st.zoom, d[1] - m[1] / st.zoom]
    redraw()
  }
  const onDown = (e) => {
    if (e.button !== 0) return
    canvas.setPointerCapture(e.pointerId)
    const at = local(e)
    st.drawing = { lasso: e.shiftKey ? [at] : [], pan: !e.shiftKey, from: at, last: at, moved: false }
  }
  const onMove = (e) => {
    const at = local(e)
    const d = st.drawing
    if (!d) {
      const i = pointAt(...at)
      if (i !== st.hover) {
        if (st.hover >= 0) emit('pointOut', st.hover)
        st.hover = i
        if (i >= 0) emit('pointOver', i)
      }
      return
    }
    if (Math.hypot(at[0] - d.from[0], at[1] - d.from[1]) > 3) d.moved = true
    if (d.pan) {
      st.center = [st.center[0] - (2 * (at[0] - d.last[0])) / st.width / st.zoom, st.center[1] + (2 * (at[1] - d.last[1])) / st.height / st.zoom]
      redraw()
    } else {
      const p = d.lasso[d.lasso.length - 1]
      if (Math.hypot(at[0] - p[0], at[1] - p[1]) >= 2) { d.lasso.push(at); redraw() }
    }
    d.last = at
  }
  const onUp = (e) => {
    const d = st.drawing
    if (!d) return
    st.drawing = null
    if (d.lasso.length > 2) return select(inside(d.lasso))
    if (!d.moved) {
      const i = pointAt(...local(e))
      select(i >= 0 ? [i] : [])
    }
    redraw()
  }
  // The points whose screen position is inside the lasso (even-odd rule).
  function inside(poly) {
    const hit = []
    for (let i = 0; i < st.n; i++) {
      const [x, y] = toScreen(i)
      let c = false
      for (let a = 0, b = poly.length - 1; a < poly.length; b = a++) {
        const [xa, ya] = poly[a]
        const [xb, yb] = poly[b]
        if ((ya > y) !== (yb > y) && x < ((xb - xa) * (y - ya)) / (yb - ya) + xa) c = !c
      }
      if (c) hit.push(i)
    }
    return hit
  }
  canvas.addEventListener('wheel', onWheel, { passive: false })
  canvas.addEventListener('pointerdown', onDown)
  canvas.addEventListener('pointermove', onMove)
  canvas.addEventListener('pointerup', onUp)
  canvas.style.touchAction = 'none'

  return {
    subscribe: (ev, f) => { (subs[ev] ??= []).push(f) },
    set(p) {
      if (p.width > 0) st.width = p.width
      if (p.height > 0) st.height = p.height
      if (p.pointSize) st.size = p.pointSize
      if (p.pointColor) st.colors = p.pointColor
      if (p.backgroundColor) st.bg = hexRgb(p.backgroundColor)
      return redraw()
    },
    draw(data) {
      st.n = data.x.length
      st.x = data.x
      st.y = data.y
      const pos = new Float32Array(2 * st.n)
      for (let i = 0; i < st.n; i++) { pos[2 * i] = data.x[i]; pos[2 * i + 1] = data.y[i] }
      upload('pos', pos)
      upload('cat', Float32Array.from(data.valueA ?? new Array(st.n).fill(0)))
      upload('sel', new Float32Array(st.n))
      st.selected = new Set()
      st.hover = -1
      return redraw()
    },
    getScreenPosition: (i) => (i >= 0 && i < st.n ? toScreen(i) : undefined),
    destroy() {
      st.destroyed = true
      cancelAnimationFrame(st.frame)
      canvas.removeEventListener('wheel', onWheel)
      canvas.removeEventListener('pointerdown', onDown)
      canvas.removeEventListener('pointermove', onMove)
      canvas.removeEventListener('pointerup', onUp)
      gl.getExtension('WEBGL_lose_context')?.loseContext()
    },
  }
}

function program(gl) {
  const shader = (type, src) => {
    const s = gl.createShader(type)
    gl.shaderSource(s, src)
    gl.compileShader(s)
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('map shader: ' + gl.getShaderInfoLog(s))
    return s
  }
  const p = gl.createProgram()
  gl.attachShader(p, shader(gl.VERTEX_SHADER, VS))
  gl.attachShader(p, shader(gl.FRAGMENT_SHADER, FS))
  gl.linkProgram(p)
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error('map program: ' + gl.getProgramInfoLog(p))
  return p
}
