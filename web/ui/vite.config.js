import { defineConfig } from 'vite'

// Preact's JSX through esbuild alone: no framework plugin to pin.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false, target: 'es2022' },
})
