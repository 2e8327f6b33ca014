// Builds the web app (web/ → web/dist) when its build is missing or was made from other sources: `npm start` and
// `npm test` call it before anything starts, `npm run build:web` alone. "Other sources" is a SHA-256 over every input
// of the build (sorted paths and contents), stored beside the build in web/dist/.build-hash, so a warm start costs
// a hash of a few hundred KB and no Vite run.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** What a build is made from, relative to the repository root: files, or directories taken whole. */
export const WEB_BUILD_INPUTS = [
  'web/index.html',
  'web/vite.config.ts',
  'web/tsconfig.json',
  'web/src',
  'web/public',
  'package-lock.json',
];
/** Where the build goes: always the repository's own web/dist, which the API serves unless KBQA_WEB_DIST says otherwise. */
export const WEB_DIST = join('web', 'dist');
export const BUILD_HASH_FILE = '.build-hash';

export class WebBuildError extends Error {}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((entry) => filesUnder(join(path, entry)));
}

/** SHA-256 over the build's inputs: each file's path (POSIX, from the root) and contents, in path order. */
export function webSourceHash(root: string): string {
  const files = WEB_BUILD_INPUTS.flatMap((input) => filesUnder(join(root, input)))
    .map((file) => relative(root, file).split(sep).join('/'))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    const contents = readFileSync(join(root, file));
    // Path and length delimit each file, so moving bytes between a file's name and its contents changes the hash.
    hash.update(`${file}\0${contents.length}\0`);
    hash.update(contents);
  }
  return hash.digest('hex');
}

export type WebBuildOutcome = 'built' | 'up-to-date' | 'no-sources';

/**
 * Runs `vite build` into root/web/dist when root/web/dist/index.html is missing or .build-hash differs from the
 * sources' hash (or when forced), then records the hash. A failed build leaves no hash, so the next run builds again.
 */
export function buildWebIfStale(
  root: string,
  options: { force?: boolean; log?: (line: string) => void } = {},
): WebBuildOutcome {
  const log = options.log ?? ((line: string) => console.log(`[kbqa] ${line}`));
  const config = join(root, 'web', 'vite.config.ts');
  if (!existsSync(join(root, 'web', 'index.html')) || !existsSync(config)) {
    log('no web app sources (web/index.html, web/vite.config.ts): web app not built; pages answer 503');
    return 'no-sources';
  }
  const dist = resolve(root, WEB_DIST);
  const hashFile = join(dist, BUILD_HASH_FILE);
  const sourceHash = webSourceHash(root);
  const builtHash = existsSync(hashFile) ? readFileSync(hashFile, 'utf8').trim() : null;
  if (!options.force && builtHash === sourceHash && existsSync(join(dist, 'index.html'))) {
    log('web app up to date');
    return 'up-to-date';
  }
  const why = options.force
    ? 'rebuilding the web app (--force)'
    : builtHash === null
      ? 'building the web app'
      : 'web app sources changed: building it';
  log(`${why} (vite)…`);
  const began = Date.now();
  // The output directory is named here, not left to the Vite config, so the build lands where this check looks.
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      config,
      '--outDir',
      dist,
      '--emptyOutDir',
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } },
  );
  if (result.error) throw new WebBuildError(`could not run vite: ${result.error.message}`);
  if (result.status !== 0) {
    throw new WebBuildError(
      `web app build failed (vite exited ${result.status ?? result.signal}); see its output above`,
    );
  }
  if (!existsSync(join(dist, 'index.html')))
    throw new WebBuildError(`vite reported success but ${join(dist, 'index.html')} is missing`);
  writeFileSync(hashFile, `${sourceHash}\n`);
  log(`web app built in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  return 'built';
}
