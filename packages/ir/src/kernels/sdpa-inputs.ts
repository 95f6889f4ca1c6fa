// Seeded q/k/v for decode attention, plain and adversarial, as the kernel's buffers hold them.
import { ValidationError } from '../errors.js';
import { f16Bits, f16FromBits } from '../f16.js';
import type { CatalogKernel, InputRequest, Shape } from './catalog-kernel.js';
import { packF16Words } from './half-words.js';
import { fillUniform, type Rng } from './random.js';
import {
  checkSdpaShape,
  sdpaDefaultScale,
  sdpaKvHead,
  sdpaVisibleRange,
  type SdpaCache,
  type SdpaShape,
} from './sdpa-shape.js';

/**
 * Which inputs to draw: `uniform` (q, K and V uniform in ±magnitude); `dominant` (one visible
 * position's score exceeds every other visible score of every query head by at least `gap`, 80 by
 * default); `equal-scores` (every position holds the same key per KV head, so all scores are
 * equal and out is the mean of V); `large-q` (q uniform in ±256·magnitude: scores far beyond
 * f32 exp's range unless the max is subtracted).
 */
export type SdpaInputFamily = 'uniform' | 'dominant' | 'equal-scores' | 'large-q';

/** How {@link sdpaInputs} draws a case. */
export interface SdpaInputOptions {
  readonly cache: SdpaCache;
  /** The case's generator; q, then K, then V are drawn from it (the kernel's buffer order). */
  readonly rng: Rng;
  /** K and V (and q unless `qMagnitude`) are uniform in [-magnitude, magnitude] before rounding. */
  readonly magnitude: number;
  /** `uniform` when left out. */
  readonly family?: SdpaInputFamily;
  /** q's magnitude: `magnitude`, or 256·`magnitude` for `large-q`. */
  readonly qMagnitude?: number;
  /** The scale the kernel will run with (for `dominant`'s gap); 1/√head_dim in f32 by default. */
  readonly scale?: number;
  /** `dominant`'s least logit gap; 80 by default. */
  readonly gap?: number;
  /** `dominant`'s position (visible); drawn from the generator after V when left out. */
  readonly dominantPosition?: number;
  /** Fills the positions no query sees (before the window, from n_kv on) with NaN, so a read leaks. */
  readonly poisonInvisible?: boolean;
}

/**
 * The input buffers as the kernel holds them: q f32; K and V packed halves or f32. A type alias, so
 * it passes as `BufferData` to a reference.
 */
export type SdpaBuffers = {
  readonly q: Float32Array;
  readonly k: Uint32Array | Float32Array;
  readonly v: Uint32Array | Float32Array;
};

/** A drawn case: its buffers, and the dominating position of the `dominant` family. */
export interface SdpaInputs {
  readonly buffers: SdpaBuffers;
  readonly dominantPosition?: number;
}

/** q's magnitude relative to `magnitude` in the `large-q` family. */
export const SDPA_LARGE_Q_FACTOR = 256;

const F16_MAX = 65504;

/**
 * Deterministic inputs of `shape` for decode attention: q, K and V drawn from `options.rng` in that
 * order, K/V of an f16 cache rounded to f16 and packed two a u32 word (element 2i the low half),
 * shaped by `options.family`. For `uniform`, the same numbers as {@link sdpaGenerateInput} gives
 * buffer by buffer from an equal generator. Throws a ValidationError for a bad shape, magnitude or
 * dominant position.
 */
export function sdpaInputs(shape: Shape, options: SdpaInputOptions): SdpaInputs {
  const dims = checkSdpaShape(shape, options.cache);
  const { cache, rng, magnitude } = options;
  const family = options.family ?? 'uniform';
  const qMagnitude =
    options.qMagnitude ?? (family === 'large-q' ? SDPA_LARGE_Q_FACTOR * magnitude : magnitude);
  checkMagnitude('magnitude', magnitude, cache);
  checkMagnitude('qMagnitude', qMagnitude, 'f32');
  const heads = dims.n_head * dims.head_dim;
  const cached = dims.max_ctx * dims.n_kv_head * dims.head_dim;
  const signed = family === 'dominant' ? signedQ(dims, rng, qMagnitude) : undefined;
  const q = signed?.q ?? uniformF32(heads, rng, qMagnitude);
  const k = drawCache(cached, rng, magnitude, cache);
  if (family === 'equal-scores') repeatFirstPosition(dims, k);
  const v = drawCache(cached, rng, magnitude, cache);
  let dominantPosition: number | undefined;
  if (signed !== undefined) {
    dominantPosition = pickDominant(dims, rng, options.dominantPosition);
    const scale = options.scale ?? sdpaDefaultScale(dims.head_dim);
    const gap = options.gap ?? 80;
    makeDominant(dims, { ...signed, k, position: dominantPosition, scale, gap, cache });
  }
  if (options.poisonInvisible === true) for (const values of [k, v]) poison(dims, values);
  const pack = (values: Float64Array) =>
    cache === 'f16' ? packF16Words(values) : Float32Array.from(values);
  return {
    buffers: { q, k: pack(k), v: pack(v) },
    ...(dominantPosition === undefined ? {} : { dominantPosition }),
  };
}

/**
 * `CatalogKernel.generateInput` for decode attention over a `cache`: the `uniform` family, buffer by
 * buffer (q f32; k and v rounded to f16 and packed for an f16 cache); undefined for other buffers.
 */
export function sdpaGenerateInput(cache: SdpaCache): NonNullable<CatalogKernel['generateInput']> {
  return ({ buffer, length, rng, magnitude }: InputRequest) => {
    if (buffer === 'q') return uniformF32(length, rng, magnitude);
    if (buffer !== 'k' && buffer !== 'v') return undefined;
    checkMagnitude('magnitude', magnitude, cache);
    const count = cache === 'f16' ? 2 * length : length;
    const values = drawCache(count, rng, magnitude, cache);
    return cache === 'f16' ? packF16Words(values) : Float32Array.from(values);
  };
}

function checkMagnitude(path: string, magnitude: number, element: SdpaCache): void {
  const limit = element === 'f16' ? F16_MAX : 3.4e38;
  if (!(magnitude >= 0 && magnitude <= limit))
    throw new ValidationError([
      { path, message: `${magnitude} is not a magnitude from 0 to ${limit} (${element})` },
    ]);
}

function uniformF32(length: number, rng: Rng, magnitude: number): Float32Array {
  return fillUniform(new Float32Array(length), rng, magnitude);
}

/** `count` values uniform in ±magnitude, as the cache stores them (f16- or f32-rounded). */
function drawCache(count: number, rng: Rng, magnitude: number, cache: SdpaCache): Float64Array {
  const values = new Float64Array(count);
  for (let index = 0; index < count; index++) values[index] = rng.uniform(-magnitude, magnitude);
  return values.map(cache === 'f16' ? roundF16 : Math.fround);
}

const roundF16 = (value: number): number => f16FromBits(f16Bits(value));

/**
 * q for `dominant`: per KV head a random sign vector σ, and each of its query heads σ[d] times a
 * value in [magnitude/4, magnitude], so a key c·σ scores c·Σ|q[d]| > 0 for every head of the group.
 */
function signedQ(
  dims: SdpaShape,
  rng: Rng,
  magnitude: number,
): { q: Float32Array; signs: Int8Array } {
  if (!(magnitude > 0))
    throw new ValidationError([{ path: 'qMagnitude', message: 'must be positive for dominant' }]);
  const signs = Int8Array.from({ length: dims.n_kv_head * dims.head_dim }, () =>
    rng.nextU32() & 1 ? -1 : 1,
  );
  const q = new Float32Array(dims.n_head * dims.head_dim);
  for (let head = 0; head < dims.n_head; head++) {
    const group = sdpaKvHead(dims, head);
    for (let d = 0; d < dims.head_dim; d++)
      q[head * dims.head_dim + d] =
        (signs[group * dims.head_dim + d] ?? 1) * rng.uniform(magnitude / 4, magnitude);
  }
  return { q, signs };
}

/** Copies position 0's keys to every position, so every score of a head is the same number. */
function repeatFirstPosition(dims: SdpaShape, k: Float64Array): void {
  const row = dims.n_kv_head * dims.head_dim;
  for (let t = 1; t < dims.max_ctx; t++) k.copyWithin(t * row, 0, row);
}

function pickDominant(dims: SdpaShape, rng: Rng, given: number | undefined): number {
  const { start, end } = sdpaVisibleRange(dims);
  if (given === undefined) return rng.integer(start, end - 1);
  if (!Number.isInteger(given) || given < start || given >= end)
    throw new ValidationError([
      {
        path: 'dominantPosition',
        message: `${given} is not a visible position in [${start}, ${end})`,
      },
    ]);
  return given;
}

/**
 * Sets K[position][g] = c_g·σ_g with the least c_g (rounded up to the cache's type) that puts the
 * position's score at least `gap` above every other visible score of each query head of group g.
 */
interface Dominance {
  readonly q: Float32Array;
  readonly signs: Int8Array;
  /** The cache's K values, changed in place. */
  readonly k: Float64Array;
  readonly position: number;
  readonly scale: number;
  readonly gap: number;
  readonly cache: SdpaCache;
}

function makeDominant(dims: SdpaShape, dominance: Dominance): void {
  const { q, signs, k, position, scale, gap, cache } = dominance;
  if (!(gap > 0 && Number.isFinite(gap) && scale > 0 && Number.isFinite(scale)))
    throw new ValidationError([
      { path: 'gap', message: `gap ${gap} and scale ${scale} must be positive and finite` },
    ]);
  const { head_dim: headDim, n_kv_head: nKvHead } = dims;
  const { start, end } = sdpaVisibleRange(dims);
  const need = new Float64Array(nKvHead);
  for (let head = 0; head < dims.n_head; head++) {
    const group = sdpaKvHead(dims, head);
    const query = q.subarray(head * headDim, (head + 1) * headDim);
    let best = -Infinity;
    for (let t = start; t < end; t++) {
      if (t === position) continue;
      const base = (t * nKvHead + group) * headDim;
      let dot = 0;
      for (let d = 0; d < headDim; d++) dot += (query[d] ?? 0) * (k[base + d] ?? 0);
      best = Math.max(best, scale * dot);
    }
    const norm = query.reduce((sum, value) => sum + Math.abs(value), 0);
    need[group] = Math.max(need[group] ?? 0, (best + gap) / (scale * norm));
  }
  for (let group = 0; group < nKvHead; group++) {
    const c = roundUp(need[group] ?? 0, cache);
    if (cache === 'f16' && c > F16_MAX)
      throw new ValidationError([
        { path: 'gap', message: `a gap of ${gap} needs keys of ${c}, beyond f16's ${F16_MAX}` },
      ]);
    const base = (position * nKvHead + group) * headDim;
    for (let d = 0; d < headDim; d++) k[base + d] = (signs[group * headDim + d] ?? 1) * c;
  }
}

/** The least value of the cache's type at or above `value` (≥ 0). */
function roundUp(value: number, cache: SdpaCache): number {
  const target = Math.max(0, value);
  if (cache === 'f16') {
    const bits = f16Bits(target);
    return f16FromBits(bits) >= target ? f16FromBits(bits) : f16FromBits(bits + 1);
  }
  const rounded = Math.fround(target);
  if (rounded >= target) return rounded;
  F32_BITS[0] = rounded;
  UINT_BITS[0] = (UINT_BITS[0] ?? 0) + 1;
  return F32_BITS[0] ?? rounded;
}

const F32_BITS = new Float32Array(1);
const UINT_BITS = new Uint32Array(F32_BITS.buffer);

/** NaN at every position no query sees: [0, start) and [n_kv, max_ctx). */
function poison(dims: SdpaShape, values: Float64Array): void {
  const row = dims.n_kv_head * dims.head_dim;
  const { start, end } = sdpaVisibleRange(dims);
  values.fill(Number.NaN, 0, start * row);
  values.fill(Number.NaN, end * row, dims.max_ctx * row);
}
