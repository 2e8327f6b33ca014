// Runs each hostile case of hostile.mjs in its own process: heap capped (--max-old-space-size=512, as a reader
// child would be), 120 s timeout, peak RSS from /usr/bin/time -v, niced. Usage: node runHostile.mjs [case ...]
import { spawnSync } from 'node:child_process';
import { caseNames } from './hostile.mjs';

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : caseNames;
for (const name of wanted) {
  const r = spawnSync(
    '/usr/bin/time',
    [
      '-v',
      'nice',
      process.execPath,
      '--max-old-space-size=512',
      new URL('./hostile.mjs', import.meta.url).pathname,
      name,
    ],
    { encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' },
  );
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? '');
  const line = (r.stdout ?? '')
    .trim()
    .split('\n')
    .find((l) => l.startsWith('{'));
  const res = line
    ? JSON.parse(line)
    : {
        case: name,
        outcome: r.error ? 'timeout (120 s)' : `died (exit ${r.status}, ${r.signal ?? ''})`,
        tail: (r.stderr ?? '')
          .split('\n')
          .filter((l) => /rror|heap/i.test(l))
          .slice(0, 2)
          .join(' | '),
      };
  res.peakRssMiB = rss ? Math.round(Number(rss[1]) / 1024) : null;
  console.log(JSON.stringify(res));
}
