// ESLint for the web app's source (web/ui/src), run by `make lint` (part of
// `make test`) as: cd web/ui && lint/node_modules/.bin/eslint -c lint/eslint.config.js src
// The packages live in web/ui/lint so that they are not part of the UI
// build's source stamp (web/ui/stamp.mjs hashes web/ui/package*.json).
import js from '@eslint/js'
import globals from 'globals'

// JSX's automatic runtime needs no import, but ESLint's core rules do not
// see <Grid/> as a use of Grid: this rule marks the names JSX uses, as
// eslint-plugin-react's jsx-uses-vars does, without that plugin's tree.
const jsxUses = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const mark = (node) => {
      let n = node.name
      while (n && n.type === 'JSXMemberExpression') n = n.object
      if (n && n.type === 'JSXIdentifier' && /^[A-Z]/.test(n.name)) context.sourceCode.markVariableAsUsed(n.name, node)
    }
    return { JSXOpeningElement: mark }
  },
}

export default [
  js.configs.recommended,
  {
    files: ['src/**/*.{js,jsx}'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      parserOptions: { ecmaFeatures: { jsx: true } },
      globals: { ...globals.browser },
    },
    plugins: { local: { rules: { 'jsx-uses': jsxUses } } },
    rules: {
      'local/jsx-uses': 'error',
      // Key handlers are chains of `else if (key && action()) {}` whose
      // empty block means "handled": empty blocks are written on purpose.
      'no-empty': 'off',
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }],
    },
  },
]
