// Scale fill: a dedicated KB grown to N chunks by bulk-loading PERTURBED COPIES of real chunks (their vectors plus
// small gaussian noise, re-normalised; the same texts; new chunk and document ids) straight through the service's
// own indexing code (search.indexChunks, then one refreshChunks). No embedder runs: this measures
// query latency against a bigger index, not ingest.
import { randomUUID } from 'node:crypto';
import type { ChunkDocument, SearchIndex } from '../service/search/index.ts';
import { gaussian, round } from './stats.ts';

export const SCALE_NOISE_SIGMA = 0.01;
const BATCH_SIZE = 500;
const PARALLEL_BULKS = 2;

/** The real chunks of a KB, vectors included (the templates the copies are made from). */
export async function readChunksOfKnowledgeBase(
  search: SearchIndex,
  knowledgeBaseId: string,
): Promise<ChunkDocument[]> {
  const response = await search.request<{ hits: { hits: Array<{ _source: ChunkDocument }> } }>(
    'POST',
    `/${search.alias}/_search`,
    {
      body: { size: 10_000, query: { term: { knowledge_base_id: knowledgeBaseId } }, sort: [{ chunk_id: 'asc' }] },
    },
  );
  return response.hits.hits.map((hit) => hit._source);
}

function perturb(vector: number[]): number[] {
  const noisy = vector.map((value) => value + SCALE_NOISE_SIGMA * gaussian());
  const norm = Math.sqrt(noisy.reduce((sum, value) => sum + value * value, 0)) || 1;
  // float32 is what the index keeps; 7 significant digits keep the bulk bodies small.
  return noisy.map((value) => Number((value / norm).toPrecision(7)));
}

/**
 * A perturbed copy of a real chunk as chunk `index` of version 1 of a new document. The fields are listed, not
 * spread: a template read back from the index also carries what the index adds (indexed_at, embedding_b64).
 */
export function copyOfChunk(
  template: ChunkDocument,
  target: { knowledgeBaseId: string; documentId: string; index: number; filename: string; createdAt: string },
): ChunkDocument {
  const version = 1;
  return {
    chunk_id: `${target.documentId}:${version}:${target.index}`,
    knowledge_base_id: target.knowledgeBaseId,
    document_id: target.documentId,
    document_version: version,
    filename: target.filename,
    title: template.title,
    heading_path: template.heading_path ?? [],
    chunk_index: target.index,
    page_start: null,
    page_end: null,
    text: template.text,
    embedding: perturb(template.embedding),
    embedder: template.embedder,
    created_at: target.createdAt,
  };
}

function copyOf(template: ChunkDocument, knowledgeBaseId: string, serial: number, createdAt: string): ChunkDocument {
  return copyOfChunk(template, {
    knowledgeBaseId,
    documentId: randomUUID(),
    index: 0,
    filename: `scale-${serial}.txt`,
    createdAt,
  });
}

/** The templates grouped back into their documents, each in chunk order (the unit an ingestion indexes). */
export function templateDocuments(templates: ChunkDocument[]): ChunkDocument[][] {
  const byDocument = new Map<string, ChunkDocument[]>();
  for (const template of templates) {
    const chunks = byDocument.get(template.document_id) ?? [];
    chunks.push(template);
    byDocument.set(template.document_id, chunks);
  }
  return [...byDocument.values()].map((chunks) => chunks.sort((a, b) => a.chunk_index - b.chunk_index));
}

/** Adds `count` perturbed copies to the KB, ~500 per bulk request, two in flight; refreshes once at the end. */
export async function loadPerturbedCopies(
  search: SearchIndex,
  templates: ChunkDocument[],
  knowledgeBaseId: string,
  startSerial: number,
  count: number,
  onProgress?: (done: number, total: number, chunksPerSecond: number) => void,
): Promise<{ chunks: number; seconds: number; chunks_per_s: number; refresh_seconds: number }> {
  if (templates.length === 0) throw new Error('no template chunks to copy');
  const createdAt = new Date().toISOString();
  const started = performance.now();
  let produced = 0;
  let loaded = 0;
  const nextBatch = (): ChunkDocument[] | null => {
    if (produced >= count) return null;
    const size = Math.min(BATCH_SIZE, count - produced);
    const batch = Array.from({ length: size }, (_, offset) => {
      const serial = startSerial + produced + offset;
      return copyOf(templates[serial % templates.length], knowledgeBaseId, serial, createdAt);
    });
    produced += size;
    return batch;
  };
  await Promise.all(
    Array.from({ length: PARALLEL_BULKS }, async () => {
      for (let batch = nextBatch(); batch; batch = nextBatch()) {
        await search.indexChunks(batch);
        loaded += batch.length;
        onProgress?.(loaded, count, loaded / ((performance.now() - started) / 1000));
      }
    }),
  );
  const refreshStarted = performance.now();
  await search.refreshChunks();
  const seconds = (performance.now() - started) / 1000;
  return {
    chunks: loaded,
    seconds: round(seconds, 2),
    chunks_per_s: round(loaded / seconds, 1),
    refresh_seconds: round((performance.now() - refreshStarted) / 1000, 2),
  };
}

/** Chunks per neighbour KB: a shared index's other tenants, as a handful of big KBs. */
export const NEIGHBOUR_KB_CHUNKS = 50_000;

/**
 * Other KBs beside the scale KB: `count` perturbed copies of the same templates, NEIGHBOUR_KB_CHUNKS per KB (each made
 * by `newKnowledgeBase`, so the run's clean-up removes them). Their texts are the scale KB's own, so every query term
 * the scale KB has is as common among the neighbours: the worst case for a filter the BM25 side would apply late.
 */
export async function loadNeighbours(
  search: SearchIndex,
  templates: ChunkDocument[],
  count: number,
  newKnowledgeBase: (name: string) => Promise<string>,
  onProgress?: (done: number, total: number, chunksPerSecond: number) => void,
): Promise<{ knowledge_bases: number; chunks: number; seconds: number; chunks_per_s: number }> {
  const started = performance.now();
  let loaded = 0;
  let knowledgeBases = 0;
  while (loaded < count) {
    knowledgeBases += 1;
    const knowledgeBaseId = await newKnowledgeBase(`bench-neighbour-${knowledgeBases}`);
    const chunks = Math.min(NEIGHBOUR_KB_CHUNKS, count - loaded);
    const before = loaded;
    await loadPerturbedCopies(search, templates, knowledgeBaseId, before, chunks, (done, _total, rate) =>
      onProgress?.(before + done, count, rate),
    );
    loaded += chunks;
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    knowledge_bases: knowledgeBases,
    chunks: loaded,
    seconds: round(seconds, 2),
    chunks_per_s: round(loaded / seconds, 1),
  };
}
