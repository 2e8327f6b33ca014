// What a bench run leaves: bench/results/<stamp>.{json,md} and its SVG charts (latest.* for a whole run), the
// targets table on stdout, and the newest `kbqa eval beir` result it reports beside its own figures.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ingestChart,
  latencyHistogramChart,
  latencyPercentilesChart,
  ndcgChart,
  renderSvg,
  scaleChart,
} from './charts.ts';
import type { IngestRun, RawEmbedRun } from './ingest.ts';
import type { LoadResult } from './load.ts';
import { options, quick, resultsDir } from './options.ts';
import { log } from './progress.ts';
import { renderMarkdown, type BenchResult, type EvalSummary } from './report.ts';
import { apiVariant } from './searchStage.ts';
import type { SequentialResult } from './sequential.ts';
import type { BenchRun } from './setUp.ts';

export type Charts = Array<[string, Parameters<typeof renderSvg>[0]]>;

export function newestEvalResult(): EvalSummary | null {
  if (!existsSync(resultsDir)) return null;
  const files = readdirSync(resultsDir)
    .filter((name) => /^eval-.*\.json$/.test(name))
    .map((name) => ({ name, mtime: statSync(join(resultsDir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { name } of files) {
    try {
      const parsed = JSON.parse(readFileSync(join(resultsDir, name), 'utf8')) as Omit<EvalSummary, 'file'>;
      if (parsed.modes && Object.keys(parsed.modes).length > 0) {
        return {
          file: name,
          dataset: parsed.dataset,
          documents: parsed.documents,
          queries: parsed.queries,
          finished_at: parsed.finished_at,
          modes: parsed.modes,
        };
      }
    } catch {
      // a half-written or foreign file: try the next one
    }
  }
  return null;
}

/**
 * Renders the charts and writes <stamp>.{json,md}, and latest.{json,md} for a whole run (a run of one phase, --only,
 * leaves latest.* to the last whole run: docs/quality-and-speed.md links it for every figure); prints the targets table.
 */
export async function writeResults(
  result: BenchResult,
  charts: Array<[string, Parameters<typeof renderSvg>[0]]>,
): Promise<void> {
  mkdirSync(resultsDir, { recursive: true });
  for (const [name, spec] of charts) {
    const file = `${result.stamp}-${name}.svg`;
    try {
      writeFileSync(join(resultsDir, file), await renderSvg(spec));
      result.charts[name] = file;
    } catch (error) {
      log(`chart ${name} could not be rendered: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  result.finished_at = new Date().toISOString();
  const json = `${JSON.stringify(result, null, 2)}\n`;
  const markdown = renderMarkdown(result);
  writeFileSync(join(resultsDir, `${result.stamp}.json`), json);
  writeFileSync(join(resultsDir, `${result.stamp}.md`), markdown);
  if (!result.only) {
    writeFileSync(join(resultsDir, 'latest.json'), json);
    writeFileSync(join(resultsDir, 'latest.md'), markdown);
  }
  log(
    `wrote bench/results/${result.stamp}.{json,md}${result.only ? ' (latest.* left to the last whole run)' : ', latest.{json,md}'} and ${Object.keys(result.charts).length} charts`,
  );

  console.log('');
  console.log('| figure | measured | target | result |');
  console.log('|---|---:|---|---|');
  for (const t of result.targets) {
    const value = t.value === null ? 'n/a' : `${t.value}${t.unit ? ` ${t.unit}` : ''}`;
    console.log(
      `| ${t.label} | ${value} | ${t.target} | ${t.pass === null ? '—' : t.pass ? 'PASS' : `MISS, ${t.miss_by}`} |`,
    );
  }
  console.log('');
}

/** The charts of a whole run: latency percentiles and histogram, ingest throughput, scale, and the eval's nDCG. */
export function reportCharts(
  bench: Pick<BenchRun, 'stamp' | 'machine'>,
  result: BenchResult,
  measured: {
    sequential: SequentialResult;
    concurrent: LoadResult;
    ingestRuns: IngestRun[];
    raw: RawEmbedRun;
    scale: NonNullable<BenchResult['scale']>;
  },
): Charts {
  const { stamp, machine } = bench;
  const { sequential, concurrent, ingestRuns, raw, scale } = measured;
  const subtitle = `${quick ? 'quick run · ' : ''}${stamp} · ${machine.cores} cores · ${machine.opensearch}`;
  const charts: Array<[string, Parameters<typeof renderSvg>[0]]> = [
    [
      'latency',
      latencyPercentilesChart(
        [
          ...(['p50', 'p90', 'p95', 'p99'] as const).map((p) => ({
            run: 'sequential',
            percentile: p,
            ms: sequential.latency[`${p}_ms`],
          })),
          ...(['p50', 'p90', 'p95', 'p99'] as const).map((p) => ({
            run: `${options.loadConnections} connections`,
            percentile: p,
            ms: concurrent.latency[`${p}_ms`],
          })),
        ],
        subtitle,
      ),
    ],
    [
      'latency-histogram',
      latencyHistogramChart(
        [
          ...sequential.latencies_ms.map((ms) => ({ run: 'sequential', ms })),
          ...concurrent.latencies_ms.map((ms) => ({ run: `${options.loadConnections} connections`, ms })),
        ],
        subtitle,
      ),
    ],
    [
      'ingest',
      ingestChart(
        [
          ...ingestRuns.map((run) => ({ run: `API, concurrency ${run.concurrency}`, chunks_per_s: run.chunks_per_s })),
          { run: `raw embedder, ${raw.concurrency} in flight`, chunks_per_s: raw.chunks_per_s },
        ],
        subtitle,
      ),
    ],
  ];
  if (scale.steps.length > 0) {
    charts.push([
      'scale',
      scaleChart(
        scale.steps.flatMap((step) => {
          const stage = step.search_stage ? apiVariant(step.search_stage) : undefined;
          return [
            { chunks: step.chunks.toLocaleString('en-US'), percentile: 'API p50', ms: step.queries.latency.p50_ms },
            { chunks: step.chunks.toLocaleString('en-US'), percentile: 'API p95', ms: step.queries.latency.p95_ms },
            ...(stage
              ? [
                  {
                    chunks: step.chunks.toLocaleString('en-US'),
                    percentile: 'search stage p50',
                    ms: stage.client_p50_ms,
                  },
                ]
              : []),
          ];
        }),
        `${subtitle} · synthetic (perturbed copies)`,
      ),
    ]);
  }
  if (result.eval) {
    const evalResult = result.eval;
    charts.push([
      'ndcg',
      ndcgChart(
        evalResult.dataset,
        Object.entries(evalResult.modes).map(([mode, metrics]) => ({ mode, ndcg_at_10: metrics.ndcg_at_10 })),
        `${evalResult.file} · ${evalResult.documents} documents, ${evalResult.queries} queries`,
      ),
    ]);
  }
  return charts;
}
