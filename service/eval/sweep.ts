// `kbqa eval beir --sweep 'param=v1,v2'`: the grid of query-time hybrid knobs to measure, parsed and checked before
// anything runs. Each --sweep names one knob and its values; the grid is their cartesian product, in the order given
// (the first knob varies slowest). Ingest-time knobs are refused: one ingested index holds one chunking.
import {
  DEPTH_RANGE,
  parseBm25Fields,
  parseFusion,
  parseInteger,
  parseNumber,
  parseWeights,
  RANK_CONSTANT_RANGE,
  SENTENCE_WEIGHT_RANGE,
  type HybridTuning,
  type Parsed,
} from '../hybridTuning.ts';

/** The knobs a sweep may vary, as --sweep names them, and how a value of each is read (`:` inside a value, `,` between values). */
const QUERY_TIME_KNOBS: Record<string, (text: string) => Parsed<Partial<HybridTuning>>> = {
  fusion: (text) => lift(parseFusion(text), (fusion) => ({ fusion })),
  rrf_rank_constant: (text) => lift(parseInteger(text, RANK_CONSTANT_RANGE), (rankConstant) => ({ rankConstant })),
  weights: (text) => lift(parseWeights(text, ':'), (weights) => ({ weights })),
  bm25_depth: (text) => lift(parseInteger(text, DEPTH_RANGE), (bm25Depth) => ({ bm25Depth })),
  knn_depth: (text) => lift(parseInteger(text, DEPTH_RANGE), (knnDepth) => ({ knnDepth })),
  bm25_fields: (text) => lift(parseBm25Fields(text, ':'), (bm25Fields) => ({ bm25Fields })),
  sentence_weight: (text) => lift(parseNumber(text, SENTENCE_WEIGHT_RANGE), (sentenceWeight) => ({ sentenceWeight })),
};

/** Knobs fixed when documents are chunked, and the variable that sets each. */
const INGEST_TIME_KNOBS: Record<string, string> = {
  chunk_tokens: 'KBQA_CHUNK_TOKENS',
  chunk_overlap_tokens: 'KBQA_CHUNK_OVERLAP_TOKENS',
};

export const SWEEP_KNOBS = Object.keys(QUERY_TIME_KNOBS);

function lift<T, U>(parsed: Parsed<T>, to: (value: T) => U): Parsed<U> {
  return 'problem' in parsed ? parsed : { value: to(parsed.value) };
}

export interface GridPoint {
  /** The knobs this point sets, as given on the command line (`{ weights: '0.3:0.7' }`). */
  values: Record<string, string>;
  /** The same as a HybridTuning override. */
  override: Partial<HybridTuning>;
}

export type ParsedSweep = { grid: GridPoint[] } | { problem: string };

/** `sentenceVectors`: whether the service builds chunks with sentence vectors (KBQA_SENTENCE_VECTORS). */
export function parseSweep(
  specs: string[],
  service: { sentenceVectors: boolean } = { sentenceVectors: true },
): ParsedSweep {
  const axes: Array<{ knob: string; values: Array<{ text: string; override: Partial<HybridTuning> }> }> = [];
  for (const spec of specs) {
    const equals = spec.indexOf('=');
    const knob = (equals === -1 ? spec : spec.slice(0, equals)).trim();
    if (knob in INGEST_TIME_KNOBS) {
      return {
        problem:
          `${knob} is an ingest-time knob: chunks are cut when documents are ingested, so one index holds one value of it. ` +
          `Set ${INGEST_TIME_KNOBS[knob]}, re-chunk the index with a migration (\`kbqa index migrate\`), then run kbqa eval again; ` +
          `--sweep varies query-time knobs only (${SWEEP_KNOBS.join(', ')}).`,
      };
    }
    const parse = QUERY_TIME_KNOBS[knob];
    if (!parse)
      return {
        problem: `--sweep ${JSON.stringify(spec)}: unknown knob "${knob}" (query-time knobs: ${SWEEP_KNOBS.join(', ')})`,
      };
    if (equals === -1) return { problem: `--sweep ${JSON.stringify(spec)}: expected ${knob}=<v1>,<v2>,…` };
    if (axes.some((axis) => axis.knob === knob))
      return { problem: `--sweep names ${knob} twice: list all its values in one --sweep` };
    const values: Array<{ text: string; override: Partial<HybridTuning> }> = [];
    for (const raw of spec.slice(equals + 1).split(',')) {
      const text = raw.trim();
      if (text === '') return { problem: `--sweep ${JSON.stringify(spec)}: an empty value` };
      const parsed = parse(text);
      if ('problem' in parsed) return { problem: `--sweep ${knob}: ${parsed.problem}` };
      // Without sentence vectors the term scores the chunk's own vector again: every weight would rank alike.
      if (!service.sentenceVectors && (parsed.value.sentenceWeight ?? 0) > 0) {
        return {
          problem: `--sweep sentence_weight=${text}: the term scores sentence vectors, which KBQA_SENTENCE_VECTORS=off leaves out`,
        };
      }
      values.push({ text, override: parsed.value });
    }
    axes.push({ knob, values });
  }
  if (axes.length === 0) return { problem: '--sweep needs at least one knob=<v1>,<v2>,…' };
  let grid: GridPoint[] = [{ values: {}, override: {} }];
  for (const axis of axes) {
    grid = grid.flatMap((point) =>
      axis.values.map((value) => ({
        values: { ...point.values, [axis.knob]: value.text },
        override: { ...point.override, ...value.override },
      })),
    );
  }
  return { grid };
}
