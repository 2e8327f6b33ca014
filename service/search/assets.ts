// Applies the versioned JSON assets (index-templates/, ingest-pipelines/, search-pipelines/) and makes sure the
// chunk index and its alias exist. Idempotent: run at every start-up, before the API listens.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SearchClient } from './client.ts';

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CHUNKS_ALIAS = 'kbqa-chunks';
export const CHUNKS_TEMPLATE = 'kbqa-chunks-v1';
export const CHUNKS_INGEST_PIPELINE = 'kbqa-chunks-v1';
export const HYBRID_SEARCH_PIPELINE = 'kbqa-hybrid-rrf-v1';
/** Same fusion plus the per-side explanation, used only when a caller asks for chunk ranks (include_chunks). */
export const HYBRID_EXPLAIN_SEARCH_PIPELINE = 'kbqa-hybrid-rrf-v1-explain';

export interface SearchAssetSettings {
  /** The chunk index's alias: CHUNKS_ALIAS, or kbqa-chunks-<name> for a deployment of its own (KBQA_CHUNKS_ALIAS). */
  alias?: string;
  embedderName: string;
  dimensions: number;
  shards: number;
  replicas: number;
  rrfRankConstant: number;
  rrfWeights: [number, number];
}

/** kbqa-chunks-v1-<embedder>; behind the alias kbqa-chunks-<name>, kbqa-chunks-v1-<name>-<embedder> (the template's pattern). */
export function chunkIndexName(embedderName: string, alias = CHUNKS_ALIAS): string {
  return `${CHUNKS_TEMPLATE}${alias.slice(CHUNKS_ALIAS.length)}-${embedderName.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`;
}

function readAsset(folder: string, file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(repositoryRoot, folder, file), 'utf8')) as Record<string, unknown>;
}

interface RrfProcessor {
  'score-ranker-processor': {
    combination: { technique: string; rank_constant: number; parameters?: { weights?: number[] } };
  };
}

/** The search pipeline file with the configured rank constant and side weights applied. */
export function hybridPipelineBody(settings: Pick<SearchAssetSettings, 'rrfRankConstant' | 'rrfWeights'>, explain: boolean) {
  const pipeline = readAsset('search-pipelines', 'kbqa-hybrid-rrf.v1.json') as {
    phase_results_processors: RrfProcessor[];
    response_processors?: unknown[];
  };
  for (const processor of pipeline.phase_results_processors) {
    const combination = processor['score-ranker-processor']?.combination;
    if (!combination) continue;
    combination.rank_constant = settings.rrfRankConstant;
    combination.parameters = { ...combination.parameters, weights: settings.rrfWeights };
  }
  if (explain) pipeline.response_processors = [...(pipeline.response_processors ?? []), { hybrid_score_explanation: {} }];
  return pipeline;
}

export async function applySearchAssets(client: SearchClient, settings: SearchAssetSettings): Promise<{ index: string }> {
  // Every write here sets a named thing to a given state: safe to send again to another node (client.ts).
  const idempotent = true;
  await client.request('PUT', `/_ingest/pipeline/${CHUNKS_INGEST_PIPELINE}`, {
    body: readAsset('ingest-pipelines', 'kbqa-chunks.v1.json'),
    idempotent,
  });
  await client.request('PUT', `/_index_template/${CHUNKS_TEMPLATE}`, { body: readAsset('index-templates', 'kbqa-chunks.v1.json'), idempotent });
  await client.request('PUT', `/_search/pipeline/${HYBRID_SEARCH_PIPELINE}`, { body: hybridPipelineBody(settings, false), idempotent });
  await client.request('PUT', `/_search/pipeline/${HYBRID_EXPLAIN_SEARCH_PIPELINE}`, { body: hybridPipelineBody(settings, true), idempotent });

  const alias = settings.alias ?? CHUNKS_ALIAS;
  const index = chunkIndexName(settings.embedderName, alias);
  const template = readAsset('index-templates', 'kbqa-chunks.v1.json') as {
    template: {
      settings: Record<string, unknown>;
      mappings: { properties: { embedding: { dimension: number } } & Record<string, unknown>; dynamic_templates?: unknown[] };
    };
  };
  const templateDimensions = template.template.mappings.properties.embedding.dimension;
  if (templateDimensions !== settings.dimensions) {
    throw new Error(
      `index template ${CHUNKS_TEMPLATE} maps ${templateDimensions}-dimension embeddings but the embedder ${settings.embedderName} makes ${settings.dimensions}: add a template version for it`,
    );
  }
  if (!(await indexExists(client, index))) {
    // 400 resource_already_exists_exception when two instances start at once: the other one created it.
    await client.request('PUT', `/${index}`, {
      acceptStatuses: [400],
      body: { settings: { number_of_shards: settings.shards, number_of_replicas: settings.replicas } },
      idempotent,
    });
  }
  // Additive mapping changes of the same template version (a new field) reach an existing index in place; a
  // conflicting change fails here, loudly, and needs a new template version and a reindex.
  // Dynamic templates (how metadata.<type>.<key> fields are mapped) go with them: the list sent replaces the index's.
  const { properties, dynamic_templates: dynamicTemplates } = template.template.mappings;
  await client.request('PUT', `/${index}/_mapping`, { body: { properties, ...(dynamicTemplates ? { dynamic_templates: dynamicTemplates } : {}) }, idempotent });
  // Every distinct metadata key adds a field (two for a date): an index created before metadata has the default
  // limit of 1000 fields; the template's (a dynamic setting) reaches it in place. Raised only, never lowered: an
  // operator may have raised it further.
  const fieldLimit = Number(template.template.settings[TOTAL_FIELDS_LIMIT]);
  if (Number.isFinite(fieldLimit) && (await totalFieldsLimit(client, index)) < fieldLimit) {
    await client.request('PUT', `/${index}/_settings`, { body: { [TOTAL_FIELDS_LIMIT]: fieldLimit }, idempotent });
  }
  const aliases = await client.request<Record<string, unknown>>('GET', `/_alias/${alias}`, { acceptStatuses: [404] });
  if (!aliases || !(index in aliases)) {
    await client.request('POST', '/_aliases', {
      body: { actions: [{ add: { index, alias, is_write_index: true } }] },
      idempotent,
    });
  }
  return { index };
}

const TOTAL_FIELDS_LIMIT = 'index.mapping.total_fields.limit';

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

async function indexExists(client: SearchClient, index: string): Promise<boolean> {
  const body = await client.request<Record<string, unknown> | { status?: number }>('GET', `/${index}/_settings`, {
    acceptStatuses: [404],
  });
  return body !== null && typeof body === 'object' && index in body;
}
