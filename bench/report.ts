// The run's JSON shape, its targets, and the markdown summary.
import type { LoadResult } from './load.ts';
import type { MachineInfo } from './machine.ts';
import type { PhaseResources } from './phases.ts';
import type { IngestRun, RawEmbedRun } from './ingest.ts';
import type { SequentialResult } from './sequential.ts';

export interface ScaleStep {
  chunks: number;
  load: { chunks: number; seconds: number; chunks_per_s: number; refresh_seconds: number };
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
  target: string;
  pass: boolean | null;
}

export interface BenchResult {
  started_at: string;
  finished_at: string;
  stamp: string;
  quick: boolean;
  options: Record<string, number | boolean | string>;
  machine: MachineInfo & { load_average_at_end: number[] };
  ingest: {
    dataset: string;
    documents: number;
    api: IngestRun[];
    raw_embedder: RawEmbedRun;
    api4_to_raw_ratio: number;
  };
  resources: {
    method: string;
    startup_peak_mb: number | null;
    ingest_peak_rss_mb: number;
    phases: Record<string, PhaseResources>;
  };
  query: {
    knowledge_base_id: string;
    chunks_in_kb: number;
    sequential: SequentialResult;
    concurrent: LoadResult;
  };
  scale: { method: string; knowledge_base_id: string; templates: number; steps: ScaleStep[]; p50_ratio: number | null; search_p50_ratio?: number; error?: string };
  auth: (LoadResult & { error?: undefined }) | { error: string };
  eval: EvalSummary | null;
  targets: Target[];
  charts: Record<string, string>;
}

const mark = (pass: boolean | null) => (pass === null ? '—' : pass ? '**PASS**' : '**MISS**');
const fmt = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);

export function buildTargets(result: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'>): Target[] {
  const seq = result.query.sequential.latency;
  const conc = result.query.concurrent;
  const ingestPeak = result.resources.ingest_peak_rss_mb;
  const auth = 'error' in result.auth && result.auth.error ? null : (result.auth as LoadResult);
  const scaleSteps = result.scale.steps;
  const scaleLabel = scaleSteps.length === 2 ? `p50@${scaleSteps[1].chunks / 1000}k ÷ p50@${scaleSteps[0].chunks / 1000}k` : 'p50 ratio';
  const target = (id: string, label: string, value: number | null, unit: string, text: string, ok: (value: number) => boolean): Target => ({
    id,
    label,
    value,
    unit,
    target: text,
    pass: value === null || !Number.isFinite(value) ? null : ok(value),
  });
  return [
    target('ingest_ratio', 'Ingest: API@4 ÷ raw embedder (chunks/s)', result.ingest.api4_to_raw_ratio, '×', '≥ 0.80', (v) => v >= 0.8),
    target('ingest_peak_rss', 'Ingest: API peak RSS', ingestPeak, 'MB', '≤ 600 MB', (v) => v <= 600),
    target('query_p50', 'Query (sequential): p50', seq.p50_ms, 'ms', '≤ 50 ms', (v) => v <= 50),
    target('query_p95', 'Query (sequential): p95', seq.p95_ms, 'ms', '≤ 120 ms', (v) => v <= 120),
    target('query_qps_c8', 'Query (8 connections): throughput', conc.non_2xx + conc.errors > 0 ? null : conc.requests_per_s, 'queries/s', '≥ 40 /s', (v) => v >= 40),
    target('scale_ratio', `Scale: ${scaleLabel}`, result.scale.p50_ratio, '×', '≤ 2.0', (v) => v <= 2),
    target('auth_rps', 'Auth path (GET /me, 32 conn.): throughput', auth ? auth.requests_per_s : null, 'req/s', '≥ 1500 /s', (v) => v >= 1500),
    target('auth_non2xx', 'Auth path: non-2xx + errors', auth ? auth.non_2xx + auth.errors + auth.timeouts : null, '', '= 0', (v) => v === 0),
  ];
}

export function renderMarkdown(result: BenchResult): string {
  const m = result.machine;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  push(`# kbqa benchmark — ${result.started_at}`, '');
  if (result.quick) {
    push(
      '> **Quick run** (`--quick`): smaller document subset, fewer queries, smaller scale steps and a shorter auth run.',
      '> Its figures check that the bench works end to end; compare full runs against the targets.',
      '',
    );
  }
  push(
    `Command: \`npm run bench${result.quick ? ' -- --quick' : ''}\` · one run, ${((Date.parse(result.finished_at) - Date.parse(result.started_at)) / 1000).toFixed(0)} s · raw data: [${result.stamp}.json](${result.stamp}.json)`,
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
    '| figure | measured | target | result |',
    '|---|---:|---|---|',
  );
  for (const t of result.targets) {
    const digits = t.unit === '×' ? 2 : t.unit === '' ? 0 : 1;
    push(`| ${t.label} | ${fmt(t.value, digits)}${t.unit && t.value !== null ? ` ${t.unit}` : ''} | ${t.target} | ${mark(t.pass)} |`);
  }

  const ing = result.ingest;
  push(
    '',
    `## Ingest — ${ing.dataset}, first ${ing.documents} corpus documents, each run into a fresh KB`,
    '',
    '| run | documents | chunks | seconds | documents/s | chunks/s | request p50 / p95 (ms) |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const run of ing.api) {
    push(`| API, concurrency ${run.concurrency} | ${run.documents} | ${run.chunks} | ${fmt(run.seconds, 2)} | ${fmt(run.documents_per_s, 2)} | ${fmt(run.chunks_per_s, 2)} | ${fmt(run.request_p50_ms)} / ${fmt(run.request_p95_ms)} |`);
  }
  const raw = ing.raw_embedder;
  push(
    `| raw embedder (rag.embedSegments in the bench process, API idle) | ${raw.documents} | ${raw.chunks} | ${fmt(raw.seconds, 2)} | ${fmt(raw.documents / raw.seconds, 2)} | ${fmt(raw.chunks_per_s, 2)} | — |`,
    '',
    `API@4 ÷ raw = **${fmt(ing.api4_to_raw_ratio, 2)}** (target ≥ 0.80). Splitting those documents took ${fmt(raw.split_seconds, 2)} s (not in the raw figure).`,
    '',
    '## Resources per phase',
    '',
    result.resources.method,
    '',
    `API start-up peak RSS (embedder loaded, ready): ${fmt(result.resources.startup_peak_mb)} MB.`,
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
    'Server-Timing stages (ms); `other` = client latency − the stages (HTTP, auth, KB lookup, JSON):',
    '',
    '| stage | sequential p50 | sequential p95 | 8 connections p50 |',
    '|---|---:|---:|---:|',
  );
  for (const [stage, timing] of Object.entries(seq.stages)) {
    push(`| ${stage} | ${fmt(timing.p50_ms)} | ${fmt(timing.p95_ms)} | ${fmt(conc.stages_p50_ms?.[stage])} |`);
  }

  const scale = result.scale;
  push('', '## Scale — query latency as the KB grows', '', scale.method, '');
  if (scale.error) push(`**The scale step failed:** ${scale.error}`, '');
  if (scale.steps.length > 0) {
    push(
      '| chunks in the KB | load time (s) | loaded chunks/s | queries | p50 | p95 | p99 (ms) | Server-Timing search p50 (ms) |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const step of scale.steps) {
      push(
        `| ${step.chunks} | ${fmt(step.load.seconds)} | ${fmt(step.load.chunks_per_s, 0)} | ${step.queries.queries} | ${fmt(step.queries.latency.p50_ms)} | ${fmt(step.queries.latency.p95_ms)} | ${fmt(step.queries.latency.p99_ms)} | ${fmt(step.queries.stages.search?.p50_ms)} |`,
      );
    }
    push('', `p50 ratio = **${fmt(scale.p50_ratio, 2)}** (target ≤ 2.0); the search stage alone (Server-Timing p50): ${fmt(scale.search_p50_ratio, 2)}.`);
  }

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
      push(`| ${mode} | ${fmt(metrics.ndcg_at_10, 3)} | ${fmt(metrics.recall_at_10, 3)} | ${fmt(metrics.recall_at_50, 3)} | ${fmt(metrics.mrr_at_10, 3)} |`);
    }
  } else {
    push('No `bench/results/eval-*.json` was present, so no nDCG figures: run `npx kbqa eval beir ../shared/datasets/scifact --ablate` first.');
  }

  push('', '## Charts', '');
  for (const [name, file] of Object.entries(result.charts)) push(`![${name}](${file})`, '');
  return `${lines.join('\n')}\n`;
}
