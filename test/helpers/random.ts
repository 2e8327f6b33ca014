// mulberry32: a tiny seeded PRNG, so a failing generated input can be reproduced from its seed.
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** `text` cut at random points (some pieces empty, some single characters, surrogate pairs cut too). */
export function randomSplit(text: string, random: Rng): string[] {
  const cuts = new Set<number>();
  const count = Math.floor(random() * Math.min(text.length + 2, 12));
  for (let index = 0; index < count; index += 1) cuts.add(Math.floor(random() * (text.length + 1)));
  if (random() < 0.2) for (let index = 0; index <= text.length; index += 1) cuts.add(index);
  const sorted = [...cuts].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const cut of sorted) {
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}
