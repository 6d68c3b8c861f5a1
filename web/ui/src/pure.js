import { Component, h } from 'preact'

// pure wraps a function component so that it renders again only when one of
// its props changes (compared by identity), not whenever its parent renders:
// the grid renders for every answer that reaches it (a count, a page), and
// its cells and sidebar need not follow unless theirs changed.
export function pure(render) {
  return class extends Component {
    shouldComponentUpdate(next) {
      for (const k in next) if (next[k] !== this.props[k]) return true
      for (const k in this.props) if (!(k in next)) return true
      return false
    }

    render(props) {
      return h(render, props)
    }
  }
}
