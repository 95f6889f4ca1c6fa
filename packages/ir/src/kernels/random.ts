// Deterministic pseudo-random numbers for test inputs: the same seed gives the same numbers in any
// process, on any engine, so a failing execution case can be reproduced bit for bit.

/**
 * mulberry32: a small 32-bit generator (period 2^32) with good statistical quality for test data.
 * Only 32-bit integer operations (`Math.imul`, `>>>`), so every JavaScript engine agrees.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    if (!Number.isInteger(seed)) throw new RangeError(`Rng seed must be an integer, got ${seed}`);
    this.state = seed >>> 0;
  }

  /** The next uniformly distributed u32. */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A uniform number in [0, 1) with 32 random bits. */
  nextFloat(): number {
    return this.nextU32() / 2 ** 32;
  }

  /** A uniform number in [low, high). */
  uniform(low: number, high: number): number {
    return low + (high - low) * this.nextFloat();
  }

  /** A uniform integer in [low, high] (inclusive; the range must span at most 2^32 values). */
  integer(low: number, high: number): number {
    const span = high - low + 1;
    if (!Number.isInteger(low) || !Number.isInteger(high) || span < 1 || span > 2 ** 32) {
      throw new RangeError(`Rng.integer: bad range [${low}, ${high}]`);
    }
    return low + Math.floor(this.nextFloat() * span);
  }
}

/** Mixes a string into a 32-bit seed (FNV-1a), so a case's data depends on its name, not its position. */
export function seedFromString(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Fills `array` with values uniform in [-magnitude, magnitude) (then rounded to f32), drawn from `rng`. */
export function fillUniform(array: Float32Array, rng: Rng, magnitude: number): Float32Array {
  if (!(magnitude >= 0) || !Number.isFinite(magnitude)) {
    throw new RangeError(`fillUniform: magnitude must be finite and >= 0, got ${magnitude}`);
  }
  for (let index = 0; index < array.length; index++) {
    // Storing rounds to f32, so a bound that is not an f32 (1e-3) may be exceeded by half an ulp.
    array[index] = rng.uniform(-magnitude, magnitude);
  }
  return array;
}

/** A new Float32Array of `length` values uniform in [-magnitude, magnitude], from `seed`. */
export function uniformF32(length: number, seed: number, magnitude = 1): Float32Array {
  return fillUniform(new Float32Array(length), new Rng(seed), magnitude);
}
