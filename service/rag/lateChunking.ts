// Late chunking (Günther et al. 2024): a unit's vector (a sentence of a passage) taken from the passage's own forward
// pass — the mean of the passage's token embeddings over the unit's tokens, before bge's CLS pooling — instead of a
// pass over the unit alone. The unit then reads its neighbours through attention, and costs no inference.
//
// The tokenizer gives no character offsets, so a unit's tokens are found by their ids: BERT's pre-tokeniser splits
// on whitespace and punctuation, and the sentence units (text/sentences.ts) begin and end at such boundaries, so a
// unit's own token ids appear contiguously in its passage's (collapsed blanks and dropped markdown marks change no
// token). A unit rewritten by the splitter (a table row with its header cells' names) is not found; nor is one past
// the model's window. The caller embeds those alone.

/** Token positions [start, end) in the passage's sequence. */
export interface TokenSpan {
  start: number;
  end: number;
}

/**
 * Each unit's span in `sequence` between `from` and `to` (the content tokens, without [CLS]/[SEP]), searched in order
 * from where the previous unit ended: null when not found. A unit cut by the window's end counts when at least half
 * of its tokens are inside. Each unit is looked for once from the cursor onwards: O(sequence × unit) per unit, on
 * ≤ 512 tokens.
 */
export function unitTokenSpans(
  sequence: ArrayLike<number>,
  units: number[][],
  from: number,
  to: number,
): Array<TokenSpan | null> {
  let cursor = from;
  return units.map((unit) => {
    if (unit.length === 0) return null;
    for (let start = cursor; start < to; start += 1) {
      const inside = Math.min(unit.length, to - start);
      let same = 0;
      while (same < inside && sequence[start + same] === unit[same]) same += 1;
      if (same === unit.length || (same === inside && inside * 2 >= unit.length)) {
        cursor = start + same;
        return { start, end: start + same };
      }
    }
    return null;
  });
}

/**
 * The unit-length mean of rows [span.start, span.end) of one sequence's hidden states (`hidden`: row-major, `width`
 * values a row, the sequence's first row at `offset`).
 */
export function meanPooled(hidden: Float32Array, offset: number, width: number, span: TokenSpan): number[] {
  const sum = new Float64Array(width);
  for (let row = span.start; row < span.end; row += 1) {
    const base = offset + row * width;
    for (let k = 0; k < width; k += 1) sum[k] += hidden[base + k];
  }
  let squares = 0;
  for (let k = 0; k < width; k += 1) squares += sum[k] * sum[k];
  const inverse = squares > 0 ? 1 / Math.sqrt(squares) : 0;
  return Array.from(sum, (value) => value * inverse);
}
