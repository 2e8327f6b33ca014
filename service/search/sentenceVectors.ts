// How a chunk index stores sentence vectors, by its template version, and the query script and _reindex conversions.
//
// Both forms are one binary doc value per chunk (`sentence_embeddings`): the vectors one after another, read by the
// k-NN side's rescoring script (SENTENCE_SCORE) and returned to the extractive answerer as `docvalue_fields`; the
// same base64 is in _source, which is what `_reindex` copies.
//   float32  template v1–v2: 4 bytes a component (little-endian)
//   int8     template v3 on: 1 byte a component, each vector scaled by its own largest |component| to ±127. Cosine
//            is scale-invariant, so neither the script nor the answerer needs the scale back: both divide by the
//            stored vector's own norm.
// Measured (bench/sentenceVectorStorage.ts; docs/search-engineering.md, "Sentence vectors in the index"): the
// float32 vectors were most of what a chunk cost OpenSearch to store. Leaving them out of _source (`_source.excludes`)
// does not pay: OpenSearch then keeps the whole original source (the knn vector's JSON included) as _recovery_source.
import { templateVersionOfIndex } from './metadataLayouts.ts';

export type SentenceVectorForm = 'float32' | 'int8';

/** The first template version whose sentence vectors are int8. */
const FIRST_INT8_VERSION = 3;

/** The form of a concrete chunk index, by the template version its name carries (the alias itself: the current one). */
export function sentenceVectorFormOf(index: string): SentenceVectorForm {
  const version = templateVersionOfIndex(index);
  return version !== null && version < FIRST_INT8_VERSION ? 'float32' : 'int8';
}

/** One vector as int8: each component over the vector's largest |component|, times 127, rounded. */
export function quantizeInt8(vector: ArrayLike<number>): Int8Array {
  let largest = 0;
  for (let index = 0; index < vector.length; index += 1) largest = Math.max(largest, Math.abs(vector[index]));
  const quantized = new Int8Array(vector.length);
  if (largest === 0) return quantized;
  for (let index = 0; index < vector.length; index += 1) quantized[index] = Math.round((vector[index] / largest) * 127);
  return quantized;
}

/** A chunk's sentence vectors as the doc value of an index of `form` (base64). */
export function encodeSentenceVectors(vectors: ArrayLike<number>[], form: SentenceVectorForm): string {
  const dimensions = vectors[0]?.length ?? 0;
  if (form === 'int8') {
    const bytes = Buffer.allocUnsafe(vectors.length * dimensions);
    vectors.forEach((vector, at) => bytes.set(new Uint8Array(quantizeInt8(vector).buffer), at * dimensions));
    return bytes.toString('base64');
  }
  // Little-endian whatever this machine's byte order: the query's script decodes them that way.
  const bytes = Buffer.allocUnsafe(vectors.length * dimensions * 4);
  vectors.forEach((vector, at) => {
    for (let index = 0; index < dimensions; index += 1)
      bytes.writeFloatLE(vector[index], (at * dimensions + index) * 4);
  });
  return bytes.toString('base64');
}

/**
 * The doc value cut back into vectors of `dimensions` components. int8 vectors come back as their integers (a
 * multiple of the vector): callers compute cosines, which divide by the norm.
 */
export function decodeSentenceVectors(
  base64: string | undefined,
  dimensions: number,
  form: SentenceVectorForm,
): Float32Array[] {
  if (!base64 || dimensions === 0) return [];
  const bytes = Buffer.from(base64, 'base64');
  const width = form === 'int8' ? 1 : 4;
  const vectors: Float32Array[] = [];
  for (let start = 0; start + dimensions * width <= bytes.length; start += dimensions * width) {
    const vector = new Float32Array(dimensions);
    for (let index = 0; index < dimensions; index += 1)
      vector[index] = form === 'int8' ? bytes.readInt8(start + index) : bytes.readFloatLE(start + index * 4);
    vectors.push(vector);
  }
  return vectors;
}

/**
 * The k-NN side's score of a chunk the k-NN query found: its own score plus `weight` times its best sentence's, both
 * as the cosinesimil space scores, (1 + cos) / 2. A chunk with no sentence vectors (a one-sentence chunk, or one
 * indexed before they existed) counts its own score as its best sentence's. `params.int8`: the index's form. Each
 * cosine divides by the stored vector's norm, so an int8 vector needs no scale. An index whose mapping lacks the
 * field (a mapping update it refused, see applyAssets.ts) is served as one without sentence vectors: doc[...] of an
 * unmapped field would fail the query. See retrieval.ts vectorQuery for why a doc value and not _source.
 */
export const SENTENCE_SCORE = `
if (!doc.containsKey('sentence_embeddings') || doc['sentence_embeddings'].size() == 0) { return _score + params.weight * _score; }
BytesRef packed = doc['sentence_embeddings'].value;
byte[] bytes = packed.bytes;
List given = params.question;
int dims = given.size();
double[] question = new double[dims];
double questionNorm = 0;
for (int i = 0; i < dims; i++) { question[i] = given.get(i); questionNorm += question[i] * question[i]; }
int width = params.int8 ? 1 : 4;
int sentences = packed.length / (width * dims);
double best = -1;
for (int s = 0; s < sentences; s++) {
  int start = packed.offset + s * width * dims;
  double dot = 0;
  double norm = 0;
  if (params.int8) {
    for (int i = 0; i < dims; i++) {
      double component = bytes[start + i];
      dot += component * question[i];
      norm += component * component;
    }
  } else {
    for (int i = 0; i < dims; i++) {
      int at = start + 4 * i;
      float component = Float.intBitsToFloat((bytes[at] & 255) | ((bytes[at + 1] & 255) << 8) | ((bytes[at + 2] & 255) << 16) | ((bytes[at + 3] & 255) << 24));
      dot += component * question[i];
      norm += component * component;
    }
  }
  double cosine = norm == 0 || questionNorm == 0 ? 0 : dot / Math.sqrt(norm * questionNorm);
  if (cosine > best) { best = cosine; }
}
return _score + params.weight * (sentences == 0 ? _score : (1 + best) / 2);
`;

/**
 * Painless for a `_reindex` from a float32 index (vectors in _source) into an int8 one: the vectors re-encoded as
 * encodeSentenceVectors would (same rounding: Math.round of a double, half up, in Java and JavaScript alike). The
 * dimensions are the passage vector's (embedding_b64, or the knn_vector of a chunk older than it).
 */
const FLOAT32_TO_INT8 = `
def packed = ctx._source.sentence_embeddings;
if (packed instanceof String) {
  byte[] bytes = Base64.getDecoder().decode(packed);
  def passage = ctx._source.embedding_b64;
  int dims = passage instanceof String ? Base64.getDecoder().decode(passage).length / 4 : ctx._source.embedding.size();
  int sentences = bytes.length / (4 * dims);
  byte[] out = new byte[sentences * dims];
  double[] vector = new double[dims];
  for (int s = 0; s < sentences; s++) {
    double largest = 0;
    for (int i = 0; i < dims; i++) {
      int at = (s * dims + i) * 4;
      vector[i] = Float.intBitsToFloat((bytes[at] & 255) | ((bytes[at + 1] & 255) << 8) | ((bytes[at + 2] & 255) << 16) | ((bytes[at + 3] & 255) << 24));
      largest = Math.max(largest, Math.abs(vector[i]));
    }
    for (int i = 0; i < dims; i++) { out[s * dims + i] = (byte) (largest == 0 ? 0 : Math.round(vector[i] / largest * 127)); }
  }
  ctx._source.sentence_embeddings = Base64.getEncoder().encodeToString(out);
}`;

/**
 * Painless for a `_reindex` from an int8 index into a float32 one (a rollback's catch-up into a kept v2 index): each
 * component as the float32 of its integer, little-endian (a multiple of the vector: the same cosines).
 */
const INT8_TO_FLOAT32 = `
def packed = ctx._source.sentence_embeddings;
if (packed instanceof String) {
  byte[] bytes = Base64.getDecoder().decode(packed);
  byte[] out = new byte[bytes.length * 4];
  for (int i = 0; i < bytes.length; i++) {
    int bits = Float.floatToIntBits((float) bytes[i]);
    for (int b = 0; b < 4; b++) { out[4 * i + b] = (byte) ((bits >> (8 * b)) & 255); }
  }
  ctx._source.sentence_embeddings = Base64.getEncoder().encodeToString(out);
}`;

/** The `_reindex` script part that converts sentence vectors from the source's form to the target's; null when they share one. */
export function sentenceCopyScript(source: string, target: string): string | null {
  const [from, to] = [sentenceVectorFormOf(source), sentenceVectorFormOf(target)];
  if (from === to) return null;
  return from === 'float32' ? FLOAT32_TO_INT8 : INT8_TO_FLOAT32;
}
