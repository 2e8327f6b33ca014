// SVG charts rendered headlessly with Vega-Lite → Vega (no browser, no canvas: the 'none' renderer plus toSVG()).
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const FONT = { config: { font: 'Helvetica, Arial, sans-serif', view: { stroke: null } } } as const;

export function ndcgChart(
  dataset: string,
  modes: Array<{ mode: string; ndcg_at_10: number }>,
  subtitle: string,
): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title: { text: `${dataset} nDCG@10 by retrieval mode`, subtitle },
    width: 360,
    height: 220,
    data: { values: modes },
    encoding: {
      x: { field: 'mode', type: 'nominal', sort: null, title: 'mode', axis: { labelAngle: 0 } },
      y: { field: 'ndcg_at_10', type: 'quantitative', title: 'nDCG@10', scale: { domain: [0, 1] } },
    },
    layer: [
      { mark: { type: 'bar', color: '#4c78a8' } },
      {
        mark: { type: 'text', dy: -8 },
        encoding: { text: { field: 'ndcg_at_10', type: 'quantitative', format: '.3f' } },
      },
    ],
    ...FONT,
  };
}

/** Grouped bars: p50/p90/p95/p99 per run, with the sequential targets as rules. */
export function latencyPercentilesChart(
  rows: Array<{ run: string; percentile: string; ms: number }>,
  subtitle: string,
): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title: { text: 'Query latency percentiles (POST /api/v1/query)', subtitle },
    data: { values: rows },
    width: 420,
    height: 260,
    layer: [
      {
        mark: 'bar',
        encoding: {
          x: {
            field: 'percentile',
            type: 'nominal',
            sort: ['p50', 'p90', 'p95', 'p99'],
            title: null,
            axis: { labelAngle: 0 },
          },
          xOffset: { field: 'run', type: 'nominal' },
          y: { field: 'ms', type: 'quantitative', title: 'latency (ms)' },
          color: { field: 'run', type: 'nominal', title: 'run', legend: { orient: 'top' } },
        },
      },
      {
        mark: { type: 'text', dy: -6, fontSize: 9 },
        encoding: {
          x: { field: 'percentile', type: 'nominal', sort: ['p50', 'p90', 'p95', 'p99'] },
          xOffset: { field: 'run', type: 'nominal' },
          y: { field: 'ms', type: 'quantitative' },
          text: { field: 'ms', type: 'quantitative', format: '.0f' },
        },
      },
    ],
    ...FONT,
  };
}

/** Latency histograms, one row per run (Vega-Lite does the binning). */
export function latencyHistogramChart(samples: Array<{ run: string; ms: number }>, subtitle: string): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title: { text: 'Query latency distribution', subtitle },
    data: { values: samples },
    mark: 'bar',
    width: 460,
    height: 120,
    encoding: {
      x: { field: 'ms', type: 'quantitative', bin: { maxbins: 50 }, title: 'latency (ms)' },
      y: { aggregate: 'count', type: 'quantitative', title: 'queries' },
      color: { field: 'run', type: 'nominal', legend: null },
      row: { field: 'run', type: 'nominal', title: null, sort: 'descending' },
    },
    resolve: { scale: { y: 'independent' } },
    ...FONT,
  };
}

export function scaleChart(
  rows: Array<{ chunks: string; percentile: string; ms: number }>,
  subtitle: string,
): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title: { text: 'Latency vs. KB size (perturbed copies of real chunks)', subtitle },
    data: { values: rows },
    width: 320,
    height: 240,
    layer: [
      {
        mark: 'bar',
        encoding: {
          x: { field: 'chunks', type: 'nominal', sort: null, title: 'chunks in the KB', axis: { labelAngle: 0 } },
          xOffset: { field: 'percentile', type: 'nominal' },
          y: { field: 'ms', type: 'quantitative', title: 'latency (ms)' },
          color: { field: 'percentile', type: 'nominal', title: null, legend: { orient: 'top' } },
        },
      },
      {
        mark: { type: 'text', dy: -6, fontSize: 9 },
        encoding: {
          x: { field: 'chunks', type: 'nominal', sort: null },
          xOffset: { field: 'percentile', type: 'nominal' },
          y: { field: 'ms', type: 'quantitative' },
          text: { field: 'ms', type: 'quantitative', format: '.0f' },
        },
      },
    ],
    ...FONT,
  };
}

export function ingestChart(rows: Array<{ run: string; chunks_per_s: number }>, subtitle: string): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title: { text: 'Ingest throughput (chunks/s)', subtitle },
    data: { values: rows },
    width: 360,
    height: 200,
    encoding: {
      x: { field: 'run', type: 'nominal', sort: null, title: null, axis: { labelAngle: 0 } },
      y: { field: 'chunks_per_s', type: 'quantitative', title: 'chunks/s' },
    },
    layer: [
      { mark: { type: 'bar', color: '#54a24b' } },
      {
        mark: { type: 'text', dy: -8 },
        encoding: { text: { field: 'chunks_per_s', type: 'quantitative', format: '.1f' } },
      },
    ],
    ...FONT,
  };
}
