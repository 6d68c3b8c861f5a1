// Boxes drawn over an image: the parent is exactly the image's size, so each
// box is placed in percentages of the stored pixel size (width x height).
export function Boxes({ boxes, width, height, minConfidence = 0 }) {
  if (!width || !height) return null
  return (
    <div class="boxes">
      {boxes
        .filter((b) => b.source !== 'machine' || (b.confidence ?? 1) >= minConfidence)
        .map((b, i) => (
          <div
            key={i}
            class={'box ' + b.source}
            data-testid="item-box"
            data-label={b.label}
            data-source={b.source}
            title={b.label + (b.confidence != null ? ` ${b.confidence.toFixed(2)}` : '')}
            style={{
              left: (100 * b.x) / width + '%',
              top: (100 * b.y) / height + '%',
              width: (100 * b.width) / width + '%',
              height: (100 * b.height) / height + '%',
            }}
          >
            <span class="box-label">{b.label}</span>
          </div>
        ))}
    </div>
  )
}
