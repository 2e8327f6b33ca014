// The concrete chunk indices of one alias family (kbqa-chunks[-<name>]): which one the alias points to, what each
// was built from (its mappings' _meta), and their shape. Read by start-up, the serving-index resolver, `kbqa index`.
import type { Config } from '../config.ts';
import type { SentenceVectorRecipe } from '../configShape.ts';
import type { SearchClient } from './client.ts';

/** What built a chunk index, in its mappings' `_meta.kbqa`. */
export interface ChunkIndexMeta {
  /** The alias whose family it belongs to (kbqa-chunks or kbqa-chunks-<name>). */
  alias: string;
  template_version: number;
  embedder: { name: string; dimensions: number };
  /** Null for an index older than this record (the chunking then is unknown). */
  chunking: ChunkingMeta | null;
  /** Null for an index older than this record. */
  created_at: string | null;
  /**
   * `live`: built by start-up, or a migration that finished (catch-up done). `filling`: a migration is building it
   * (not served). `swapped`: served, the catch-up after the swap not yet done. `kept`: a former live index the
   * alias moved away from (kept until `kbqa index drop-old`).
   */
  migration: {
    state: 'live' | 'filling' | 'swapped' | 'kept';
    source: string | null;
    started_at?: string;
    swapped_at?: string;
    finished_at?: string;
  };
}

/**
 * How an index's chunks were cut and embedded. `sentence_vectors`: the per-sentence vectors' recipe (rag
 * segmentSentences) as SENTENCE_VECTOR_FORMATS numbers it, for chunks that carry them; 0 for KBQA_SENTENCE_VECTORS=off, and absent (the
 * same) for an index built before they existed.
 */
export interface ChunkingMeta {
  chunk_tokens: number;
  overlap_tokens: number;
  max_chars: number;
  sentence_vectors?: number;
}

/**
 * The sentence vectors' recipes (see ChunkingMeta), by KBQA_SENTENCE_VECTORS. 3: each unit of the one sentence
 * segmentation (text/sentences.ts: no break after "(max.)" or "No. 12", table rows with their header cells' names,
 * short lone lines as headings) embedded alone, in a binary doc-values field (float32 or int8, as the index's template
 * version says: sentenceVectors.ts; the form is not part of the recipe, a migration converts it). 4: the same
 * units late-chunked (from the chunk's own forward pass, rag/lateChunking.ts). 5: the units embedded alone in padded
 * batches (the int8 model's vectors then depend slightly on a batch's make-up). 2 stored the format of 3 with the
 * extractive answerer's former splitter; 1 was JSON arrays in _source, whose loading made the query's k-NN side ~30
 * times slower. A change of recipe is chunking drift (an index built with another reports it; a migration rebuilds it).
 */
export const SENTENCE_VECTOR_FORMATS: Record<SentenceVectorRecipe, number> = { separate: 3, late: 4, batched: 5 };

/** The chunking a service with this configuration builds. */
export function configuredChunking(chunking: Config['chunking']): ChunkingMeta {
  return {
    chunk_tokens: chunking.chunkTokens,
    overlap_tokens: chunking.overlapTokens,
    max_chars: chunking.maxChars,
    sentence_vectors: chunking.sentenceVectorRecipe ? SENTENCE_VECTOR_FORMATS[chunking.sentenceVectorRecipe] : 0,
  };
}

/** Whether documents split as `a` says give the same segments as split as `b` says (sentence vectors aside). */
export function sameSplit(a: ChunkingMeta, b: ChunkingMeta): boolean {
  return a.chunk_tokens === b.chunk_tokens && a.overlap_tokens === b.overlap_tokens && a.max_chars === b.max_chars;
}

/** Whether chunks cut and embedded as `a` says are interchangeable with chunks cut as `b` says. */
export function sameChunking(a: ChunkingMeta, b: ChunkingMeta): boolean {
  return sameSplit(a, b) && (a.sentence_vectors ?? 0) === (b.sentence_vectors ?? 0);
}

/** A chunking in words, for drift and status. */
export function describeChunking(chunking: ChunkingMeta): string {
  const recipe = Object.entries(SENTENCE_VECTOR_FORMATS).find(([, format]) => format === chunking.sentence_vectors);
  const sentences = !chunking.sentence_vectors
    ? 'without sentence vectors'
    : recipe
      ? `with sentence vectors (${recipe[0]})`
      : `with sentence vectors of another format (${chunking.sentence_vectors})`;
  return `${chunking.chunk_tokens} tokens (overlap ${chunking.overlap_tokens}, at most ${chunking.max_chars} characters, ${sentences})`;
}

/**
 * Fields the service writes into every chunk index whatever its template says (an older version's, or an edited copy
 * of one): a write with a field the strict mapping lacks is refused, so each index written to gets them first.
 */
const SERVICE_FIELDS = { sentence_embeddings: { type: 'binary', doc_values: true } };

/** Adds the service's own fields to an index's mapping (idempotent). */
export async function ensureServiceFields(client: SearchClient, index: string): Promise<void> {
  await client.request('PUT', `/${index}/_mapping`, { body: { properties: SERVICE_FIELDS }, idempotent: true });
}

export interface AliasedIndex {
  index: string;
  isWriteIndex: boolean;
}

/** The indices the alias points to (none when it does not exist). */
export async function aliasIndices(client: SearchClient, alias: string): Promise<AliasedIndex[]> {
  const body = await client.request<
    Record<string, { aliases?: Record<string, { is_write_index?: boolean }> }> | { status?: number; error?: unknown }
  >('GET', `/_alias/${alias}`, { acceptStatuses: [404] });
  if (!body || typeof body !== 'object' || ('status' in body && body.status === 404)) return [];
  return Object.entries(body as Record<string, { aliases?: Record<string, { is_write_index?: boolean }> }>)
    .filter(([name, value]) => name !== 'error' && name !== 'status' && typeof value === 'object' && value !== null)
    .map(([index, value]) => ({ index, isWriteIndex: value.aliases?.[alias]?.is_write_index === true }))
    .sort((a, b) => a.index.localeCompare(b.index));
}

/** The index's _meta.kbqa; null when it has none; undefined when the index does not exist. */
export async function indexMeta(client: SearchClient, index: string): Promise<ChunkIndexMeta | null | undefined> {
  const body = await client.request<
    Record<string, { mappings?: { _meta?: { kbqa?: ChunkIndexMeta } } }> & { status?: number }
  >('GET', `/${index}/_mapping`, {
    querystring: { filter_path: '*.mappings._meta,status' },
    acceptStatuses: [404],
  });
  if (body?.status === 404) return undefined;
  // filter_path leaves {} for an index without _meta.
  return body?.[index]?.mappings?._meta?.kbqa ?? null;
}

/** Replaces the index's _meta.kbqa (a mapping update that touches nothing else). */
export async function setIndexMeta(client: SearchClient, index: string, meta: ChunkIndexMeta): Promise<void> {
  await client.request('PUT', `/${index}/_mapping`, { body: { _meta: { kbqa: meta } }, idempotent: true });
}

export interface FamilyIndex {
  index: string;
  meta: ChunkIndexMeta | null;
  /** The alias points to it. */
  aliased: boolean;
}

/**
 * Every chunk index of this alias's family: those whose _meta names the alias, and whatever the alias points to
 * (an index older than _meta). A wildcard on names alone would mix families: kbqa-chunks-v1-* also matches
 * kbqa-chunks-v1-<name>-<embedder>.
 */
export async function familyIndices(client: SearchClient, alias: string): Promise<FamilyIndex[]> {
  const [aliased, metas] = await Promise.all([
    aliasIndices(client, alias),
    client.request<Record<string, { mappings?: { _meta?: { kbqa?: ChunkIndexMeta } } }>>(
      'GET',
      '/kbqa-chunks-v*/_mapping',
      {
        querystring: { filter_path: '*.mappings._meta.kbqa', allow_no_indices: true, ignore_unavailable: true },
      },
    ),
  ]);
  const aliasedNames = new Set(aliased.map((entry) => entry.index));
  const family = new Map<string, FamilyIndex>();
  for (const [index, value] of Object.entries(metas ?? {})) {
    const meta = value?.mappings?._meta?.kbqa ?? null;
    if (meta?.alias === alias || aliasedNames.has(index))
      family.set(index, { index, meta, aliased: aliasedNames.has(index) });
  }
  for (const name of aliasedNames) if (!family.has(name)) family.set(name, { index: name, meta: null, aliased: true });
  return [...family.values()].sort((a, b) => a.index.localeCompare(b.index));
}

/** An index's analysis settings and mappings, as the cluster holds them. */
export async function indexDefinition(
  client: SearchClient,
  index: string,
): Promise<{ settings: Record<string, unknown>; mappings: Record<string, unknown> } | null> {
  const [settings, mappings] = await Promise.all([
    client.request<Record<string, { settings?: { index?: Record<string, unknown> } }> & { status?: number }>(
      'GET',
      `/${index}/_settings`,
      { acceptStatuses: [404] },
    ),
    client.request<Record<string, { mappings?: Record<string, unknown> }> & { status?: number }>(
      'GET',
      `/${index}/_mapping`,
      { acceptStatuses: [404] },
    ),
  ]);
  if (settings?.status === 404 || mappings?.status === 404) return null;
  return { settings: settings[index]?.settings?.index ?? {}, mappings: mappings[index]?.mappings ?? {} };
}
