// The start-up bootstrap that applies the versioned assets (assets.ts) to the cluster, and reports what differs
// (drift.ts). Idempotent: run at every start-up, before the API listens.
import { OpenSearchRequestError, SearchIndexReadOnlyError } from '../errors.ts';
import type { SearchClient } from './client.ts';
import {
  aliasIndices,
  configuredChunking,
  ensureServiceFields,
  indexMeta,
  setIndexMeta,
  type AliasedIndex,
  type ChunkIndexMeta,
} from './chunkIndices.ts';
import { clusterAssetDrift, indexDrift, MIGRATE_COMMAND, type Drift } from './drift.ts';
import {
  CHUNKS_ALIAS,
  CHUNKS_INGEST_PIPELINE,
  chunkIndexBody,
  chunkIndexName,
  chunkTemplateName,
  loadSearchAssets,
  renderedTemplate,
  searchPipelineBodies,
  TOTAL_FIELDS_LIMIT,
  type SearchAssets,
  type SearchAssetSettings,
} from './assets.ts';

// Every write here sets a named thing to a given state: safe to send again to another node (client.ts).
const idempotent = true;

export interface AppliedAssets {
  /** The index the alias points to. */
  index: string;
  /** What differs from the files (nothing: []): reported by /readyz and `kbqa index status`, never fixed silently. */
  drift: Drift[];
}

/** PUTs the ingest pipelines and the current template as the files say; no index and no search pipeline is touched. */
export async function installIndexAssets(
  client: SearchClient,
  settings: SearchAssetSettings,
  assets = loadSearchAssets(settings.assetsDir),
): Promise<void> {
  const alias = settings.alias ?? CHUNKS_ALIAS;
  // Versioned and never edited once released: every version's pipeline is sent (an older live index names its own).
  for (const pipeline of assets.ingestPipelines) {
    await client.request('PUT', `/_ingest/pipeline/${pipeline.name}`, { body: pipeline.body, idempotent });
  }
  await client.request('PUT', `/_index_template/${chunkTemplateName(assets.version, alias)}`, {
    body: renderedTemplate(assets, alias),
    idempotent,
  });
}

/**
 * Start-up's install: the index assets, and the search pipelines as this API's configuration (its fusion) renders
 * them. Only start-up sends these: the pipelines fuse the running API's queries.
 */
export async function installSearchAssets(
  client: SearchClient,
  settings: SearchAssetSettings,
  assets = loadSearchAssets(settings.assetsDir),
): Promise<void> {
  await installIndexAssets(client, settings, assets);
  for (const [name, body] of Object.entries(searchPipelineBodies(settings))) {
    await client.request('PUT', `/_search/pipeline/${name}`, { body, idempotent });
  }
}

/**
 * Start-up: installs the assets, puts the alias on an index (a new one on a fresh cluster, else the one it serves),
 * brings that index's mapping up to its template version's where it can, and returns what still differs.
 */
export async function applySearchAssets(client: SearchClient, settings: SearchAssetSettings): Promise<AppliedAssets> {
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
  const drift: Drift[] = [];
  const index =
    live.length === 0
      ? await createAliasedIndex(client, settings, assets, embedder)
      : await updateLiveIndex(client, settings, assets, live, drift);
  // Whatever its template version: this service writes them into every chunk. Refused (a write block, a role
  // without mapping rights, a field of that name with another type): reported, not a failed start-up; queries are
  // served meanwhile, the k-NN side without the sentence term (sentenceVectors.ts SENTENCE_SCORE).
  try {
    await ensureServiceFields(client, index);
  } catch (error) {
    if (!(error instanceof OpenSearchRequestError || error instanceof SearchIndexReadOnlyError)) throw error;
    drift.push({
      asset: 'sentence_embeddings (service field)',
      kind: 'mappings',
      detail: `${index} refused the field's mapping (${error.message}): ingestion into it fails (or, over a field of another type, stores no usable sentence vectors) until it has it`,
    });
  }
  const found = [
    ...(await indexDrift(client, assets, index, embedder, settings.chunking)),
    ...(await clusterAssetDrift(client, assets, settings)),
  ];
  for (const entry of found)
    if (!drift.some((known) => known.asset === entry.asset && known.kind === entry.kind)) drift.push(entry);
  return { index, drift };
}

/** A fresh cluster (or alias): the current version's index for the configured embedder, behind the alias. */
async function createAliasedIndex(
  client: SearchClient,
  settings: SearchAssetSettings,
  assets: SearchAssets,
  embedder: { modelName: string; dimensions: number },
): Promise<string> {
  const alias = settings.alias ?? CHUNKS_ALIAS;
  const index = chunkIndexName(settings.embedderName, alias, assets.version);
  const existing = await indexMeta(client, index);
  if (existing === undefined) {
    // 400 resource_already_exists_exception when two instances start at once: the other one created it.
    await client.request('PUT', `/${index}`, {
      acceptStatuses: [400],
      body: chunkIndexBody(assets, settings, {
        embedder,
        replicas: settings.replicas,
        migration: { state: 'live', source: null },
      }),
      idempotent,
    });
  }
  await client.request('POST', '/_aliases', {
    body: { actions: [{ add: { index, alias, is_write_index: true } }] },
    idempotent,
  });
  return index;
}

/**
 * The alias exists: it keeps serving what it points to (a migration moves it, never start-up). That index gets
 * _meta if it predates it, and its template version's additive mapping changes; what cannot is pushed to `drift`.
 */
async function updateLiveIndex(
  client: SearchClient,
  settings: SearchAssetSettings,
  assets: SearchAssets,
  live: AliasedIndex[],
  drift: Drift[],
): Promise<string> {
  const alias = settings.alias ?? CHUNKS_ALIAS;
  const index = live.find((entry) => entry.isWriteIndex)?.index ?? live[0].index;
  let meta = await indexMeta(client, index);
  if (!meta) {
    // An index made before indices carried _meta: its name says its version and its embedder, its mapping the
    // vectors' length; the chunking is the one configured now (the best knowledge there is). Recorded only when
    // both are known: a wrong embedder there would embed questions with the wrong model.
    meta = await legacyIndexMeta(client, index, alias, settings);
    if (meta) await setIndexMeta(client, index, meta);
    else
      drift.push({
        asset: 'embedder (configuration)',
        kind: 'embedder',
        detail: `${index} records no embedder and its name does not say one: migrate it (${MIGRATE_COMMAND})`,
      });
  }
  if (meta && meta.template_version === assets.version) await updateMappingInPlace(client, assets, index, meta, drift);
  return index;
}

/**
 * Additive mapping changes of the same template version (a new field) reach the live index in place; a change that
 * conflicts is drift, reported, not a failed start-up. Dynamic templates (template v1's: how its
 * metadata.<type>.<key> fields are mapped) go with them: the list sent replaces the index's.
 */
async function updateMappingInPlace(
  client: SearchClient,
  assets: SearchAssets,
  index: string,
  meta: ChunkIndexMeta,
  drift: Drift[],
): Promise<void> {
  const { properties, dynamic_templates: dynamicTemplates } = assets.template.template.mappings;
  const sent = structuredClone(properties);
  sent.embedding = { ...sent.embedding, dimension: meta.embedder.dimensions || sent.embedding.dimension };
  try {
    await client.request('PUT', `/${index}/_mapping`, {
      body: { properties: sent, ...(dynamicTemplates ? { dynamic_templates: dynamicTemplates } : {}) },
      idempotent,
    });
  } catch (error) {
    if (!(error instanceof OpenSearchRequestError || error instanceof SearchIndexReadOnlyError)) throw error;
    drift.push({
      asset: assets.templateFile,
      kind: 'mappings',
      detail: `the mapping change does not apply in place (${error instanceof OpenSearchRequestError ? (error.reason ?? error.type ?? error.message) : error.message})`,
    });
  }
  // Template v1: every distinct metadata key adds a field (two for a date): an index created before metadata
  // has the default limit of 1000 fields; the template's (a dynamic setting) reaches it in place. Raised only,
  // never lowered: an operator may have raised it further.
  const fieldLimit = Number(assets.template.template.settings[TOTAL_FIELDS_LIMIT]);
  if (Number.isFinite(fieldLimit) && (await totalFieldsLimit(client, index)) < fieldLimit) {
    await client.request('PUT', `/${index}/_settings`, { body: { [TOTAL_FIELDS_LIMIT]: fieldLimit }, idempotent });
  }
}

/**
 * What built an index older than _meta, from what it shows: its template version and embedder from its name
 * (kbqa-chunks-v<N>[-<name>]-<embedder>, the embedder's name as chunkIndexName writes it), its vectors' length from
 * its mapping. Null when either is not there to read.
 */
async function legacyIndexMeta(
  client: SearchClient,
  index: string,
  alias: string,
  settings: SearchAssetSettings,
): Promise<ChunkIndexMeta | null> {
  const version = Number(/^kbqa-chunks-v(\d{1,6})/.exec(index)?.[1] ?? Number.NaN);
  if (!Number.isInteger(version)) return null;
  const prefix = `${chunkTemplateName(version, alias)}-`;
  if (!index.startsWith(prefix) || index.length === prefix.length) return null;
  const written = index.slice(prefix.length);
  // The configured embedder when the name is its; else the name as written (bge-small-en-v1.5 is written as itself).
  const name = chunkIndexName(settings.embedderName, alias, version) === index ? settings.embedderName : written;
  const mapping = await client.request<
    Record<string, { mappings?: { properties?: { embedding?: { dimension?: number } } } }>
  >('GET', `/${index}/_mapping`);
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
  const response = await client.request<
    Record<string, { settings?: Record<string, string>; defaults?: Record<string, string> }>
  >('GET', `/${index}/_settings/${TOTAL_FIELDS_LIMIT}`, {
    querystring: { flat_settings: true, include_defaults: true },
  });
  const found = response[index];
  return Number(found?.settings?.[TOTAL_FIELDS_LIMIT] ?? found?.defaults?.[TOTAL_FIELDS_LIMIT] ?? 1000);
}
