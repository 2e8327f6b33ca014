// Preloaded with `node --import` (moduleTrace.ts does it): records the URL of every file module the process loads,
// through require or import, and writes them, one a line, to MODULE_TRACE_FILE when the process exits. It runs in
// the traced process only: a child process that process spawns is not traced.
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:')) loaded.add(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  const file = process.env.MODULE_TRACE_FILE;
  if (file) writeFileSync(file, [...loaded].join('\n'));
});
