import { placeLabels } from './labels.js'
import { ShapeLayer, colorOf, isBox, skeletonsOf } from './shapes.jsx'

// boxText is a box's label as drawn: its label, and a machine box's confidence.
// A shape without geometry (a grid tile's mask past the list's cap) is
// drawn as its box.
const hasGeometry = (b) => !!(b.polygon || b.mask || b.keypoints || b.points)

export const boxText = (b) => b.label + (b.confidence != null ? ` ${b.confidence.toFixed(2)}` : '')

// Boxes drawn over an image: the parent is exactly the image's size, so each
// box is placed in percentages of the stored pixel size (width x height).
// Shapes other than boxes are drawn on a canvas (shapes.jsx) and keep an
// unbordered box for their label, in the shape's colour, and hover; a class, a label on the whole
// frame, is a chip at the frame's top instead of a frame-sized box.
// With fit (the image's drawn size, labels.js) every label is shown where it
// overlaps no other (the rest on hover); without, labels show on hover only
// (the grid's small cells). skeletons (label → edges, as the answers carry
// them) join a keypoints shape's points.
export function Boxes({ boxes, width, height, minConfidence = 0, fit, skeletons }) {
  if (!width || !height) return null
  const kept = boxes.filter((b) => b.source !== 'machine' || (b.confidence ?? 1) >= minConfidence)
  const classes = kept.filter((b) => b.type === 'class')
  let shown = kept.filter((b) => b.type !== 'class')
  // Larger boxes first, so a small box drawn inside a large one is on top and can be hovered.
  if (fit) shown = [...shown].sort((a, b) => b.width * b.height - a.width * a.height)
  const where = fit ? placeLabels(shown, shown.map(boxText), width, height, fit, (i) => (shown[i].source === 'human' ? 0 : 1)) : null
  return (
    <div class={'boxes' + (fit ? ' labelled' : '')}>
      <ShapeLayer shapes={shown} width={width} height={height} skeletonOf={skeletonsOf(skeletons)} />
      {classes.length > 0 && (
        <div class="classes" data-testid="item-classes">
          {classes.map((b) => <span class={'class-chip ' + b.source} title={boxText(b)}>{boxText(b)}</span>)}
        </div>
      )}
      {shown.map((b, i) => (
          <div
            key={i}
            class={'box ' + b.source + (isBox(b) || !hasGeometry(b) ? '' : ' shape')}
            data-testid="item-box"
            data-type={b.type ?? 'box'}
            data-label={b.label}
            data-source={b.source}
            title={boxText(b)}
            style={{
              left: (100 * b.x) / width + '%',
              top: (100 * b.y) / height + '%',
              width: (100 * b.width) / width + '%',
              height: (100 * b.height) / height + '%',
            }}
          >
            <span class={'box-label' + (where ? ' at-' + where[i] : '')} data-testid="box-label" data-place={where?.[i]}
              style={isBox(b) || !hasGeometry(b) ? undefined : { background: colorOf(b) }}>{fit ? boxText(b) : b.label}</span>
          </div>
        ))}
    </div>
  )
}
