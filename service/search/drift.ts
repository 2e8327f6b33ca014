// Drift: where the cluster no longer matches the asset files and the configuration. Start-up never fixes an index's
// analysis or mappings silently (that needs a new index and a reindex: `kbqa index migrate`); it reports drift.
import type { SearchClient } from './client.ts';
import { configuredChunking, describeChunking, indexDefinition, indexMeta, sameChunking } from './chunkIndices.ts';
import {
  chunkTemplateName,
  renderedTemplate,
  searchPipelineBodies,
  type SearchAssets,
  type SearchAssetSettings,
} from './assets.ts';

export interface Drift {
  /** The file (relative to the assets directory) or setting that differs from what the cluster runs. */
  asset: string;
  kind:
    | 'analysis'
    | 'mappings'
    | 'version'
    | 'embedder'
    | 'chunking'
    | 'index_template'
    | 'ingest_pipeline'
    | 'search_pipeline';
  detail: string;
}

/** The command that resolves index drift. */
export const MIGRATE_COMMAND = 'kbqa index migrate';

/** A JSON value as path → leaf text: settings come back from OpenSearch as strings, files say 1 or true. */
export function flatten(value: unknown, prefix = '', into = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(prefix, '[]');
    value.forEach((item, position) => flatten(item, `${prefix}[${position}]`, into));
  } else if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0 && prefix) into.set(prefix, '{}');
    for (const [key, item] of entries) flatten(item, prefix ? `${prefix}.${key}` : key, into);
  } else if (value !== undefined) {
    into.set(prefix, String(value));
  }
  return into;
}

/** Up to three differences between two flattened values, in words. */
export function differences(
  expected: Map<string, string>,
  actual: Map<string, string>,
  ignore: (path: string) => boolean = () => false,
): string[] {
  const found: string[] = [];
  for (const [path, value] of expected) {
    if (ignore(path)) continue;
    const other = actual.get(path);
    if (other === undefined) found.push(`${path}: missing in the cluster (file: ${value})`);
    else if (other !== value) found.push(`${path}: cluster ${other}, file ${value}`);
  }
  for (const [path, value] of actual)
    if (!ignore(path) && !expected.has(path)) found.push(`${path}: ${value} in the cluster, not in the file`);
  return found;
}

function summary(found: string[]): string {
  return found.length <= 3 ? found.join('; ') : `${found.slice(0, 3).join('; ')}; and ${found.length - 3} more`;
}

const DYNAMIC_METADATA = ['str', 'num', 'bool', 'date'].map(
  (type) => `properties.metadata.properties.${type}.properties.`,
);

/** Mapping paths start-up and migrations set per index: the embedder's dimension, and (template v1) metadata keys mapped as they come. */
function perIndexMappingPath(path: string): boolean {
  return (
    path === 'properties.embedding.dimension' ||
    path.startsWith('_meta') ||
    DYNAMIC_METADATA.some((prefix) => path.startsWith(prefix))
  );
}

/** `type: object` beside `properties` is implied: OpenSearch does not return it. */
function withoutImpliedObjectTypes(flat: Map<string, string>): Map<string, string> {
  for (const [path, value] of flat) if (value === 'object' && path.endsWith('.type')) flat.delete(path);
  return flat;
}

/** Settings keys as OpenSearch returns them: nested under `index`. */
function settingsPaths(settings: Record<string, unknown>): Map<string, string> {
  const flat = flatten(settings);
  return new Map([...flat].map(([path, value]) => [path.startsWith('index.') ? path : `index.${path}`, value]));
}

/** ` (N)`, or nothing while the embedder's dimensions are unknown (an OpenAI-compatible model that has not answered). */
function dimensionsOf(embedder: { dimensions: number }): string {
  try {
    return ` (${embedder.dimensions})`;
  } catch {
    return '';
  }
}

/**
 * The live index against the current template file and the configured embedder: its analysis, its mappings (less
 * the dimension and the metadata fields), its template version and its embedder.
 */
export async function indexDrift(
  client: SearchClient,
  assets: SearchAssets,
  index: string,
  embedder: { modelName: string; dimensions: number },
  chunking?: SearchAssetSettings['chunking'],
): Promise<Drift[]> {
  const [meta, definition] = await Promise.all([indexMeta(client, index), indexDefinition(client, index)]);
  if (!definition) return [];
  const drift: Drift[] = [];
  const file = assets.templateFile;
  if (meta && meta.template_version < assets.version) {
    drift.push({
      asset: file,
      kind: 'version',
      detail: `${index} is built from template v${meta.template_version}; the current template is v${assets.version}`,
    });
  }
  if (meta && meta.embedder.name !== embedder.modelName) {
    drift.push({
      asset: 'embedder (configuration)',
      kind: 'embedder',
      detail: `${index} holds ${meta.embedder.name} vectors (${meta.embedder.dimensions} dimensions); the configured embedder is ${embedder.modelName}${dimensionsOf(embedder)}`,
    });
  }
  const built = meta?.chunking;
  const configured = chunking ? configuredChunking(chunking) : null;
  if (built && configured && !sameChunking(built, configured)) {
    drift.push({
      asset: 'chunking (configuration)',
      kind: 'chunking',
      detail: `${index}'s chunks are ${describeChunking(built)}; configured: ${describeChunking(configured)}`,
    });
  }
  const analysis = differences(
    flatten(assets.template.template.settings.analysis ?? {}),
    flatten(definition.settings.analysis ?? {}),
  );
  if (analysis.length > 0)
    drift.push({
      asset: file,
      kind: 'analysis',
      detail: `${index}'s analysis differs from the file: ${summary(analysis.map((path) => `analysis.${path}`))}`,
    });
  const mappings = differences(
    withoutImpliedObjectTypes(flatten(assets.template.template.mappings)),
    withoutImpliedObjectTypes(flatten(definition.mappings)),
    perIndexMappingPath,
  );
  if (mappings.length > 0)
    drift.push({
      asset: file,
      kind: 'mappings',
      detail: `${index}'s mappings differ from the file: ${summary(mappings)}`,
    });
  return drift;
}

/** The cluster's index template, ingest pipelines and search pipelines against the files (and the configured fusion). */
export async function clusterAssetDrift(
  client: SearchClient,
  assets: SearchAssets,
  settings: SearchAssetSettings,
): Promise<Drift[]> {
  const drift: Drift[] = [];
  const templateName = chunkTemplateName(assets.version, settings.alias);
  const installed = await client.request<{
    index_templates?: Array<{
      index_template: Record<string, unknown> & {
        template?: { settings?: Record<string, unknown>; mappings?: unknown };
      };
    }>;
  }>('GET', `/_index_template/${templateName}`, { acceptStatuses: [404] });
  const cluster = installed?.index_templates?.[0]?.index_template;
  const rendered = renderedTemplate(assets, settings.alias);
  if (!cluster) {
    drift.push({
      asset: assets.templateFile,
      kind: 'index_template',
      detail: `the index template ${templateName} is not installed (start the API to install it)`,
    });
  } else {
    const found = [
      ...differences(settingsPaths(rendered.template.settings), settingsPaths(cluster.template?.settings ?? {})).map(
        (text) => `settings.${text}`,
      ),
      ...differences(
        withoutImpliedObjectTypes(flatten(rendered.template.mappings)),
        withoutImpliedObjectTypes(flatten(cluster.template?.mappings ?? {})),
      ).map((text) => `mappings.${text}`),
      ...differences(
        flatten({ index_patterns: rendered.index_patterns, priority: rendered.priority, version: rendered.version }),
        flatten({ index_patterns: cluster.index_patterns, priority: cluster.priority, version: cluster.version }),
      ),
    ];
    if (found.length > 0)
      drift.push({
        asset: assets.templateFile,
        kind: 'index_template',
        detail: `the installed template ${templateName} differs from the file: ${summary(found)}`,
      });
  }
  for (const pipeline of assets.ingestPipelines) {
    const body = await client.request<Record<string, unknown>>('GET', `/_ingest/pipeline/${pipeline.name}`, {
      acceptStatuses: [404],
    });
    const found =
      body?.[pipeline.name] === undefined
        ? ['not installed']
        : differences(flatten(pipeline.body), flatten(body[pipeline.name]));
    if (found.length > 0)
      drift.push({
        asset: pipeline.file,
        kind: 'ingest_pipeline',
        detail: `the ingest pipeline ${pipeline.name} differs from the file: ${summary(found)}`,
      });
  }
  for (const [name, expected] of Object.entries(searchPipelineBodies(settings))) {
    const body = await client.request<Record<string, unknown>>('GET', `/_search/pipeline/${name}`, {
      acceptStatuses: [404],
    });
    const found = body?.[name] === undefined ? ['not installed'] : differences(flatten(expected), flatten(body[name]));
    if (found.length > 0)
      drift.push({
        asset: assets.searchPipelineFile,
        kind: 'search_pipeline',
        detail: `the search pipeline ${name} differs from the file as configured: ${summary(found)}`,
      });
  }
  return drift;
}
