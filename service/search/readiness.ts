import type { SearchClient } from './client.ts';

export const REQUIRED_PLUGINS = ['opensearch-knn', 'opensearch-neural-search'];

/** The first OpenSearch with the k-NN plugin's lateInteractionScore, which the k-NN side's sentence term calls. */
export const SENTENCE_TERM_MIN_VERSION: [number, number] = [3, 3];

/** Null when this OpenSearch version runs the sentence term (or it is off); otherwise what to do. */
export function sentenceTermProblem(version: string, sentenceWeight: number): string | null {
  if (sentenceWeight === 0) return null;
  const [major, minor] = version.split('.').map(Number);
  const [needMajor, needMinor] = SENTENCE_TERM_MIN_VERSION;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return `OpenSearch ${version} lacks lateInteractionScore (${needMajor}.${needMinor}+), which KBQA_SENTENCE_WEIGHT > 0 needs: upgrade, or set KBQA_SENTENCE_WEIGHT=0 (or KBQA_SENTENCE_VECTORS=off, which also stops embedding sentences)`;
}

/** Null when OpenSearch answers with both plugins loaded and runs the configured k-NN side; otherwise what is wrong. */
export async function searchEngineProblem(client: SearchClient, sentenceWeight: number): Promise<string | null> {
  try {
    const plugins = await client.request<Array<{ component: string; version?: string }>>('GET', '/_cat/plugins', { querystring: { format: 'json' } });
    const loaded = new Set(plugins.map((plugin) => plugin.component));
    const missing = REQUIRED_PLUGINS.filter((plugin) => !loaded.has(plugin));
    if (missing.length > 0) return `plugins missing: ${missing.join(', ')}`;
    // The k-NN plugin is versioned with OpenSearch (3.6.0.0 on 3.6.0): the listing above says both.
    const knn = plugins.find((plugin) => plugin.component === 'opensearch-knn');
    return sentenceTermProblem(knn?.version ?? '0.0', sentenceWeight);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function listPluginsAndModules(client: SearchClient): Promise<{ plugins: string[]; modules: string[] }> {
  const nodes = await client.request<{ nodes: Record<string, { plugins: Array<{ name: string }>; modules: Array<{ name: string }> }> }>(
    'GET',
    '/_nodes/plugins',
  );
  const node = Object.values(nodes.nodes)[0];
  return { plugins: node.plugins.map((plugin) => plugin.name), modules: node.modules.map((module) => module.name) };
}
