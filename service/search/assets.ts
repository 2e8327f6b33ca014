// The versioned JSON assets (index-templates/, ingest-pipelines/, search-pipelines/) and the start-up bootstrap that
// applies them. Idempotent: run at every start-up, before the API listens.
//
// Versions: the current chunk template is the highest N of index-templates/kbqa-chunks.v<N>.json; its index for an
// embedder is kbqa-chunks-v<N>[-<name>]-<embedder>, behind the alias kbqa-chunks[-<name>]. Start-up never changes an
// existing index's analysis and never adds a second index to the alias: a new version, a changed analysis or another
// embedder is drift (reported by /readyz and `kbqa index status`), and `kbqa index migrate` builds the new index
// beside the live one and swaps the alias once (service/commands/indexMigration.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import { SearchAssetsError, SearchIndexReadOnlyError } from '../errors.ts';
import { OpenSearchRequestError, type SearchClient } from './client.ts';
import { aliasIndices, configuredChunking, ensureServiceFields, indexMeta, setIndexMeta, type ChunkIndexMeta } from './chunkIndices.ts';
import { clusterAssetDrift, indexDrift, MIGRATE_COMMAND, type Drift } from './drift.ts';
import { renderHybridPipeline, type FusionTechnique, type SearchPipelineBody } from './fusion.ts';

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CHUNKS_ALIAS = 'kbqa-chunks';
/** The first template's name (the default deployment's v1), which backups name. */
export const CHUNKS_TEMPLATE = 'kbqa-chunks-v1';
export const CHUNKS_INGEST_PIPELINE = 'kbqa-chunks-v1';
export const HYBRID_SEARCH_PIPELINE = 'kbqa-hybrid-rrf-v1';
/** Same fusion plus the per-side explanation, used only when a caller asks for chunk ranks (include_chunks). */
export const HYBRID_EXPLAIN_SEARCH_PIPELINE = 'kbqa-hybrid-rrf-v1-explain';
const SEARCH_PIPELINE_FILE = 'kbqa-hybrid-rrf.v1.json';

export interface SearchAssetSettings {
  /** The chunk index's alias: CHUNKS_ALIAS, or kbqa-chunks-<name> for a deployment of its own (KBQA_CHUNKS_ALIAS). */
  alias?: string;
  /** Where index-templates/, ingest-pipelines/ and search-pipelines/ are (KBQA_SEARCH_ASSETS_DIR); default the repository. */
  assetsDir?: string | null;
  embedderName: string;
  dimensions: number;
  shards: number;
  replicas: number;
  rrfRankConstant: number;
  rrfWeights: [number, number];
  /** How the named search pipelines fuse the two sides (KBQA_HYBRID_FUSION); default rrf. */
  hybridFusion?: FusionTechnique;
  /** How chunks are cut (recorded in a new index's _meta: a migration re-chunks when it differs). */
  chunking?: Config['chunking'];
}

/** kbqa-chunks-v<N>-<embedder>; behind the alias kbqa-chunks-<name>, kbqa-chunks-v<N>-<name>-<embedder>. */
export function chunkIndexName(embedderName: string, alias = CHUNKS_ALIAS, version = 1): string {
  return `${CHUNKS_ALIAS}-v${version}${alias.slice(CHUNKS_ALIAS.length)}-${embedderName.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`;
}

/**
 * The index template's name for a version: kbqa-chunks-v<N> for the default alias, kbqa-chunks-v<N>-<name> for
 * another (with its own index pattern and a higher priority), so a second deployment or a test never overwrites
 * the default deployment's template.
 */
export function chunkTemplateName(version: number, alias = CHUNKS_ALIAS): string {
  return `${CHUNKS_ALIAS}-v${version}${alias.slice(CHUNKS_ALIAS.length)}`;
}

export interface ChunkTemplate {
  index_patterns: string[];
  priority?: number;
  version?: number;
  _meta?: Record<string, unknown>;
  template: {
    settings: Record<string, unknown> & { analysis?: Record<string, unknown> };
    mappings: {
      properties: Record<string, Record<string, unknown>> & { embedding: { dimension: number } };
      dynamic_templates?: unknown[];
      dynamic?: unknown;
      _meta?: unknown;
    };
  };
}

/** The asset files in force: the newest chunk template version and the ingest pipelines its versions name. */
export interface SearchAssets {
  dir: string;
  version: number;
  /** index-templates/kbqa-chunks.v<N>.json, relative to dir. */
  templateFile: string;
  template: ChunkTemplate;
  /** Every ingest-pipelines/kbqa-chunks.v<M>.json: name kbqa-chunks-v<M>, file, body. */
  ingestPipelines: Array<{ name: string; file: string; body: Record<string, unknown> }>;
  searchPipelineFile: string;
}

const TEMPLATE_FILE = /^kbqa-chunks\.v(\d{1,6})\.json$/;

function readJson(dir: string, file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new SearchAssetsError(`${join(dir, file)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function versionedFiles(dir: string, folder: string): Array<{ version: number; file: string }> {
  let names: string[];
  try {
    names = readdirSync(join(dir, folder));
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, match: TEMPLATE_FILE.exec(name) }))
    .filter((entry) => entry.match !== null)
    .map((entry) => ({ version: Number(entry.match![1]), file: `${folder}/${entry.name}` }))
    .sort((a, b) => a.version - b.version);
}

/** Reads the asset files (every call: a search engineer edits them while the service runs; status reads them fresh). */
export function loadSearchAssets(assetsDir?: string | null): SearchAssets {
  const dir = assetsDir ?? repositoryRoot;
  const templates = versionedFiles(dir, 'index-templates');
  const newest = templates.at(-1);
  if (!newest) throw new SearchAssetsError(`no chunk index template in ${join(dir, 'index-templates')} (kbqa-chunks.v<N>.json)`);
  const template = readJson(dir, newest.file) as unknown as ChunkTemplate;
  if (!template.template?.mappings?.properties?.embedding) {
    throw new SearchAssetsError(`${newest.file}: template.mappings.properties.embedding is missing`);
  }
  const ingestPipelines = versionedFiles(dir, 'ingest-pipelines').map(({ version, file }) => ({
    name: `${CHUNKS_ALIAS}-v${version}`,
    file,
    body: readJson(dir, file),
  }));
  const pipeline = template.template.settings['index.default_pipeline'];
  if (typeof pipeline === 'string' && !ingestPipelines.some((entry) => entry.name === pipeline)) {
    throw new SearchAssetsError(`${newest.file} names the ingest pipeline ${pipeline}, but ingest-pipelines/ has no file for it (kbqa-chunks.v<M>.json)`);
  }
  return { dir, version: newest.version, templateFile: newest.file, template, ingestPipelines, searchPipelineFile: `search-pipelines/${SEARCH_PIPELINE_FILE}` };
}

/** The template as installed for an alias: its own name, pattern and (for a non-default alias) a higher priority. */
export function renderedTemplate(assets: SearchAssets, alias = CHUNKS_ALIAS): ChunkTemplate {
  const priority = (assets.template.priority ?? 100) + (alias === CHUNKS_ALIAS ? 0 : 1);
  return { ...assets.template, index_patterns: [`${chunkTemplateName(assets.version, alias)}-*`], priority };
}

/**
 * The search pipeline file with the configured fusion applied (fusion.ts renderHybridPipeline): RRF's rank constant
 * and side weights, or a min_max / l2 normalization-processor in its place.
 */
export function hybridPipelineBody(
  settings: Pick<SearchAssetSettings, 'rrfRankConstant' | 'rrfWeights' | 'hybridFusion'> & { assetsDir?: string | null },
  explain: boolean,
) {
  const file = readJson(settings.assetsDir ?? repositoryRoot, `search-pipelines/${SEARCH_PIPELINE_FILE}`) as SearchPipelineBody;
  return renderHybridPipeline({ fusion: settings.hybridFusion ?? 'rrf', rankConstant: settings.rrfRankConstant, weights: settings.rrfWeights }, explain, file);
}

/** The search pipelines as the config renders them: name → body. */
export function searchPipelineBodies(settings: SearchAssetSettings): Record<string, unknown> {
  return { [HYBRID_SEARCH_PIPELINE]: hybridPipelineBody(settings, false), [HYBRID_EXPLAIN_SEARCH_PIPELINE]: hybridPipelineBody(settings, true) };
}

const TOTAL_FIELDS_LIMIT = 'index.mapping.total_fields.limit';

/**
 * A new chunk index's body, from the template file: its settings and analysis, the configured shards (and the
 * given replicas), the embedding dimension of its embedder (the file's is a default), and _meta saying what built it.
 */
export function chunkIndexBody(
  assets: SearchAssets,
  settings: SearchAssetSettings,
  options: { embedder: { modelName: string; dimensions: number }; replicas: number; refreshInterval?: string; migration: ChunkIndexMeta['migration'] },
) {
  const { template } = assets.template;
  const meta: ChunkIndexMeta = {
    alias: settings.alias ?? CHUNKS_ALIAS,
    template_version: assets.version,
    embedder: { name: options.embedder.modelName, dimensions: options.embedder.dimensions },
    chunking: settings.chunking ? configuredChunking(settings.chunking) : null,
    created_at: new Date().toISOString(),
    migration: options.migration,
  };
  const properties = structuredClone(template.mappings.properties);
  properties.embedding = { ...properties.embedding, dimension: options.embedder.dimensions };
  return {
    settings: {
      ...template.settings,
      number_of_shards: settings.shards,
      number_of_replicas: options.replicas,
      ...(options.refreshInterval ? { 'index.refresh_interval': options.refreshInterval } : {}),
    },
    mappings: { ...template.mappings, properties, _meta: { kbqa: meta } },
  };
}

export interface AppliedAssets {
  /** The index the alias points to. */
  index: string;
  /** What differs from the files (nothing: []): reported by /readyz and `kbqa index status`, never fixed silently. */
  drift: Drift[];
}

/** PUTs the ingest pipelines and the current template as the files say; no index and no search pipeline is touched. */
export async function installIndexAssets(client: SearchClient, settings: SearchAssetSettings, assets = loadSearchAssets(settings.assetsDir)): Promise<void> {
  // Every write here sets a named thing to a given state: safe to send again to another node (client.ts).
  const idempotent = true;
  const alias = settings.alias ?? CHUNKS_ALIAS;
  // Versioned and never edited once released: every version's pipeline is sent (an older live index names its own).
  for (const pipeline of assets.ingestPipelines) {
    await client.request('PUT', `/_ingest/pipeline/${pipeline.name}`, { body: pipeline.body, idempotent });
  }
  await client.request('PUT', `/_index_template/${chunkTemplateName(assets.version, alias)}`, { body: renderedTemplate(assets, alias), idempotent });
}

/**
 * Start-up's install: the index assets, and the search pipelines as this API's configuration (its fusion) renders
 * them. Only start-up sends these: the pipelines fuse the running API's queries.
 */
export async function installSearchAssets(client: SearchClient, settings: SearchAssetSettings, assets = loadSearchAssets(settings.assetsDir)): Promise<void> {
  const idempotent = true;
  await installIndexAssets(client, settings, assets);
  for (const [name, body] of Object.entries(searchPipelineBodies(settings))) {
    await client.request('PUT', `/_search/pipeline/${name}`, { body, idempotent });
  }
}

export async function applySearchAssets(client: SearchClient, settings: SearchAssetSettings): Promise<AppliedAssets> {
  const idempotent = true;
  const assets = loadSearchAssets(settings.assetsDir);
  const alias = settings.alias ?? CHUNKS_ALIAS;
  await installSearchAssets(client, settings, assets);

  // The dimensions are read only where an index is created or compared with the configured embedder: an
  // OpenAI-compatible model's are unknown until it has answered, and start-up must not wait for it.
  const embedder = {
    modelName: settings.embedderName,
    get dimensions() {
      return settings.dimensions;
    },
  };
  const live = await aliasIndices(client, alias);
  let index: string;
  const drift: Drift[] = [];
  if (live.length === 0) {
    // A fresh cluster (or alias): the current version's index for the configured embedder, behind the alias.
    index = chunkIndexName(settings.embedderName, alias, assets.version);
    const existing = await indexMeta(client, index);
    if (existing === undefined) {
      // 400 resource_already_exists_exception when two instances start at once: the other one created it.
      await client.request('PUT', `/${index}`, {
        acceptStatuses: [400],
        body: chunkIndexBody(assets, settings, { embedder, replicas: settings.replicas, migration: { state: 'live', source: null } }),
        idempotent,
      });
    }
    await client.request('POST', '/_aliases', { body: { actions: [{ add: { index, alias, is_write_index: true } }] }, idempotent });
  } else {
    // The alias exists: it keeps serving what it points to (a migration moves it, never start-up).
    index = live.find((entry) => entry.isWriteIndex)?.index ?? live[0].index;
    let meta = await indexMeta(client, index);
    if (!meta) {
      // An index made before indices carried _meta: its name says its version and its embedder, its mapping the
      // vectors' length; the chunking is the one configured now (the best knowledge there is). Recorded only when
      // both are known: a wrong embedder there would embed questions with the wrong model.
      meta = await legacyIndexMeta(client, index, alias, settings);
      if (meta) await setIndexMeta(client, index, meta);
      else drift.push({ asset: 'embedder (configuration)', kind: 'embedder', detail: `${index} records no embedder and its name does not say one: migrate it (${MIGRATE_COMMAND})` });
    }
    if (meta && meta.template_version === assets.version) {
      // Additive mapping changes of the same template version (a new field) reach the live index in place; a
      // change that conflicts is drift, reported, not a failed start-up. Dynamic templates (template v1's: how its
      // metadata.<type>.<key> fields are mapped) go with them: the list sent replaces the index's.
      const { properties, dynamic_templates: dynamicTemplates } = assets.template.template.mappings;
      const sent = structuredClone(properties);
      sent.embedding = { ...sent.embedding, dimension: meta.embedder.dimensions || sent.embedding.dimension };
      try {
        await client.request('PUT', `/${index}/_mapping`, { body: { properties: sent, ...(dynamicTemplates ? { dynamic_templates: dynamicTemplates } : {}) }, idempotent });
      } catch (error) {
        if (!(error instanceof OpenSearchRequestError || error instanceof SearchIndexReadOnlyError)) throw error;
        drift.push({ asset: assets.templateFile, kind: 'mappings', detail: `the mapping change does not apply in place (${error instanceof OpenSearchRequestError ? (error.reason ?? error.type ?? error.message) : error.message})` });
      }
      // Template v1: every distinct metadata key adds a field (two for a date): an index created before metadata
      // has the default limit of 1000 fields; the template's (a dynamic setting) reaches it in place. Raised only,
      // never lowered: an operator may have raised it further.
      const fieldLimit = Number(assets.template.template.settings[TOTAL_FIELDS_LIMIT]);
      if (Number.isFinite(fieldLimit) && (await totalFieldsLimit(client, index)) < fieldLimit) {
        await client.request('PUT', `/${index}/_settings`, { body: { [TOTAL_FIELDS_LIMIT]: fieldLimit }, idempotent });
      }
    }
  }
  // Whatever its template version: this service writes them into every chunk. Refused (a write block, a role
  // without mapping rights, a field of that name with another type): reported, not a failed start-up; queries are
  // served meanwhile, the k-NN side without the sentence term (retrieval.ts SENTENCE_SCORE).
  try {
    await ensureServiceFields(client, index);
  } catch (error) {
    if (!(error instanceof OpenSearchRequestError || error instanceof SearchIndexReadOnlyError)) throw error;
    drift.push({ asset: 'sentence_embeddings (service field)', kind: 'mappings', detail: `${index} refused the field's mapping (${error.message}): ingestion into it fails (or, over a field of another type, stores no usable sentence vectors) until it has it` });
  }
  const found = [...(await indexDrift(client, assets, index, embedder, settings.chunking)), ...(await clusterAssetDrift(client, assets, settings))];
  for (const entry of found) if (!drift.some((known) => known.asset === entry.asset && known.kind === entry.kind)) drift.push(entry);
  return { index, drift };
}

/**
 * What built an index older than _meta, from what it shows: its template version and embedder from its name
 * (kbqa-chunks-v<N>[-<name>]-<embedder>, the embedder's name as chunkIndexName writes it), its vectors' length from
 * its mapping. Null when either is not there to read.
 */
async function legacyIndexMeta(client: SearchClient, index: string, alias: string, settings: SearchAssetSettings): Promise<ChunkIndexMeta | null> {
  const version = Number(/^kbqa-chunks-v(\d{1,6})/.exec(index)?.[1] ?? Number.NaN);
  if (!Number.isInteger(version)) return null;
  const prefix = `${chunkTemplateName(version, alias)}-`;
  if (!index.startsWith(prefix) || index.length === prefix.length) return null;
  const written = index.slice(prefix.length);
  // The configured embedder when the name is its; else the name as written (bge-small-en-v1.5 is written as itself).
  const name = chunkIndexName(settings.embedderName, alias, version) === index ? settings.embedderName : written;
  const mapping = await client.request<Record<string, { mappings?: { properties?: { embedding?: { dimension?: number } } } }>>('GET', `/${index}/_mapping`);
  const dimensions = mapping[index]?.mappings?.properties?.embedding?.dimension;
  if (typeof dimensions !== 'number' || dimensions <= 0) return null;
  return {
    alias,
    template_version: version,
    embedder: { name, dimensions },
    // Older than _meta, so older than sentence vectors too.
    chunking: settings.chunking ? { ...configuredChunking(settings.chunking), sentence_vectors: 0 } : null,
    created_at: null,
    migration: { state: 'live', source: null },
  };
}

/** The index's field limit, set or default. */
async function totalFieldsLimit(client: SearchClient, index: string): Promise<number> {
  const response = await client.request<Record<string, { settings?: Record<string, string>; defaults?: Record<string, string> }>>(
    'GET',
    `/${index}/_settings/${TOTAL_FIELDS_LIMIT}`,
    { querystring: { flat_settings: true, include_defaults: true } },
  );
  const found = response[index];
  return Number(found?.settings?.[TOTAL_FIELDS_LIMIT] ?? found?.defaults?.[TOTAL_FIELDS_LIMIT] ?? 1000);
}
