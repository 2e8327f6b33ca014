import type { SearchClient } from './client.ts';

export const REQUIRED_PLUGINS = ['opensearch-knn', 'opensearch-neural-search'];

/** Null when OpenSearch answers with both plugins loaded; otherwise what is wrong. */
export async function searchEngineProblem(client: SearchClient): Promise<string | null> {
  try {
    const plugins = await client.request<Array<{ component: string }>>('GET', '/_cat/plugins', {
      querystring: { format: 'json' },
    });
    const loaded = new Set(plugins.map((plugin) => plugin.component));
    const missing = REQUIRED_PLUGINS.filter((plugin) => !loaded.has(plugin));
    return missing.length > 0 ? `plugins missing: ${missing.join(', ')}` : null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function listPluginsAndModules(client: SearchClient): Promise<{ plugins: string[]; modules: string[] }> {
  const nodes = await client.request<{
    nodes: Record<string, { plugins: Array<{ name: string }>; modules: Array<{ name: string }> }>;
  }>('GET', '/_nodes/plugins');
  const node = Object.values(nodes.nodes)[0];
  return { plugins: node.plugins.map((plugin) => plugin.name), modules: node.modules.map((module) => module.name) };
}
