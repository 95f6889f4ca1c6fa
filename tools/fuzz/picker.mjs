import fc from 'fast-check';

/**
 * Random choices drawn through fast-check's `gen()`, so every decision replays from a seed and path
 * and shrinks toward the first option (options are listed simplest first).
 */
export class Picker {
  constructor(g) {
    this.g = g;
  }
  int(min, max) {
    return this.g(fc.integer, { min, max });
  }
  /** True with probability `p`. */
  chance(p) {
    return this.int(0, 9999) >= 10000 * (1 - p);
  }
  one(options) {
    return options[this.int(0, options.length - 1)];
  }
  /** One of `[weight, value]` pairs, by weight. */
  weighted(pairs) {
    const total = pairs.reduce((sum, [weight]) => sum + weight, 0);
    let roll = this.int(0, total - 1);
    for (const [weight, value] of pairs) {
      if (roll < weight) return value;
      roll -= weight;
    }
    return pairs[pairs.length - 1][1];
  }
  /** A float in [min, max) with 1e-4 steps of the range (enough variety for constants). */
  float(min, max) {
    return min + ((max - min) * this.int(0, 10000)) / 10000;
  }
}
