// The versioned JSON assets (index-templates/, ingest-pipelines/, search-pipelines/): their names, loading and
// rendering. Applying them to a cluster is applyAssets.ts (which reads drift.ts, which reads this: no circle).
//
// Versions: the current chunk template is the highest N of index-templates/kbqa-chunks.v<N>.json; its index for an
// embedder is kbqa-chunks-v<N>[-<name>]-<embedder>, behind the alias kbqa-chunks[-<name>]. Start-up never changes an
// existing index's analysis and never adds a second index to the alias: a new version, a changed analysis or another
// embedder is drift (reported by /readyz and `kbqa index status`), and `kbqa index migrate` builds the new index
// beside the live one and swaps the alias once (service/operations/indexMigration/).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import { SearchAssetsError } from '../errors.ts';
import { configuredChunking, type ChunkIndexMeta } from './chunkIndices.ts';
import type { FusionTechnique } from '../hybridTuning.ts';
import { renderHybridPipeline, type SearchPipelineBody } from './fusion.ts';

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
  if (!newest)
    throw new SearchAssetsError(`no chunk index template in ${join(dir, 'index-templates')} (kbqa-chunks.v<N>.json)`);
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
    throw new SearchAssetsError(
      `${newest.file} names the ingest pipeline ${pipeline}, but ingest-pipelines/ has no file for it (kbqa-chunks.v<M>.json)`,
    );
  }
  return {
    dir,
    version: newest.version,
    templateFile: newest.file,
    template,
    ingestPipelines,
    searchPipelineFile: `search-pipelines/${SEARCH_PIPELINE_FILE}`,
  };
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
  settings: Pick<SearchAssetSettings, 'rrfRankConstant' | 'rrfWeights' | 'hybridFusion'> & {
    assetsDir?: string | null;
  },
  explain: boolean,
) {
  const file = readJson(
    settings.assetsDir ?? repositoryRoot,
    `search-pipelines/${SEARCH_PIPELINE_FILE}`,
  ) as SearchPipelineBody;
  return renderHybridPipeline(
    { fusion: settings.hybridFusion ?? 'rrf', rankConstant: settings.rrfRankConstant, weights: settings.rrfWeights },
    explain,
    file,
  );
}

/** The search pipelines as the config renders them: name → body. */
export function searchPipelineBodies(settings: SearchAssetSettings): Record<string, unknown> {
  return {
    [HYBRID_SEARCH_PIPELINE]: hybridPipelineBody(settings, false),
    [HYBRID_EXPLAIN_SEARCH_PIPELINE]: hybridPipelineBody(settings, true),
  };
}

export const TOTAL_FIELDS_LIMIT = 'index.mapping.total_fields.limit';

/**
 * A new chunk index's body, from the template file: its settings and analysis, the configured shards (and the
 * given replicas), the embedding dimension of its embedder (the file's is a default), and _meta saying what built it.
 */
export function chunkIndexBody(
  assets: SearchAssets,
  settings: SearchAssetSettings,
  options: {
    embedder: { modelName: string; dimensions: number };
    replicas: number;
    refreshInterval?: string;
    migration: ChunkIndexMeta['migration'];
  },
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
