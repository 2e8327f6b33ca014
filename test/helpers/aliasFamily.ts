// Clean-up for test files that run on a chunk alias of their own (KBQA_CHUNKS_ALIAS=kbqa-chunks-<name>): start-up,
// migrations and rollbacks leave indices (kbqa-chunks-v<N>-<name>-<embedder>) and an index template per version
// (kbqa-chunks-v<N>-<name>) behind; this removes all of them, whatever the test got to.
import { CHUNKS_ALIAS } from '../../service/search/assets.ts';
import { familyIndices } from '../../service/search/chunkIndices.ts';
import { createSearchClient } from '../../service/search/client.ts';
import { chunkTemplateVersion } from '../../service/search/snapshots.ts';

const opensearchUrl = () => process.env.KBQA_OPENSEARCH_URL?.split(',')[0] ?? 'http://127.0.0.1:9200';

/**
 * Deletes every index of the alias's family (those whose _meta names it, and whatever it points to) and every
 * template of its versions. Never the default alias's: it is the stack's one shared chunk index.
 */
export async function dropAliasFamily(alias: string): Promise<{ indices: string[]; templates: string[] }> {
  if (alias === CHUNKS_ALIAS || !alias.startsWith(`${CHUNKS_ALIAS}-`))
    throw new Error(`dropAliasFamily: ${alias} is not a test's own alias`);
  const client = createSearchClient({ nodes: [opensearchUrl()], timeoutMs: 30_000 });
  try {
    const indices = (await familyIndices(client, alias)).map((entry) => entry.index);
    for (const index of indices) await client.request('DELETE', `/${index}`, { acceptStatuses: [404] });
    const found = await client.request<{ index_templates?: Array<{ name: string }> } & { status?: number }>(
      'GET',
      '/_index_template/kbqa-chunks-v*',
      {
        acceptStatuses: [404],
      },
    );
    const templates = (found.index_templates ?? [])
      .map((entry) => entry.name)
      .filter((name) => chunkTemplateVersion(name, alias) !== null);
    for (const name of templates) await client.request('DELETE', `/_index_template/${name}`, { acceptStatuses: [404] });
    return { indices, templates };
  } finally {
    await client.close();
  }
}
