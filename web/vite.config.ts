// The web app's build and dev server. Build: `node node_modules/vite/bin/vite.js build --config web/vite.config.ts`
// (writes web/dist, which the API serves). Dev: `npm run dev:web`, with the API running separately (`npm start`).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));
// Where the dev server forwards API calls; the API's own default port unless KBQA_API_URL says otherwise.
const apiTarget = process.env.KBQA_API_URL ?? 'http://127.0.0.1:8080';
// changeOrigin stays false: the API sees the dev server's Host, the same origin the browser sends cookies for.
const proxied = { target: apiTarget, changeOrigin: false };

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // The server's CSP is `script-src 'self'; style-src 'self'`: no inline script (the preload polyfill is one)
    // and no asset inlined as a data: URL.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    target: 'es2022',
  },
  server: {
    proxy: {
      '/api': proxied,
      '/healthz': proxied,
      '/readyz': proxied,
    },
  },
  preview: {
    proxy: {
      '/api': proxied,
      '/healthz': proxied,
      '/readyz': proxied,
    },
  },
});
