// Shared helpers for the document and query tests: ingest through the API, read [n] markers, check the shapes the
// contract promises.
import type { ExecutionContext } from 'ava';
import type { TestApp } from './app.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

export const INGEST_FIELDS = ['chunks', 'filename', 'id', 'title', 'total_chunks'];
export const LIST_ITEM_FIELDS = ['created_at', 'filename', 'id', 'source', 'title'];
export const QUERY_FIELDS = ['answer', 'citations', 'knowledge_base_ids', 'model'];
export const CITATION_FIELDS = ['document_id', 'similarity', 'snippet', 'title'];
export const CHUNK_FIELDS = [
  'bm25_rank',
  'chunk_index',
  'document_id',
  'filename',
  'heading_path',
  'id',
  'knowledge_base_id',
  'page_end',
  'page_start',
  'score',
  'similarity',
  'text',
  'title',
  'vector_rank',
];

export const sortedKeys = (value: object) => Object.keys(value).sort();

export interface IngestedDocument {
  id: string;
  filename: string;
  title: string;
  chunks: number;
  total_chunks: number;
}

/** POST /documents that must succeed; returns the `document` object. */
export async function ingest(
  app: TestApp,
  key: string,
  kbId: string,
  filename: string,
  content: string,
): Promise<IngestedDocument> {
  const response = await app.call('POST', '/api/v1/documents', { key, body: { kb_id: kbId, filename, content } });
  if (response.status !== 201) {
    throw new Error(`ingest of ${filename} failed: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body.document as IngestedDocument;
}

export async function createKb(app: TestApp, key: string, name: string): Promise<string> {
  const response = await app.call('POST', '/api/v1/knowledge-bases', { key, body: { name } });
  if (response.status !== 201) throw new Error(`create KB failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.knowledge_base.id as string;
}

/** The [n] markers of an answer in order of appearance ("[1][2]" and "[1, 2]" both count both). */
export function markers(answer: string): number[] {
  const found: number[] = [];
  for (const match of answer.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g)) {
    for (const part of match[1].split(',')) found.push(Number(part.trim()));
  }
  return found;
}

/**
 * [n] ↔ citations[n-1]: every marker names a citation, every citation is cited, and markers are numbered in order of
 * first use (the first new marker is [1], the next new one [2], …).
 */
export function assertMarkersMatchCitations(
  t: ExecutionContext,
  body: { answer?: unknown; citations?: unknown },
): void {
  t.is(typeof body.answer, 'string');
  t.true(Array.isArray(body.citations));
  const answer = body.answer as string;
  const citations = body.citations as unknown[];
  const used = markers(answer);
  const firstUse = [...new Set(used)];
  t.deepEqual(
    firstUse,
    firstUse.map((_n, index) => index + 1),
    `markers must be numbered in order of first use: ${answer}`,
  );
  t.is(firstUse.length, citations.length, `each citation is cited and each marker has a citation: ${answer}`);
  for (const n of used) t.true(n >= 1 && n <= citations.length, `marker [${n}] has no citation`);
}

/** Field set and types of one citation. */
export function assertCitationShape(t: ExecutionContext, citation: Record<string, unknown>): void {
  t.deepEqual(sortedKeys(citation), CITATION_FIELDS);
  t.regex(citation.document_id as string, UUID);
  t.is(typeof citation.title, 'string');
  t.is(typeof citation.snippet, 'string');
  t.true((citation.snippet as string).length > 0, 'snippet is not empty');
  t.true(
    (citation.snippet as string).length <= 500,
    `snippet is at most 500 characters (${(citation.snippet as string).length})`,
  );
  t.is(typeof citation.similarity, 'number');
  t.true(
    (citation.similarity as number) >= 0 && (citation.similarity as number) <= 1,
    `similarity in [0, 1]: ${citation.similarity}`,
  );
}

const isRank = (value: unknown) =>
  value === null || (typeof value === 'number' && Number.isInteger(value) && value >= 1);

/** Field set and types of one include_chunks record. */
export function assertChunkShape(t: ExecutionContext, chunk: Record<string, unknown>): void {
  t.deepEqual(sortedKeys(chunk), CHUNK_FIELDS);
  t.is(typeof chunk.id, 'string');
  t.regex(chunk.document_id as string, UUID);
  t.regex(chunk.knowledge_base_id as string, UUID);
  t.is(typeof chunk.filename, 'string');
  t.is(typeof chunk.title, 'string');
  t.true(
    Array.isArray(chunk.heading_path) && (chunk.heading_path as unknown[]).every((part) => typeof part === 'string'),
  );
  t.true(Number.isInteger(chunk.chunk_index) && (chunk.chunk_index as number) >= 0);
  t.is(typeof chunk.text, 'string');
  t.true((chunk.text as string).length > 0);
  t.is(typeof chunk.score, 'number');
  t.true(Number.isFinite(chunk.score));
  t.is(typeof chunk.similarity, 'number');
  t.true(
    (chunk.similarity as number) >= 0 && (chunk.similarity as number) <= 1,
    `similarity in [0, 1]: ${chunk.similarity}`,
  );
  t.true(isRank(chunk.bm25_rank), `bm25_rank is an integer ≥ 1 or null: ${chunk.bm25_rank}`);
  t.true(isRank(chunk.vector_rank), `vector_rank is an integer ≥ 1 or null: ${chunk.vector_rank}`);
  t.false(
    chunk.bm25_rank === null && chunk.vector_rank === null,
    'a retrieved chunk was returned by at least one side',
  );
}

export const normaliseSpace = (text: string) => text.replace(/\s+/g, ' ').trim();
