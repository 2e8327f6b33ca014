// `kbqa eval beir DIR`: retrieval quality of a running kbqa service on a dataset in BEIR layout. Ingests the corpus
// through the real API (resumable), runs every judged query through POST /query, and scores the ranked documents;
// with --ablate also BM25-only and dense-only over the same index through the service's own search module.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { corpusDocument, corpusIdFromFilename, loadBeirDataset, sliceDataset, type BeirDataset } from '../eval/beir.ts';
import { createKbqaClient, forEachConcurrently, type KbqaClient } from '../eval/apiClient.ts';
import { averageMetrics, collapseToDocuments, type RankingMetrics } from '../eval/metrics.ts';

/** The API's max_results ceiling: Recall@50 is measured at it. */
const RETRIEVAL_DEPTH = 50;

export interface EvalOptions {
  directory: string;
  url: string;
  apiKey: string;
  knowledgeBaseId?: string;
  ablate: boolean;
  split: string;
  limit?: number;
  concurrency: number;
  out?: string;
  quiet?: boolean;
}

export interface EvalResult {
  dataset: string;
  split: string;
  knowledge_base_id: string;
  documents: number;
  queries: number;
  ingest: { ingested: number; skipped: number; seconds: number; chunks: number };
  modes: Record<string, RankingMetrics & { seconds: number }>;
  config: { rrf_rank_constant: number; rrf_weights: [number, number]; chunk_tokens: number; chunk_overlap_tokens: number };
  finished_at: string;
}

function progress(label: string, total: number, quiet: boolean) {
  let done = 0;
  const started = Date.now();
  const interactive = process.stderr.isTTY;
  let lastPrinted = -1;
  return {
    tick() {
      done += 1;
      if (quiet) return;
      const percent = Math.floor((done / total) * 100);
      if (!interactive && percent < lastPrinted + 10 && done !== total) return;
      lastPrinted = percent;
      const width = 30;
      const filled = Math.round((done / total) * width);
      const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
      const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${rate.toFixed(1)}/s`;
      process.stderr.write(interactive ? `\r${line}${done === total ? '\n' : ''}` : `${line}\n`);
    },
  };
}

async function resolveKnowledgeBase(client: KbqaClient, dataset: BeirDataset, requested: string | undefined, sliced: boolean): Promise<string> {
  if (requested) return requested;
  // Reusing the KB named after the dataset makes a re-run resume instead of starting over.
  const name = `beir-${dataset.name}${sliced ? `-${dataset.corpus.length}` : ''}`;
  const existing = (await client.listKnowledgeBases()).find((knowledgeBase) => knowledgeBase.name === name && knowledgeBase.role === 'owner');
  if (existing) return existing.id;
  return (await client.createKnowledgeBase(name, `BEIR ${dataset.name} corpus loaded by kbqa eval`)).id;
}

export async function ingestCorpus(
  client: KbqaClient,
  knowledgeBaseId: string,
  dataset: BeirDataset,
  concurrency: number,
  quiet = false,
): Promise<EvalResult['ingest']> {
  const already = await client.listDocumentFilenames(knowledgeBaseId);
  const pending = dataset.corpus.filter((entry) => !already.has(corpusDocument(entry).filename));
  const started = Date.now();
  let chunks = 0;
  if (pending.length > 0) {
    const bar = progress(`ingest ${dataset.name}`, pending.length, quiet);
    await forEachConcurrently(
      pending,
      concurrency,
      async (entry) => {
        const { filename, content } = corpusDocument(entry);
        if (content.trim().length === 0) return;
        const document = await client.ingestDocument(knowledgeBaseId, filename, content);
        chunks += document.chunks; // after the await: `chunks += await …` would read a stale total
      },
      () => bar.tick(),
    );
  }
  return { ingested: pending.length, skipped: dataset.corpus.length - pending.length, seconds: (Date.now() - started) / 1000, chunks };
}

export async function runEval(options: EvalOptions): Promise<EvalResult> {
  const full = await loadBeirDataset(options.directory, options.split);
  const dataset = options.limit ? sliceDataset(full, options.limit) : full;
  const client = createKbqaClient(options.url, options.apiKey);
  await client.me();
  const knowledgeBaseId = await resolveKnowledgeBase(client, dataset, options.knowledgeBaseId, options.limit !== undefined);
  const ingest = await ingestCorpus(client, knowledgeBaseId, dataset, options.concurrency, options.quiet);

  const judged = [...dataset.qrels.keys()].filter((id) => dataset.queries.has(id));
  const modes: EvalResult['modes'] = {};

  // Hybrid: the real API, exactly as a client calls it.
  let started = Date.now();
  const hybrid: Array<{ ranked: string[]; relevant: Map<string, number> }> = [];
  const bar = progress('queries (hybrid via API)', judged.length, options.quiet ?? false);
  await forEachConcurrently(
    judged,
    options.concurrency,
    async (queryId) => {
      const { body } = await client.query({
        // `judged` holds only ids with a query.
        query: dataset.queries.get(queryId) as string,
        knowledge_base_ids: [knowledgeBaseId],
        max_results: RETRIEVAL_DEPTH,
        include_chunks: true,
      });
      const ranked = collapseToDocuments((body.chunks ?? []).map((chunk) => corpusIdFromFilename(chunk.filename)));
      hybrid.push({ ranked, relevant: dataset.qrels.get(queryId) ?? new Map() });
    },
    () => bar.tick(),
  );
  modes.hybrid = { ...averageMetrics(hybrid), seconds: (Date.now() - started) / 1000 };

  const config = loadConfig();
  if (options.ablate) {
    // The single sides through the service's own search module: same index, analyzers, fields and KB filter.
    const { loadRag } = await import('../rag/index.ts');
    const { openConfiguredSearchIndex } = await import('../search/index.ts');
    const rag = await loadRag(config);
    const search = openConfiguredSearchIndex(config, rag.embedder);
    try {
      for (const [mode, searchSide] of [
        ['bm25', search.lexicalSearch],
        ['dense', search.vectorSearch],
      ] as const) {
        started = Date.now();
        const rankings: Array<{ ranked: string[]; relevant: Map<string, number> }> = [];
        const sideBar = progress(`queries (${mode} only)`, judged.length, options.quiet ?? false);
        for (const queryId of judged) {
          const text = dataset.queries.get(queryId) ?? '';
          const vector = mode === 'dense' ? await rag.embedQuestion(text) : [];
          const chunks = await searchSide({ text, vector: vector.length ? vector : new Array(rag.embedder.dimensions).fill(0), knowledgeBaseIds: [knowledgeBaseId], size: RETRIEVAL_DEPTH, depth: RETRIEVAL_DEPTH });
          rankings.push({ ranked: collapseToDocuments(chunks.map((chunk) => corpusIdFromFilename(chunk.filename))), relevant: dataset.qrels.get(queryId) ?? new Map() });
          sideBar.tick();
        }
        modes[mode] = { ...averageMetrics(rankings), seconds: (Date.now() - started) / 1000 };
      }
    } finally {
      await search.close();
    }
  }

  const result: EvalResult = {
    dataset: dataset.name,
    split: options.split,
    knowledge_base_id: knowledgeBaseId,
    documents: dataset.corpus.length,
    queries: judged.length,
    ingest,
    modes,
    config: {
      rrf_rank_constant: config.opensearch.rrfRankConstant,
      rrf_weights: config.opensearch.rrfWeights,
      chunk_tokens: config.chunking.chunkTokens,
      chunk_overlap_tokens: config.chunking.overlapTokens,
    },
    finished_at: new Date().toISOString(),
  };
  if (options.out) {
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
  }
  return result;
}

export function formatEvalTable(result: EvalResult): string {
  const rows = Object.entries(result.modes).map(
    ([mode, metrics]) =>
      `| ${mode.padEnd(6)} | ${metrics.ndcg_at_10.toFixed(3)} | ${metrics.recall_at_10.toFixed(3)} | ${metrics.recall_at_50.toFixed(3)} | ${metrics.mrr_at_10.toFixed(3)} |`,
  );
  return [
    `${result.dataset} (${result.split}): ${result.documents} documents, ${result.queries} queries, KB ${result.knowledge_base_id}`,
    '| mode   | nDCG@10 | Recall@10 | Recall@50 | MRR@10 |',
    '|--------|---------|-----------|-----------|--------|',
    ...rows,
  ].join('\n');
}

export async function runEvalCommand(action: string | undefined, positionals: string[], options: Record<string, unknown>): Promise<number> {
  if (action !== 'beir' || positionals.length !== 1) {
    console.error('usage: kbqa eval beir DIR [--url U] [--api-key K] [--kb ID] [--ablate] [--split test] [--limit N] [--concurrency 4] [--out FILE] [--json]');
    return 2;
  }
  const apiKey = (options['api-key'] as string | undefined) ?? process.env.KBQA_API_KEY;
  if (!apiKey) {
    console.error('kbqa eval: an API key is required (--api-key or KBQA_API_KEY)');
    return 2;
  }
  const directory = resolve(positionals[0]);
  const name = directory.split('/').pop() ?? 'dataset';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  try {
    const result = await runEval({
      directory,
      url: (options.url as string | undefined) ?? process.env.KBQA_URL ?? 'http://127.0.0.1:8080',
      apiKey,
      knowledgeBaseId: options.kb as string | undefined,
      ablate: Boolean(options.ablate),
      split: (options.split as string | undefined) ?? 'test',
      limit: options.limit ? Number(options.limit) : undefined,
      concurrency: options.concurrency ? Number(options.concurrency) : 4,
      out: (options.out as string | undefined) ?? join('bench', 'results', `eval-${name}-${stamp}.json`),
      quiet: Boolean(options.json),
    });
    console.log(options.json ? JSON.stringify(result) : formatEvalTable(result));
    return 0;
  } catch (error) {
    console.error(`kbqa eval: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
