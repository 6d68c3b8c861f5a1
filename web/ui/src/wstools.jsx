// The workspace's shape tools, their keys and the views over the shapes
// (hide by type or label, opacity); the help overlay lists every key.

// TOOL_KEYS maps a key to the tool it picks.
export const TOOL_KEYS = { b: 'box', p: 'polygon', l: 'polyline', k: 'keypoints', m: 'brush', x: 'eraser', s: 'segment', w: 'wand', i: 'scissors' }
const TOOLS = Object.entries(TOOL_KEYS)

export const KEYS = [
  ['b p l k m x', 'tools: box, polygon, polyline, keypoints, mask brush, mask eraser'],
  ['s', 'segment: drag a box, get a mask from the model; click adds to it, Alt- or right-click takes away'],
  ['w', 'magic wand: click grows a mask by colour; Shift + click adds a region'],
  ['i', 'intelligent scissors: click anchors; the edge to the cursor follows the image; double-click or Enter closes'],
  ['Enter, Esc', 'an assist\'s draft (cyan): accept it as a shape, drop it'],
  ['o', 'the selected mask to a polygon (tolerance [ ]), or polygon to a mask'],
  ['t', 'track the selected polygon or mask to the next frame, as a draft there'],
  ['c', 'give the frame the selected label as its class'],
  ['click', 'polygon, polyline: place a point; on the selected shape: select or edit'],
  ['double-click, Enter', 'close the polygon, end the polyline or keypoints'],
  ['Shift + drag', 'polygon, polyline: place points freehand'],
  ['h', 'the next polygon is a hole of the selected polygon'],
  ['drag a vertex', 'move it (selected polygon or polyline); click an edge to insert one'],
  ['Alt + click', 'delete a vertex; a keypoint: visible ↔ not visible'],
  ['Shift + click', 'keypoints: place the next point as not visible'],
  ['n', 'keypoints: skip the next point (not labelled)'],
  ['Shift + drag a keypoint', 'move the whole skeleton'],
  ['[ ]', 'brush size; wand and outline tolerance'],
  ['1–9', 'label (relabels the selected shape)'],
  ['Del', 'delete the selected shape'],
  ['Esc', 'cancel the shape being drawn, else deselect'],
  ['Ctrl+Z, Ctrl+Shift+Z', 'undo, redo'],
  ['← → or a d', 'previous, next frame'],
  ['e', 'no objects on this frame'],
  ['wheel, + − 0', 'zoom (to 40x, pixels shown square from 2x), reset'],
  ['Space + drag, Alt + drag', 'pan'],
  ['?', 'this help'],
]

export function ShapeTools({ tool, setTool, brush, hole, setHole, draft, classify, label, skeleton }) {
  return (
    <div class="shape-tools" data-testid="shape-tools">
      <h3>Tools</h3>
      <div class="tool-row">
        {TOOLS.map(([k, t]) => (
          <button class={'ghost tool' + (t === tool ? ' on' : '')} data-testid="tool" data-tool={t} onClick={() => setTool(t)} title={t}>
            <kbd>{k}</kbd> {t}
          </button>
        ))}
        <button class="ghost tool" data-testid="tool-class" onClick={classify} disabled={!label}><kbd>c</kbd> class</button>
      </div>
      {tool === 'polygon' && (
        <label class="muted"><input type="checkbox" data-testid="tool-hole" checked={hole} onChange={(e) => setHole(e.currentTarget.checked)} /> hole of the selected polygon (h)</label>
      )}
      {(tool === 'brush' || tool === 'eraser') && <p class="muted" data-testid="brush-size" data-size={brush}>brush radius {brush} px ([ ])</p>}
      {tool === 'keypoints' && (
        <p class="muted" data-testid="keypoint-names">{skeleton ? `${label}: ${skeleton.keypoints.join(', ')}` : `${label ?? 'no label'} declares no points: points are named 1, 2, …`}</p>
      )}
      {draft && <p class="muted" data-testid="draft-state">{draft}</p>}
    </div>
  )
}

const TYPES = ['box', 'polygon', 'mask', 'keypoints', 'polyline', 'class']

// Visibility hides shapes by type and by label, and sets the fills' opacity.
export function Visibility({ boxes, hide, setHide, opacity, setOpacity }) {
  const types = TYPES.filter((t) => boxes.some((b) => (b.type || 'box') === t))
  const labels = [...new Set(boxes.map((b) => b.label))]
  const toggle = (what, v) => setHide((h) => ({ ...h, [what]: h[what].includes(v) ? h[what].filter((x) => x !== v) : [...h[what], v] }))
  if (!boxes.length) return null
  return (
    <div class="visibility" data-testid="visibility">
      <h3>Show</h3>
      <div class="tool-row">
        {types.map((t) => (
          <label class="chk"><input type="checkbox" data-testid="show-type" data-type={t} checked={!hide.types.includes(t)} onChange={() => toggle('types', t)} /> {t} ({boxes.filter((b) => (b.type || 'box') === t).length})</label>
        ))}
      </div>
      <div class="tool-row">
        {labels.map((l) => (
          <label class="chk"><input type="checkbox" data-testid="show-label" data-label={l} checked={!hide.labels.includes(l)} onChange={() => toggle('labels', l)} /> {l}</label>
        ))}
      </div>
      <label class="muted">opacity <input type="range" min="0" max="1" step="0.05" data-testid="opacity" value={opacity} onInput={(e) => setOpacity(+e.currentTarget.value)} /></label>
    </div>
  )
}

export function HelpOverlay({ onClose }) {
  return (
    <div class="help-overlay" data-testid="help" role="dialog" onClick={onClose}>
      <div class="help-card" onClick={(e) => e.stopPropagation()}>
        <h3>Keys</h3>
        <table>{KEYS.map(([k, what]) => <tr><td><kbd>{k}</kbd></td><td>{what}</td></tr>)}</table>
        <button class="ghost" onClick={onClose}>Close (Esc)</button>
      </div>
    </div>
  )
}
