import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { f16FromBits } from '../f16.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { Rng } from './random.js';
import { sdpaInputs, type SdpaInputFamily } from './sdpa-inputs.js';
import { decodeSdpaCache, sdpaAttention, sdpaReference } from './sdpa-reference.js';
import { checkSdpaShape, sdpaParams, type SdpaCache, type SdpaShape } from './sdpa-shape.js';

const base = { n_head: 8, n_kv_head: 2, head_dim: 32, n_kv: 33, max_ctx: 40, window: 0 };

/** The reference's output for a shape's seeded inputs, with the decoded K/V it read. */
function run(
  shape: Partial<SdpaShape>,
  options: { cache?: SdpaCache; family?: SdpaInputFamily; seed?: number; magnitude?: number } = {},
) {
  const cache = options.cache ?? 'f16';
  const dims = checkSdpaShape({ ...base, ...shape }, cache);
  const rng = new Rng(options.seed ?? 1);
  const family = options.family ?? 'uniform';
  const drawn = sdpaInputs(dims, { cache, rng, magnitude: options.magnitude ?? 1, family });
  const inputs = drawn.buffers;
  const params = sdpaParams(dims);
  const out = sdpaReference(cache)(inputs, params)['out'] ?? new Float64Array();
  const cached = dims.max_ctx * dims.n_kv_head * dims.head_dim;
  const k = decodeSdpaCache(inputs.k, cached, cache, 'k');
  const v = decodeSdpaCache(inputs.v, cached, cache, 'v');
  return { dims, inputs, out, k, v, scale: params['scale'] ?? 0, position: drawn.dominantPosition };
}

/**
 * Written differently from the reference on purpose: one pass with a running max and sum, positions
 * from last to first, q scaled before the dot product, and the window as a skip.
 */
function onePass(
  dims: SdpaShape,
  scale: number,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
): Float64Array {
  const { head_dim: hd, n_kv_head: nKvHead } = dims;
  const out = new Float64Array(dims.n_head * hd);
  const perGroup = dims.n_head / nKvHead;
  for (let j = 0; j < dims.n_head; j++) {
    const g = (j - (j % perGroup)) / perGroup;
    let max = -Infinity;
    let sum = 0;
    const acc = new Float64Array(hd);
    for (let t = dims.n_kv - 1; t >= 0; t--) {
      if (dims.window > 0 && t < dims.n_kv - dims.window) continue;
      let s = 0;
      for (let d = hd - 1; d >= 0; d--)
        s += scale * (q[j * hd + d] ?? 0) * (k[(t * nKvHead + g) * hd + d] ?? 0);
      const newMax = Math.max(max, s);
      const shrink = Math.exp(max - newMax);
      const weight = Math.exp(s - newMax);
      sum = sum * shrink + weight;
      for (let d = 0; d < hd; d++)
        acc[d] = (acc[d] ?? 0) * shrink + weight * (v[(t * nKvHead + g) * hd + d] ?? 0);
      max = newMax;
    }
    for (let d = 0; d < hd; d++) out[j * hd + d] = (acc[d] ?? 0) / sum;
  }
  return out;
}

/** ‖a − b‖ / ‖b‖. */
function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let error = 0;
  let norm = 0;
  for (let index = 0; index < b.length; index++) {
    error += ((a[index] ?? NaN) - (b[index] ?? 0)) ** 2;
    norm += (b[index] ?? 0) ** 2;
  }
  return Math.sqrt(error / norm);
}

/** Row `t` of KV head `g` of a decoded cache. */
function row(dims: SdpaShape, values: Float64Array, t: number, g: number): number[] {
  const start = (t * dims.n_kv_head + g) * dims.head_dim;
  return [...values.subarray(start, start + dims.head_dim)];
}

/** Output head `j`. */
function head(dims: SdpaShape, out: Float64Array, j: number): number[] {
  return [...out.subarray(j * dims.head_dim, (j + 1) * dims.head_dim)];
}

describe('sdpaReference', () => {
  it('matches a one-pass online softmax written differently to 1e-14 relative', () => {
    const shapes: Partial<SdpaShape>[] = [
      { n_kv: 1 },
      { n_kv: 2 },
      { n_kv: 31, head_dim: 64, n_head: 8, n_kv_head: 8 },
      { n_kv: 257, max_ctx: 300, head_dim: 128, n_head: 4, n_kv_head: 1 },
      { n_kv: 1000, max_ctx: 1000, window: 100, n_head: 32, n_kv_head: 8 },
    ];
    for (const cache of ['f16', 'f32'] as const)
      for (const family of ['uniform', 'dominant', 'equal-scores', 'large-q'] as const)
        for (const shape of shapes) {
          const { dims, inputs, out, k, v, scale } = run(shape, { cache, family, magnitude: 2 });
          const naive = onePass(dims, scale, inputs.q, k, v);
          expect(
            relativeError(out, naive),
            `${cache} ${family} ${JSON.stringify(shape)}`,
          ).toBeLessThan(1e-14);
        }
  });

  it('equals a hand-computed two-position softmax', () => {
    // One head, q = 3·e0; K[0] = e0, K[1] = 2·e0, so s = (3, 6)·scale; V rows constant 1 and 5.
    const dims = checkSdpaShape(
      { n_head: 1, n_kv_head: 1, head_dim: 32, n_kv: 2, max_ctx: 2 },
      'f32',
    );
    const q = new Float32Array(32);
    q[0] = 3;
    const k = new Float32Array(64);
    k[0] = 1;
    k[32] = 2;
    const v = new Float32Array(64).fill(1, 0, 32).fill(5, 32, 64);
    const scale = 0.25;
    const out = sdpaReference('f32')({ q, k, v }, { ...dims, scale })['out'];
    const w1 = Math.exp(6 * scale - 3 * scale);
    const want = (1 + 5 * w1) / (1 + w1);
    expect(out?.length).toBe(32);
    for (const value of out ?? []) expect(value).toBeCloseTo(want, 15);
  });

  it('gives query heads of one GQA group the same KV head, and each group its own', () => {
    const { dims, out, k, v, inputs, scale } = run(
      { n_head: 8, n_kv_head: 2, n_kv: 20 },
      { seed: 3 },
    );
    for (let j = 0; j < 8; j++) {
      const g = Math.floor(j / 4);
      // The same head alone against KV head g's cache, through a one-head shape.
      const single = checkSdpaShape({ ...dims, n_head: 1, n_kv_head: 1 }, 'f32');
      const pick = (values: Float64Array, group: number) =>
        Float64Array.from({ length: dims.max_ctx * dims.head_dim }, (_, i) => {
          const t = Math.floor(i / dims.head_dim);
          return values[(t * 2 + group) * dims.head_dim + (i % dims.head_dim)] ?? NaN;
        });
      const q = inputs.q.subarray(j * 32, (j + 1) * 32);
      const alone = sdpaAttention(single, scale, q, pick(k, g), pick(v, g));
      expect(head(dims, out, j)).toEqual([...alone]);
      // With the other KV head it would differ, so the mapping is what the test checks.
      const other = sdpaAttention(single, scale, q, pick(k, 1 - g), pick(v, 1 - g));
      expect(relativeError(head(dims, out, j), other)).toBeGreaterThan(0.1);
    }
    const flat = run({ n_head: 4, n_kv_head: 4, n_kv: 20 }, { seed: 3 });
    const shared = run({ n_head: 4, n_kv_head: 1, n_kv: 20 }, { seed: 3 });
    expect(head(flat.dims, flat.out, 3)).not.toEqual(head(shared.dims, shared.out, 3));
  });

  it('sees only the last `window` positions: window ≥ n_kv is no window, window 1 is V of the last', () => {
    for (const cache of ['f16', 'f32'] as const) {
      const none = run({ n_kv: 33, window: 0 }, { cache });
      expect(run({ n_kv: 33, window: 33 }, { cache }).out).toEqual(none.out);
      expect(run({ n_kv: 33, window: 1000 }, { cache }).out).toEqual(none.out);
      const last = run({ n_kv: 33, window: 1 }, { cache });
      for (let j = 0; j < 8; j++)
        expect(head(last.dims, last.out, j)).toEqual(row(last.dims, last.v, 32, Math.floor(j / 4)));
      // A window of 8 is the shape with n_kv 8 over positions 25..32 moved to the front.
      const windowed = run({ n_kv: 33, window: 8 }, { cache });
      const rowLength = 2 * 32;
      const moved = (values: Float64Array) => values.slice(25 * rowLength, 33 * rowLength);
      const dims = checkSdpaShape({ ...base, n_kv: 8, max_ctx: 8 }, 'f32');
      const want = sdpaAttention(
        dims,
        windowed.scale,
        windowed.inputs.q,
        moved(windowed.k),
        moved(windowed.v),
      );
      expect([...windowed.out]).toEqual([...want]);
      expect(windowed.out).not.toEqual(none.out);
    }
  });

  it('gives V[0] when n_kv is 1, whatever q and K hold', () => {
    for (const family of ['uniform', 'large-q'] as const) {
      const { dims, out, v } = run({ n_kv: 1 }, { family });
      for (let j = 0; j < 8; j++)
        expect(head(dims, out, j)).toEqual(row(dims, v, 0, Math.floor(j / 4)));
    }
  });

  it('gives V of the dominating position, even against 999 others e^-80 below', () => {
    for (const cache of ['f16', 'f32'] as const) {
      const {
        dims,
        out,
        v,
        position: dominant,
      } = run({ n_kv: 1000, max_ctx: 1000, head_dim: 64 }, { cache, family: 'dominant' });
      const position = dominant ?? -1;
      for (let j = 0; j < 8; j++) {
        const want = row(dims, v, position, Math.floor(j / 4));
        head(dims, out, j).forEach((value, d) =>
          expect(Math.abs(value - (want[d] ?? NaN))).toBeLessThan(1e-30),
        );
      }
    }
  });

  it('gives the mean of the visible V when every score is equal', () => {
    const { dims, out, v } = run(
      { n_kv: 37, max_ctx: 40, window: 30 },
      { family: 'equal-scores', magnitude: 3 },
    );
    for (let j = 0; j < 8; j++) {
      const g = Math.floor(j / 4);
      const mean = new Array<number>(32).fill(0);
      for (let t = 7; t < 37; t++)
        row(dims, v, t, g).forEach((value, d) => (mean[d] = (mean[d] ?? 0) + value / 30));
      head(dims, out, j).forEach((value, d) =>
        expect(Math.abs(value - (mean[d] ?? NaN))).toBeLessThan(1e-15 * 3),
      );
    }
  });

  it('keeps large scores finite: exp is taken after subtracting the max', () => {
    const { out, inputs } = run({ n_kv: 257, max_ctx: 257 }, { family: 'large-q', seed: 9 });
    expect(Math.max(...inputs.q.map(Math.abs))).toBeGreaterThan(200);
    expect(out.every(Number.isFinite)).toBe(true);
  });

  it('reads the f16 values exactly as stored, from packed words or from halves', () => {
    const { dims, inputs, out } = run({ n_kv: 5, max_ctx: 5 });
    const params = sdpaParams(dims);
    const count = 5 * 2 * 32;
    const halves = (words: ArrayLike<number>) =>
      Uint16Array.from(
        { length: count },
        (_, i) => ((words[i >> 1] ?? 0) >>> (16 * (i & 1))) & 0xffff,
      );
    const fromHalves = sdpaReference('f16')(
      { ...inputs, k: halves(inputs.k), v: halves(inputs.v) },
      params,
    );
    expect(fromHalves['out']).toEqual(out);
    const k = unpackF16Words(inputs.k, count);
    expect(k[1]).toBe(f16FromBits(((inputs.k[0] ?? 0) >>> 16) & 0xffff));
    const asF32 = sdpaReference('f32')(
      { ...inputs, k: Float32Array.from(k), v: Float32Array.from(unpackF16Words(inputs.v, count)) },
      params,
    );
    expect(asF32['out']).toEqual(out);
  });

  it('names a buffer too short for the shape, and a bad shape param', () => {
    const { dims, inputs } = run({ n_kv: 5, max_ctx: 5 });
    const params = sdpaParams(dims);
    const short = { ...inputs, v: inputs.v.subarray(1) };
    expect(() => sdpaReference('f16')(short, params)).toThrow(
      'buffers.v: holds 159 u32 words; the shape needs 160',
    );
    expect(() => sdpaReference('f32')(inputs, params)).toThrow(
      'buffers.k: holds 160 elements; the shape needs 320',
    );
    expect(() => sdpaReference('f16')(inputs, { ...params, n_kv: 6 })).toThrow(ValidationError);
    expect(() => sdpaReference('f16')(inputs, { ...params, n_kv: 6 })).toThrow(
      'n_kv: 6 exceeds max_ctx 5',
    );
  });

  it('packs what it decodes: f16 words round-trip', () => {
    const values = [1, -2, 0.5, 65504, -0, 2 ** -24];
    const words = packF16Words(values);
    expect([...words]).toEqual([0xc0003c00, 0x7bff3800, 0x00018000]);
    expect([...unpackF16Words(words, 6)]).toEqual(values);
  });
});
