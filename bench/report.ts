// The run's JSON shape, its targets, and the markdown summary.
import type { OcrResult } from './ocr.ts';
import {
  CLI_HELP_TARGET_MS,
  CLI_KEYS_CREATE_TARGET_MS,
  renderCliStartup,
  type CliStartupResult,
} from './cliStartup.ts';
import type { DuringIngestResult } from './duringIngest.ts';
import type { LoadResult } from './load.ts';
import type { MachineInfo } from './machine.ts';
import { PDF_RATIO_TARGET, type PdfIngestResult } from './pdfIngest.ts';
import type { PhaseResources } from './phases.ts';
import { BURST_RATIO_TARGET, renderQueryBurst, type QueryBurstResult } from './queryBurst.ts';
import { renderConversationTurns, TURN_P50_TARGET_MS, type ConversationTurnsResult } from './conversationTurns.ts';
import type { IngestRun, RawEmbedRun } from './ingest.ts';
import type { RefreshPolicyComparison } from './refreshPolicies.ts';
import { apiVariant, type SearchStageResult } from './searchStage.ts';
import type { SequentialResult } from './sequential.ts';

export interface ScaleStep {
  chunks: number;
  load: { chunks: number; seconds: number; chunks_per_s: number; refresh_seconds: number };
  /** How long merges ran on after the load (waited for before querying, so they do not slow the queries). */
  merge_wait_seconds: number;
  /** The whole chunk index after the load (shared: other KBs' chunks are in it too). */
  index: { documents: number; segments: number };
  /** The search stage alone (search.hybridSearch from the bench process) and its variants. */
  search_stage: SearchStageResult | null;
  /** Whole queries through the API. */
  queries: SequentialResult;
}

export interface EvalSummary {
  file: string;
  dataset: string;
  documents: number;
  queries: number;
  finished_at: string;
  modes: Record<string, { ndcg_at_10: number; recall_at_10: number; recall_at_50: number; mrr_at_10: number }>;
}

export interface Target {
  id: string;
  label: string;
  value: number | null;
  unit: string;
  comparison: '≥' | '≤' | '=';
  threshold: number;
  target: string;
  pass: boolean | null;
  /** For a MISS: how far the value is from the target, absolute and relative. */
  miss_by: string | null;
}

export interface BenchResult {
  started_at: string;
  finished_at: string;
  stamp: string;
  quick: boolean;
  /** `--only <phase>`: just that phase ran (the other sections are absent); null for a whole run. */
  only?: string | null;
  options: Record<string, number | boolean | string>;
  /** The MongoDB database the bench and its API used (created for the run, dropped at its end). */
  database: string;
  machine: MachineInfo & { load_average_at_end: number[] };
  /** A 100-page text PDF through the web upload against the same text through /api/v1 (absent in older results). */
  pdf_ingest?: PdfIngestResult | { error: string };
  /** OCR pages per second on the committed scans (`--only ocr`; absent in older results). */
  ocr?: OcrResult | { error: string };
  /** `kbqa --help` and `kbqa keys create` as fresh processes (absent in older results). */
  cli_startup?: CliStartupResult | { error: string };
  ingest?: {
    dataset: string;
    documents: number;
    api: IngestRun[];
    /** Without sentence vectors (results before 2026-11-26: with them, and no `sentence_vectors` field). */
    raw_embedder: RawEmbedRun;
    /** The same with the configured sentence vectors, beside the baseline (absent in older results, or when off). */
    raw_embedder_with_sentences?: RawEmbedRun;
    api4_to_raw_ratio: number;
  };
  refresh_policies?: RefreshPolicyComparison | { error: string };
  /** Another user's questions idle and while one key bursts (absent in older results). */
  query_burst?: QueryBurstResult | { error: string };
  /** A conversation turn against /query on the same questions, alternately (absent in older results). */
  conversation_turns?: ConversationTurnsResult | { error: string };
  resources: {
    method: string;
    startup_peak_mb: number | null;
    /** The ingest phases' highest VmHWM (whole runs only). */
    ingest_peak_rss_mb?: number;
    /** The highest VmHWM of any phase (and start-up). */
    api_peak_rss_mb: number;
    api_peak_rss_phase: string;
    phases: Record<string, PhaseResources>;
  };
  query?: {
    knowledge_base_id: string;
    chunks_in_kb: number;
    sequential: SequentialResult;
    concurrent: LoadResult;
    /** 8-connection queries/s ÷ sequential queries/s (both: completed queries ÷ wall-clock seconds). */
    throughput_ratio: number;
    during_ingest: DuringIngestResult | { error: string };
  };
  scale?: {
    method: string;
    knowledge_base_id: string;
    templates: number;
    steps: ScaleStep[];
    /** Whole API queries: p50 at the last step ÷ at the first. */
    p50_ratio: number | null;
    /** Server-Timing search stage through the API, same ratio. */
    search_p50_ratio?: number;
    /** The search stage measured directly (search.hybridSearch, client side), same ratio: the judged figure. */
    search_stage_p50_ratio?: number;
    /** The same by OpenSearch's `took`. */
    search_stage_took_p50_ratio?: number;
    /** The scale KB at its first size again, beside other KBs' chunks (--neighbours). */
    neighbours?: {
      load: { knowledge_bases: number; chunks: number; seconds: number; chunks_per_s: number };
      merge_wait_seconds: number;
      index: { documents: number; segments: number };
      search_stage: SearchStageResult;
      /** Search stage p50 beside the neighbours ÷ alone (client side): the judged figure. */
      p50_ratio: number | null;
      took_p50_ratio: number | null;
    };
    error?: string;
  };
  auth?: (LoadResult & { error?: undefined }) | { error: string };
  eval: EvalSummary | null;
  targets: Target[];
  charts: Record<string, string>;
}

const mark = (pass: boolean | null) => (pass === null ? '—' : pass ? '**PASS**' : '**MISS**');
const fmt = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);

const digitsFor = (unit: string) => (unit === '×' ? 2 : unit === '' ? 0 : 1);

/** The ingest run at concurrency 4 (the one the ratio and the OpenSearch CPU target are about). */
export const ingestAt = (result: Pick<BenchResult, 'ingest'>, concurrency: number) =>
  result.ingest?.api.find((run) => run.concurrency === concurrency);

/** The PDF-vs-text comparison when it ran and succeeded. */
const pdfComparison = (result: Pick<BenchResult, 'pdf_ingest'>): PdfIngestResult | null =>
  result.pdf_ingest && !('error' in result.pdf_ingest) ? result.pdf_ingest : null;

/** The scale KB at its first size, alone and beside the neighbours, variant by variant (p50 client / took, ms). */
function pushNeighbours(
  push: (...lines: string[]) => void,
  neighbours: NonNullable<NonNullable<BenchResult['scale']>['neighbours']>,
  first: ScaleStep | undefined,
) {
  push(
    '',
    `Beside the neighbours: ${neighbours.load.chunks} chunks of ${neighbours.load.knowledge_bases} other KBs loaded in ${fmt(neighbours.load.seconds)} s ` +
      `(merges ${fmt(neighbours.merge_wait_seconds)} s more; index ${neighbours.index.documents} chunks in ${neighbours.index.segments} segments). ` +
      `Search stage p50 beside them ÷ alone = **${fmt(neighbours.p50_ratio, 2)}** (target ≤ 1.2); by \`took\`: ${fmt(neighbours.took_p50_ratio, 2)}.`,
    '',
    `| variant (${first?.chunks ?? '?'} chunks in the KB) | alone | beside the neighbours | ratio (client) |`,
    '|---|---:|---:|---:|',
  );
  for (const [name, beside] of Object.entries(neighbours.search_stage.variants)) {
    const alone = first?.search_stage?.variants[name];
    push(
      `| ${name} | ${fmt(alone?.client_p50_ms)} / ${fmt(alone?.took_p50_ms)} | ${fmt(beside.client_p50_ms)} / ${fmt(beside.took_p50_ms)} | ${alone ? fmt(beside.client_p50_ms / alone.client_p50_ms, 2) : 'n/a'} |`,
    );
  }
}

type TargetMaker = (
  id: string,
  label: string,
  value: number | null,
  unit: string,
  comparison: Target['comparison'],
  threshold: number,
) => Target;

/** The scale phase's targets: 100k ÷ 10k in one KB, and (with --neighbours) the same KB beside others ÷ alone. */
function scaleTargets(scale: NonNullable<BenchResult['scale']>, target: TargetMaker): Target[] {
  const thousands = (chunks: number) => `${Math.round(chunks / 1000)}k`;
  const steps = scale.steps;
  const label =
    steps.length >= 2 ? `${thousands(steps[steps.length - 1].chunks)} ÷ ${thousands(steps[0].chunks)} chunks` : 'ratio';
  const neighbours = scale.neighbours;
  const beside = neighbours ? ` in one KB, beside ${thousands(neighbours.load.chunks)} of other KBs` : '';
  const targets = [
    target(
      'scale_search_ratio',
      `Search stage p50 (hybridSearch direct): ${label}${beside}`,
      scale.search_stage_p50_ratio ?? null,
      '×',
      '≤',
      1.5,
    ),
  ];
  if (neighbours && steps.length > 0)
    targets.push(
      target(
        'scale_neighbours_ratio',
        `Search stage p50: a ${thousands(steps[0].chunks)} KB beside ${thousands(neighbours.load.chunks)} chunks of other KBs ÷ alone`,
        neighbours.p50_ratio,
        '×',
        '≤',
        1.2,
      ),
    );
  return targets;
}

export function buildTargets(result: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'>): Target[] {
  const target: TargetMaker = (id, label, value, unit, comparison, threshold) => {
    const known = value !== null && Number.isFinite(value);
    const pass = !known
      ? null
      : comparison === '≥'
        ? value >= threshold
        : comparison === '≤'
          ? value <= threshold
          : value === threshold;
    let missBy: string | null = null;
    if (known && pass === false) {
      const gap = Math.abs(value - threshold);
      const relative = threshold !== 0 ? ` (${((gap / Math.abs(threshold)) * 100).toFixed(0)} %)` : '';
      missBy = `${comparison === '≥' ? 'short by' : 'over by'} ${gap.toFixed(digitsFor(unit))}${unit ? ` ${unit}` : ''}${relative}`;
    }
    const thresholdText = `${comparison} ${threshold}${unit && unit !== '×' ? ` ${unit}` : ''}`;
    return {
      id,
      label,
      value: known ? value : null,
      unit,
      comparison,
      threshold,
      target: thresholdText,
      pass,
      miss_by: missBy,
    };
  };
  const targets: Target[] = [];
  // A run of one phase (--only) judges only what it measured; a whole run judges every target (n/a when a phase failed).
  const whole = !result.only;
  if (whole || result.only === 'pdf') {
    const pdf = pdfComparison(result);
    const pages = pdf ? `${pdf.pages}-page` : '100-page';
    targets.push(
      target(
        'pdf_ingest_ratio',
        `Ingest: ${pages} text PDF (web upload, extraction + embedding) ÷ the same text as plain text, median time to ready`,
        pdf ? pdf.ratio : null,
        '×',
        '≤',
        PDF_RATIO_TARGET,
      ),
    );
  }
  if (whole || result.only === 'cli') {
    const cli = result.cli_startup && !('error' in result.cli_startup) ? result.cli_startup : null;
    const runs = cli ? `median of ${cli.runs}` : 'median';
    targets.push(
      target(
        'cli_help_ms',
        `CLI: \`kbqa --help\`, fresh process, ${runs}`,
        cli ? cli.help.median_ms : null,
        'ms',
        '≤',
        CLI_HELP_TARGET_MS,
      ),
      target(
        'cli_keys_create_ms',
        `CLI: \`kbqa keys create\`, fresh process, ${runs}`,
        cli ? cli.keys_create.median_ms : null,
        'ms',
        '≤',
        CLI_KEYS_CREATE_TARGET_MS,
      ),
    );
  }
  const ingestTargets = (ingest: NonNullable<BenchResult['ingest']>) => [
    target(
      'ingest_ratio',
      `Ingest: API at concurrency 4 ÷ raw embedder at 4 without sentence vectors, same pool (${ingest.raw_embedder.workers} workers)`,
      ingest.api4_to_raw_ratio,
      '×',
      '≥',
      0.85,
    ),
    target(
      'opensearch_cpu_per_chunk',
      'Ingest: OpenSearch CPU per ingested chunk (API, concurrency 4)',
      ingestAt(result, 4)?.opensearch?.cpu_ms_per_chunk ?? null,
      'ms',
      '≤',
      8,
    ),
  ];
  if (whole || result.only === 'burst') {
    const burst = result.query_burst && !('error' in result.query_burst) ? result.query_burst : null;
    targets.push(
      target(
        'burst_p95_ratio',
        "Query: another user's p95 while one key bursts 24 long questions ÷ its idle p95",
        burst ? burst.p95_ratio : null,
        '×',
        '≤',
        BURST_RATIO_TARGET,
      ),
    );
  }
  if (whole || result.only === 'conversation') {
    const turns =
      result.conversation_turns && !('error' in result.conversation_turns) ? result.conversation_turns : null;
    targets.push(
      target(
        'conversation_turn_p50',
        'Query: a conversation turn p50 − /query p50 (same questions, same KB, alternately)',
        turns ? turns.p50_difference_ms : null,
        'ms',
        '≤',
        TURN_P50_TARGET_MS,
      ),
    );
  }
  if (result.only === 'ingest' && result.ingest) return ingestTargets(result.ingest);
  if ((whole || result.only === 'scale') && result.scale) targets.push(...scaleTargets(result.scale, target));
  if (!whole || !result.ingest || !result.query || !result.scale || !result.auth) return targets;
  const seq = result.query.sequential.latency;
  const conc = result.query.concurrent;
  const auth = 'error' in result.auth && result.auth.error ? null : (result.auth as LoadResult);
  const during = 'error' in result.query.during_ingest ? null : result.query.during_ingest;
  const duringMiB = during ? `${(during.document.bytes / 1024 / 1024).toFixed(1)} MiB` : 'big';
  const queriesFailed = conc.non_2xx + conc.errors > 0;
  const phaseTargets = targets.splice(0);
  return [
    ...ingestTargets(result.ingest),
    ...phaseTargets,
    target(
      'query_throughput_ratio',
      `Query: throughput at ${conc.connections} connections ÷ sequential`,
      queriesFailed ? null : result.query.throughput_ratio,
      '×',
      '≥',
      1.7,
    ),
    target(
      'query_qps_c8',
      `Query: throughput at ${conc.connections} connections`,
      queriesFailed ? null : conc.requests_per_s,
      'q/s',
      '≥',
      45,
    ),
    target('query_p50', 'Query: p50, sequential', seq.p50_ms, 'ms', '≤', 30),
    target(
      'query_cpu_per_query',
      'Query: API + OpenSearch CPU per query (sequential phase, warm-up included)',
      cpuPerQuery(result),
      'ms',
      '≤',
      20,
    ),
    target(
      'p95_during_ingest',
      `Query p95 while a ${duringMiB} document ingests ÷ idle p95`,
      during ? during.p95_ratio : null,
      '×',
      '≤',
      2,
    ),
    target('api_peak_rss', 'API peak RSS (all workers, any phase)', result.resources.api_peak_rss_mb, 'MB', '≤', 700),
    // Earlier targets that still stand.
    target('query_p95', 'Query: p95, sequential', seq.p95_ms, 'ms', '≤', 120),
    target(
      'auth_rps',
      'Auth path (GET /me, 32 conn.): throughput',
      auth ? auth.requests_per_s : null,
      'req/s',
      '≥',
      1500,
    ),
    target(
      'auth_non2xx',
      'Auth path: non-2xx + errors',
      auth ? auth.non_2xx + auth.errors + auth.timeouts : null,
      '',
      '=',
      0,
    ),
  ];
}

/**
 * The API's and OpenSearch's CPU over the sequential query phase ÷ the queries it sent (its 10 warm-up queries
 * included: the phase's CPU counts them too). OpenSearch's CPU is the shared server's, other clients' included.
 */
function cpuPerQuery(result: Pick<BenchResult, 'resources' | 'query'>): number | null {
  const phase = result.resources.phases['query, sequential'];
  const sent = result.query ? result.query.sequential.queries + (result.query.sequential.warmup_queries ?? 0) : 0;
  if (!phase || sent === 0) return null;
  const used = (phase.cpu_ms.api ?? 0) + (phase.cpu_ms.opensearch ?? 0);
  return Math.round((used / sent) * 10) / 10;
}

export function renderMarkdown(result: BenchResult): string {
  const m = result.machine;
  const o = result.options;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  push(`# kbqa benchmark — ${result.started_at}`, '');
  const flags = [...(result.quick ? ['--quick'] : []), ...(result.only ? [`--only ${result.only}`] : [])];
  if (result.only) {
    push(
      `> **One phase** (\`--only ${result.only}\`): only this phase ran, in the bench's own API process, and only its targets are judged;`,
      '> the other sections are absent. `npm run bench` runs every phase.',
      '',
    );
  }
  if (result.quick && !result.only) {
    push(
      '> **Quick run** (`--quick`): smaller document subset, fewer queries, smaller scale steps, a smaller "big" document,',
      '> fewer chunks per refresh policy and a shorter auth run. Its figures check that the bench works end to end;',
      '> compare full runs against the targets.',
      '',
    );
  }
  push(
    `Command: \`npm run bench${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}\` · one run, ${((Date.parse(result.finished_at) - Date.parse(result.started_at)) / 1000).toFixed(0)} s · raw data: [${result.stamp}.json](${result.stamp}.json)`,
    '',
    `- **Own database:** the bench and its API process used a fresh MongoDB database, \`${result.database}\`, on the configured server`,
    "  (`KBQA_MONGODB_URL` with its database name replaced), dropped at the end: FerretDB's SQLite backend scans whole tables even for",
    '  _id lookups, so the shared `kbqa` database, grown by every test run, would slow every request of the bench.',
    `- **Model pool:** the API process${result.ingest ? ' and the raw-embedder baseline both' : ''} ran \`KBQA_MODEL_WORKERS=${o.model_workers}\` worker threads with`,
    `  \`KBQA_EMBED_THREADS=${o.embed_threads}\` ONNX intra-op thread(s) each, \`KBQA_EMBED_BATCH_SIZE=${o.embed_batch_size}\` passages per task;`,
    `  \`KBQA_REFRESH_INTERVAL_MS=${o.refresh_interval_ms}\` (group-commit refresher).`,
    "- **Shared stack:** OpenSearch and FerretDB are the machine's shared servers; their CPU and the chunk index's `_stats` include",
    '  whatever other clients did meanwhile.',
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${m.cpu_model}, ${m.cores} cores |`,
    `| memory | ${m.memory_gib} GiB |`,
    `| OS | ${m.os} |`,
    `| Node | ${m.node} |`,
    `| OpenSearch | ${m.opensearch} (Lucene ${m.lucene}), single node |`,
    `| FerretDB | ${m.ferretdb} (MongoDB wire ${m.mongodb_wire_version}, SQLite backend) |`,
    `| load average (1/5/15 min) at start → end | ${m.load_average_at_start.join(' / ')} → ${m.load_average_at_end.join(' / ')} |`,
    `| chunks already in the shared index at start | ${m.chunks_in_shared_index_at_start} |`,
    ...(m.chunk_index ? [`| chunk index (alias → index) | \`${m.chunk_alias}\` → \`${m.chunk_index}\` |`] : []),
    '',
    ...(m.load_average_at_start[0] > m.cores
      ? [
          `**The machine was busy:** the 1-minute load average at start was ${m.load_average_at_start[0]} on ${m.cores} cores (other jobs ran`,
          'alongside), so every figure here is lower than the same code reaches on an idle machine.',
          '',
        ]
      : []),
    'The API under test is a child process the bench starts itself (`node service/main.ts`, `KBQA_LOG_LEVEL=warn`);',
    'autocannon and the sequential client run in the bench process on the same machine.',
    '',
    '## Targets',
    '',
    '| figure | measured | target | result | miss by |',
    '|---|---:|---|---|---|',
  );
  for (const t of result.targets) {
    push(
      `| ${t.label} | ${fmt(t.value, digitsFor(t.unit))}${t.unit && t.value !== null ? ` ${t.unit}` : ''} | ${t.target} | ${mark(t.pass)} | ${t.miss_by ?? ''} |`,
    );
  }

  const ocr = result.ocr;
  if (ocr) {
    push('', '## OCR — the committed scans, pages per second', '');
    if ('error' in ocr) {
      push(`**The phase failed:** ${ocr.error}`);
    } else {
      push(
        ocr.method,
        '',
        `Scanned PDF pages: **${ocr.pdf_pages_per_second} pages/s**; images: **${ocr.image_pages_per_second} pages/s**.`,
        '',
        '| file | pages | s | pages/s | confidence |',
        '|---|---:|---:|---:|---|',
      );
      for (const run of [...ocr.pdfs, ...ocr.images])
        push(
          `| ${run.file} | ${run.pages} | ${(run.ms / 1000).toFixed(1)} | ${run.pages_per_second} | ${run.confidence.join(', ')} |`,
        );
    }
  }

  const pdf = result.pdf_ingest;
  if (pdf) {
    push('', '## PDF ingest — a 100-page text PDF against the same text as plain text', '');
    if ('error' in pdf) {
      push(`**The phase failed:** ${pdf.error}`);
    } else {
      push(
        pdf.method,
        '',
        '| path | runs | bytes | chunks indexed (split) | median ms to ready | min – max | polled median | until embedding (median ms) | 202 after (median ms) | chunks/s | ms per chunk |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      );
      for (const [name, run] of [
        ['PDF, web upload', pdf.pdf],
        ['plain text, /api/v1', pdf.text],
      ] as const) {
        push(
          `| ${name} | ${run.runs} | ${run.bytes} | ${run.chunks} (${run.total_chunks}) | ${fmt(run.median_ms, 0)} | ${fmt(run.min_ms, 0)} – ${fmt(run.max_ms, 0)} | ${fmt(run.median_polled_ms, 0)} | ${fmt(run.median_until_embedding_ms, 0)} | ${fmt(run.median_accepted_ms, 0)} | ${fmt(run.chunks_per_s)} | ${fmt(run.ms_per_chunk, 2)} |`,
        );
      }
      push(
        '',
        `PDF ÷ text, median time to ready = **${fmt(pdf.ratio, 2)}** (target ≤ ${PDF_RATIO_TARGET}: extraction adds at most ${Math.round((PDF_RATIO_TARGET - 1) * 100)} %); per chunk: ${fmt(pdf.per_chunk_ratio, 2)}.`,
        `The chunk counts differ because a PDF is split page by page (no chunk crosses a page), the text as one document. Reading the PDF`,
        `(upload into GridFS, extraction in the worker, splitting per page) before embedding started took ≈ ${fmt(pdf.extraction_ms, 0)} ms more than the text's`,
        `splitting (median until embedding, PDF − text: ${pdf.extraction_share !== null ? `${(pdf.extraction_share * 100).toFixed(0)} %` : 'n/a'} of the PDF's median).`,
        '',
        '| run | path | ms to ready | polled | until embedding | 202 after | chunks | pages |',
        '|---|---|---:|---:|---:|---:|---:|---:|',
      );
      let measured = 0;
      pdf.runs.forEach((run, index) => {
        if (!run.warmup) measured += 1;
        const label = run.warmup ? `warm-up ${Math.floor(index / 2) + 1}` : `${Math.ceil(measured / 2)}`;
        push(
          `| ${label} | ${run.kind} | ${run.ms} | ${run.polled_ms} | ${run.until_embedding_ms ?? 'n/a'} | ${run.accepted_ms} | ${run.chunks} | ${run.pages ?? '—'} |`,
        );
      });
    }
  }

  push(...renderCliStartup(result.cli_startup));
  push(...renderQueryBurst(result.query_burst));
  push(...renderConversationTurns(result.conversation_turns));

  if (result.ingest) {
    const ing = result.ingest;
    const raw = ing.raw_embedder;
    const cpuPerChunk = (work: IngestRun['opensearch']) => fmt(work?.cpu_ms_per_chunk, 2);
    push(
      '',
      `## Ingest — ${ing.dataset}, first ${ing.documents} corpus documents, each run into a fresh KB`,
      '',
      '| run | documents | chunks | seconds | documents/s | chunks/s | request p50 / p95 (ms) | OpenSearch CPU ms/chunk | net of idle (idle %) | refreshes | merges | segments before → after |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const run of ing.api) {
      const os = run.opensearch;
      push(
        `| API, concurrency ${run.concurrency} | ${run.documents} | ${run.chunks} | ${fmt(run.seconds, 2)} | ${fmt(run.documents_per_s, 2)} | ${fmt(run.chunks_per_s, 2)} | ${fmt(run.request_p50_ms)} / ${fmt(run.request_p95_ms)} | ${cpuPerChunk(os)} | ${fmt(os?.net_cpu_ms_per_chunk, 2)} (${fmt(os?.idle_cpu_percent)} %) | ${os?.index.external_refreshes ?? 'n/a'} | ${os?.index.merges ?? 'n/a'} | ${os ? `${os.index.segments_before} → ${os.index.segments_after}` : 'n/a'} |`,
      );
    }
    for (const run of [raw, ing.raw_embedder_with_sentences]) {
      if (!run) continue;
      push(
        `| raw embedder (rag.embedSegments in the bench process, ${run.concurrency} documents in flight, API idle), sentence vectors ${run.sentence_vectors ?? 'on'} | ${run.documents} | ${run.chunks} | ${fmt(run.seconds, 2)} | ${fmt(run.documents / run.seconds, 2)} | ${fmt(run.chunks_per_s, 2)} | — | — | — | — | — | — |`,
      );
    }
    push(
      '',
      `API@4 ÷ raw without sentence vectors = **${fmt(ing.api4_to_raw_ratio, 2)}** (target ≥ 0.85: sentence vectors cost at most 15 % of ingestion). The raw embedder ran on a model pool of the API\'s size (${raw.workers} workers × ${raw.threads_per_worker} ONNX thread(s)),`,
      `with ${raw.concurrency} documents\' \`embedSegments\` in flight at once, as the API\'s ${raw.concurrency} concurrent ingests keep its pool busy. Splitting those documents`,
      `(through the same pool, ${raw.concurrency} at a time) took ${fmt(raw.split_seconds, 2)} s and is not in the raw figure; the API\'s figure includes its splitting.`,
      '',
      "OpenSearch CPU per chunk (the judged figure): OpenSearch's utime + stime from the first request of the run until no merge ran any",
      'more after its last (the merges a run leaves behind are its cost), ÷ the chunks ingested. "Net of idle" subtracts OpenSearch\'s idle',
      'rate (sampled for 3 s just before, with the bench and its API quiet) over the same span: on a shared, busy stack it is the better',
      "estimate of the ingest's own cost. Refreshes (external: requested and scheduled, index.refresh_interval 1 s), merges and segments:",
      "the chunk index's `_stats` (primaries) over the same span, other clients' included.",
    );
    for (const run of ing.api) {
      if (run.opensearch && !run.opensearch.merges_settled)
        push(
          '',
          `(concurrency ${run.concurrency}: merges were still running after ${run.opensearch.merge_wait_seconds} s; its CPU figure stops there.)`,
        );
    }
  }

  if (result.refresh_policies) {
    push('', '## Refresh policy — making chunks searchable, bulk indexing alone (no API, no embedder)', '');
    const rp = result.refresh_policies;
    if ('error' in rp) {
      push(`**The refresh-policy comparison failed:** ${rp.error}`);
    } else {
      push(
        rp.method,
        '',
        '| policy | documents | chunks | seconds | chunks/s | document searchable p50 / p95 (ms) | OpenSearch CPU ms/chunk | net of idle (idle %) | refreshes | merges (ms) | segments before → after |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      );
      for (const run of rp.runs) {
        const os = run.opensearch;
        const policy =
          run.group_commit_refreshes !== undefined
            ? `no refresh per bulk + ${run.policy}${run.service_setting ? ' (the service: KBQA_REFRESH_INTERVAL_MS)' : ''}`
            : `\`${run.policy}\` on each document\'s bulk`;
        const refreshes =
          run.group_commit_refreshes !== undefined
            ? `${run.group_commit_refreshes} by the refresher (index: ${os.index.external_refreshes})`
            : `${os.index.external_refreshes}`;
        push(
          `| ${policy} | ${run.documents} | ${run.chunks} | ${fmt(run.seconds, 2)} | ${fmt(run.chunks_per_s)} | ${fmt(run.document_p50_ms)} / ${fmt(run.document_p95_ms)} | ${fmt(os.cpu_ms_per_chunk, 2)} | ${fmt(os.net_cpu_ms_per_chunk, 2)} (${fmt(os.idle_cpu_percent)} %) | ${refreshes} | ${os.index.merges} (${os.index.merge_ms}) | ${os.index.segments_before} → ${os.index.segments_after} |`,
        );
      }
      push(
        '',
        "Refreshes are the index's external refreshes over the span (requested and scheduled ones, other clients' included), or the",
        'bench refresher\'s exact count. "Net of idle" subtracts OpenSearch\'s idle rate, sampled for 3 s just before, over the span.',
      );
    }
  }

  push(
    '',
    '## Resources per phase',
    '',
    result.resources.method,
    '',
    `API start-up peak RSS (model pool loaded, ready): ${fmt(result.resources.startup_peak_mb)} MB. Highest of the run: **${fmt(result.resources.api_peak_rss_mb)} MB** (${result.resources.api_peak_rss_phase}).`,
    '',
    '| phase | seconds | API peak RSS (MB) | CPU: API | OpenSearch | FerretDB | bench |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  const percent = (value: number | undefined) => (value === undefined ? 'n/a' : `${value} %`);
  for (const [phase, resources] of Object.entries(result.resources.phases)) {
    const cpu = resources.cpu_percent;
    push(
      `| ${phase} | ${fmt(resources.seconds)} | ${fmt(resources.api_peak_rss_mb ?? resources.api_sampled_max_rss_mb)} | ${percent(cpu.api)} | ${percent(cpu.opensearch)} | ${percent(cpu.ferretdb)} | ${percent(cpu.bench)} |`,
    );
  }

  if (result.query) {
    const q = result.query;
    const seq = q.sequential;
    const conc = q.concurrent;
    push(
      '',
      `## Query — SciFact test queries, default model, KB filled at concurrency 4 (${q.chunks_in_kb} chunks), default max_results`,
      '',
      '| run | queries | failures / non-2xx | queries/s | p50 | p90 | p95 | p99 | max (ms) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      `| sequential (fetch, client-side) | ${seq.queries} | ${seq.failures} | ${fmt(seq.queries_per_s)} | ${fmt(seq.latency.p50_ms)} | ${fmt(seq.latency.p90_ms)} | ${fmt(seq.latency.p95_ms)} | ${fmt(seq.latency.p99_ms)} | ${fmt(seq.latency.max_ms)} |`,
      `| autocannon, ${conc.connections} connections | ${conc.requests} | ${conc.non_2xx + conc.errors + conc.timeouts} | ${fmt(conc.requests_per_s)} | ${fmt(conc.latency.p50_ms)} | ${fmt(conc.latency.p90_ms)} | ${fmt(conc.latency.p95_ms)} | ${fmt(conc.latency.p99_ms)} | ${fmt(conc.latency.max_ms)} |`,
      '',
      `Throughput at ${conc.connections} connections ÷ sequential = **${fmt(q.throughput_ratio, 2)}** (target ≥ 1.7). Both throughputs are completed queries ÷ wall-clock`,
      `seconds of their run (sequential: ${fmt(seq.queries_per_s)} q/s; 1000 ÷ mean latency would give ${fmt(1000 / seq.latency.mean_ms)} q/s).`,
      '',
      'Server-Timing stages (ms); `other` = client latency − the stages (HTTP, auth, KB lookup, JSON):',
      '',
      '| stage | sequential p50 | sequential p95 | 8 connections p50 |',
      '|---|---:|---:|---:|',
    );
    for (const [stage, timing] of Object.entries(seq.stages)) {
      push(`| ${stage} | ${fmt(timing.p50_ms)} | ${fmt(timing.p95_ms)} | ${fmt(conc.stages_p50_ms?.[stage])} |`);
    }

    push('', '## Query latency while a big document ingests', '');
    const during = q.during_ingest;
    if ('error' in during) {
      push(`**The phase failed:** ${during.error}`);
    } else {
      const d = during.document;
      push(
        `One document of ${(d.bytes / 1024 / 1024).toFixed(2)} MiB (${d.sources} corpus texts of the dataset joined by blank lines) was posted with \`Prefer: respond-async\``,
        `into a KB of its own; the same ${during.idle.queries} sequential queries (against the query KB) ran first idle, then over and over for as long as`,
        `\`GET /api/v1/documents/{id}\` said queued or processing. The document ended **${d.status}**${d.error ? ` (${d.error})` : ''}: ${d.chunks} chunks in ${fmt(d.seconds)} s (${fmt(d.chunks_per_s)} chunks/s, POST to ready).`,
        '',
        '| run | queries | failures | p50 | p90 | p95 | p99 | max (ms) | Server-Timing p50 / p95 (ms) |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      );
      for (const [name, run] of [
        ['idle', during.idle],
        ['during the ingest', during.during],
      ] as const) {
        const stages = Object.entries(run.stages)
          .map(([stage, timing]) => `${stage} ${fmt(timing.p50_ms)} / ${fmt(timing.p95_ms)}`)
          .join(', ');
        push(
          `| ${name} | ${run.queries} | ${run.failures} | ${fmt(run.latency.p50_ms)} | ${fmt(run.latency.p90_ms)} | ${fmt(run.latency.p95_ms)} | ${fmt(run.latency.p99_ms)} | ${fmt(run.latency.max_ms)} | ${stages} |`,
        );
      }
      push(
        '',
        `p95 during ÷ idle = **${fmt(during.p95_ratio, 2)}** (target ≤ 2); p50 during ÷ idle = ${fmt(during.p50_ratio, 2)}.`,
      );
    }
  }

  if (result.scale) {
    const scale = result.scale;
    push('', '## Scale — query latency as the KB grows', '', scale.method, '');
    if (scale.error) push(`**The scale step failed:** ${scale.error}`, '');
    if (scale.steps.length > 0) {
      push(
        '| chunks in the KB | load time (s) | loaded chunks/s | merges after (s) | index: chunks / segments | search stage p50 / p95 (ms) | OpenSearch took p50 (ms) | API queries | API p50 | p95 | p99 (ms) | Server-Timing search p50 (ms) |',
        '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      );
      for (const step of scale.steps) {
        const stage = step.search_stage ? apiVariant(step.search_stage) : undefined;
        push(
          `| ${step.chunks} | ${fmt(step.load.seconds)} | ${fmt(step.load.chunks_per_s, 0)} | ${fmt(step.merge_wait_seconds)} | ${step.index.documents} / ${step.index.segments} | ${fmt(stage?.client_p50_ms)} / ${fmt(stage?.client_p95_ms)} | ${fmt(stage?.took_p50_ms)} | ${step.queries.queries} | ${fmt(step.queries.latency.p50_ms)} | ${fmt(step.queries.latency.p95_ms)} | ${fmt(step.queries.latency.p99_ms)} | ${fmt(step.queries.stages.search?.p50_ms)} |`,
        );
      }
      push(
        '',
        `Search stage p50 ratio (direct hybridSearch, client side) = **${fmt(scale.search_stage_p50_ratio, 2)}** (target ≤ 1.5); by OpenSearch\'s \`took\`: ${fmt(scale.search_stage_took_p50_ratio, 2)};`,
        `through the API: whole query ${fmt(scale.p50_ratio, 2)}, Server-Timing search stage ${fmt(scale.search_p50_ratio, 2)}.`,
      );
      if (scale.neighbours) pushNeighbours(push, scale.neighbours, scale.steps[0]);
      const withStages = scale.steps.filter((step) => step.search_stage);
      if (withStages.length > 0) {
        const names = Object.keys(withStages[0].search_stage?.variants ?? {});
        push(
          '',
          `Where the search stage\'s time goes (size ${withStages[0].search_stage?.size}, same filter on the scale KB; p50 client / took, ms):`,
          '',
          `| variant | ${withStages.map((step) => `${step.chunks} chunks`).join(' | ')} | ratio (client) |`,
          `|---|${withStages.map(() => '---:').join('|')}|---:|`,
        );
        for (const name of names) {
          const cells = withStages.map((step) => {
            const timing = step.search_stage?.variants[name];
            return `${fmt(timing?.client_p50_ms)} / ${fmt(timing?.took_p50_ms)}`;
          });
          const first = withStages[0].search_stage?.variants[name]?.client_p50_ms;
          const last = withStages[withStages.length - 1].search_stage?.variants[name]?.client_p50_ms;
          push(`| ${name} | ${cells.join(' | ')} | ${first && last ? fmt(last / first, 2) : 'n/a'} |`);
        }
      }
    }
  }

  if (result.auth) {
    push('', '## Auth path — autocannon GET /api/v1/me', '');
    if ('error' in result.auth && result.auth.error) {
      push(`**The auth step failed:** ${result.auth.error}`);
    } else {
      const auth = result.auth as LoadResult;
      push(
        '| connections | seconds | requests | req/s | non-2xx | errors | timeouts | p50 | p99 (ms) |',
        '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        `| ${auth.connections} | ${fmt(auth.seconds, 2)} | ${auth.requests} | ${fmt(auth.requests_per_s)} | ${auth.non_2xx} | ${auth.errors} | ${auth.timeouts} | ${fmt(auth.latency.p50_ms)} | ${fmt(auth.latency.p99_ms)} |`,
      );
    }
  }

  if (!result.only) {
    push('', '## Retrieval quality — nDCG@10 per mode', '');
    if (result.eval) {
      const e = result.eval;
      push(
        `From the newest \`kbqa eval beir\` result, [${e.file}](${e.file}) (${e.dataset}: ${e.documents} documents, ${e.queries} queries, finished ${e.finished_at}); not measured by this run.`,
        '',
        '| mode | nDCG@10 | Recall@10 | Recall@50 | MRR@10 |',
        '|---|---:|---:|---:|---:|',
      );
      for (const [mode, metrics] of Object.entries(e.modes)) {
        push(
          `| ${mode} | ${fmt(metrics.ndcg_at_10, 3)} | ${fmt(metrics.recall_at_10, 3)} | ${fmt(metrics.recall_at_50, 3)} | ${fmt(metrics.mrr_at_10, 3)} |`,
        );
      }
    } else {
      push(
        'No `bench/results/eval-*.json` was present, so no nDCG figures: run `npx kbqa eval beir ../shared/datasets/scifact --ablate` first.',
      );
    }
  }

  if (Object.keys(result.charts).length > 0) {
    push('', '## Charts', '');
    for (const [name, file] of Object.entries(result.charts)) push(`![${name}](${file})`, '');
  }
  return `${lines.join('\n')}\n`;
}
