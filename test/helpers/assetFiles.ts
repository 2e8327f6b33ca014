// A copy of the repository's asset files (index templates, ingest and search pipelines) in a temporary directory,
// for a test that starts on an older template version (KBQA_SEARCH_ASSETS_DIR) and adds the next one itself.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The copy's directory, without the index templates named in `withoutTemplates` (e.g. kbqa-chunks.v3.json). */
export function copyAssets(withoutTemplates: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'kbqa-assets-'));
  for (const folder of ['index-templates', 'ingest-pipelines', 'search-pipelines'])
    cpSync(join(repositoryRoot, folder), join(dir, folder), { recursive: true });
  for (const file of withoutTemplates) rmSync(join(dir, 'index-templates', file));
  return dir;
}
