import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { f16Bits, f16FromBits } from '../f16.js';
import { interpret } from '../interpreter/run.js';
import { packF16Words } from './half-words.js';
import { kvStore, kvStoreF32, kvStoreTies } from './kv-store.js';
import { Rng, uniformF32 } from './random.js';
import { sdpaDecode, sdpaDecodeF32 } from './sdpa-decode.js';
import type { SdpaCache } from './sdpa-shape.js';

const kernelOf = (cache: SdpaCache): typeof kvStore => (cache === 'f16' ? kvStore : kvStoreF32);

/** A sentinel word no store here writes: an f16 NaN pair, or as an f32 about 4.3e37. */
const SENTINEL = 0x7e017e01;

interface Step {
  readonly heads: number;
  readonly headDim: number;
  readonly pos: number;
  readonly maxCtx: number;
}

/** Caches of the step's shape filled with the sentinel's bits. */
function sentinelCaches(
  cache: SdpaCache,
  step: Step,
): { k_cache: Uint32Array | Float32Array; v_cache: Uint32Array | Float32Array } {
  const words = (step.maxCtx * step.heads * step.headDim) / (cache === 'f16' ? 2 : 1);
  const filled = (): Uint32Array | Float32Array => {
    const bits = new Uint32Array(words).fill(SENTINEL);
    return cache === 'f16' ? bits : new Float32Array(bits.buffer);
  };
  return { k_cache: filled(), v_cache: filled() };
}

/** Runs one kv-store step on the interpreter into the given caches (modified in place). */
function store(
  cache: SdpaCache,
  step: Step,
  k: Float32Array,
  v: Float32Array,
  caches: { k_cache: Uint32Array | Float32Array; v_cache: Uint32Array | Float32Array },
): void {
  const kernel = kernelOf(cache);
  const shape = { n_kv_head: step.heads, head_dim: step.headDim, pos: step.pos, max_ctx: step.maxCtx }; // prettier-ignore
  interpret(kernel.spec, { params: kernel.params(shape), buffers: { k, v, ...caches } });
}

const bitsOf = (data: Uint32Array | Float32Array): Uint32Array =>
  data instanceof Uint32Array ? data : new Uint32Array(data.buffer.slice(0));

describe.each(['f16', 'f32'] as const)('kv-store, %s cache, on the interpreter', (cache) => {
  it('writes row pos exactly as the reference rounds it and leaves every other word untouched', () => {
    for (const step of [
      { heads: 8, headDim: 128, pos: 37, maxCtx: 40 },
      { heads: 3, headDim: 6, pos: 0, maxCtx: 3 },
      { heads: 2, headDim: 64, pos: 7, maxCtx: 8 },
    ]) {
      const row = step.heads * step.headDim;
      const k = uniformF32(row, 11 + step.pos, 2);
      const v = uniformF32(row, 12 + step.pos, 2);
      const caches = sentinelCaches(cache, step);
      const before = { k_cache: bitsOf(caches.k_cache).slice(), v_cache: bitsOf(caches.v_cache).slice() }; // prettier-ignore
      store(cache, step, k, v, caches);
      const params = kernelOf(cache).params({ n_kv_head: step.heads, head_dim: step.headDim, pos: step.pos, max_ctx: step.maxCtx }); // prettier-ignore
      const expected = kernelOf(cache).reference({ k, v, ...caches, ...before }, params);
      const perWord = cache === 'f16' ? 2 : 1;
      const [first, last] = [(step.pos * row) / perWord, ((step.pos + 1) * row) / perWord];
      for (const name of ['k_cache', 'v_cache'] as const) {
        const got = bitsOf(caches[name]);
        const changed = [...got.keys()].filter((index) => got[index] !== before[name][index]);
        // Every word of row pos changed (no finite pair packs to the sentinel), and nothing else.
        expect(changed).toEqual(Array.from({ length: last - first }, (_, i) => first + i));
        const want = expected[name] ?? new Float64Array();
        const values = cache === 'f16' ? [...got] : [...caches[name]];
        expect(values.slice(first, last)).toEqual([...want.slice(first, last)]);
      }
    }
  });

  it('keeps the sentinel in the reference too, outside row pos', () => {
    const step = { heads: 1, headDim: 2, pos: 1, maxCtx: 3 };
    const caches = sentinelCaches(cache, step);
    const params = { n_kv_head: 1, head_dim: 2, pos: 1, max_ctx: 3 };
    const k = Float32Array.of(1, 0.1);
    const expected = kernelOf(cache).reference({ k, v: k, ...caches }, params)['k_cache'];
    if (cache === 'f16') expect([...(expected ?? [])]).toEqual([SENTINEL, 0x2e663c00, SENTINEL]);
    else {
      const sentinel = new Float32Array(Uint32Array.of(SENTINEL).buffer)[0];
      expect([...(expected ?? [])]).toEqual([sentinel, sentinel, 1, Math.fround(0.1), sentinel, sentinel]); // prettier-ignore
    }
  });

  it('fills the cache sdpa-decode reads: attention over stored steps matches float64 attention', () => {
    const [heads, nHead, headDim, steps, maxCtx] = [2, 4, 32, 5, 8];
    const rng = new Rng(5);
    const caches = sentinelCaches(cache, { heads, headDim, pos: 0, maxCtx });
    const keys: number[][] = [];
    const values: number[][] = [];
    const round = (x: number): number => (cache === 'f16' ? f16FromBits(f16Bits(x)) : x);
    for (let pos = 0; pos < steps; pos++) {
      const k = Float32Array.from({ length: heads * headDim }, () => rng.uniform(-1, 1));
      const v = Float32Array.from({ length: heads * headDim }, () => rng.uniform(-1, 1));
      store(cache, { heads, headDim, pos, maxCtx }, k, v, caches);
      keys.push([...k].map(round));
      values.push([...v].map(round));
    }
    if (cache === 'f16') expect([...bitsOf(caches.k_cache)].slice(0, (steps * heads * headDim) / 2)).toEqual([...packF16Words(keys.flat())]); // prettier-ignore
    const q = Float32Array.from({ length: nHead * headDim }, () => rng.uniform(-1, 1));
    const sdpa = cache === 'f16' ? sdpaDecode : sdpaDecodeF32;
    const shape = { n_head: nHead, n_kv_head: heads, head_dim: headDim, n_kv: steps, max_ctx: maxCtx, window: 0 }; // prettier-ignore
    const params = sdpa.params(shape);
    const out = new Float32Array(nHead * headDim);
    interpret(sdpa.spec, { params, buffers: { q, k: caches.k_cache, v: caches.v_cache, out } });
    // Attention written out here from the per-step rows: head j reads KV head j / (n_head / heads).
    const scale = params['scale'] ?? 0;
    let error = 0;
    let energy = 0;
    for (let j = 0; j < nHead; j++) {
      const offset = Math.floor(j / (nHead / heads)) * headDim;
      const scores = keys.map((key) => {
        let dot = 0;
        for (let d = 0; d < headDim; d++) dot += (q[j * headDim + d] ?? 0) * (key[offset + d] ?? 0);
        return dot * scale;
      });
      const top = Math.max(...scores);
      const weights = scores.map((s) => Math.exp(s - top));
      const sum = weights.reduce((a, b) => a + b, 0);
      for (let d = 0; d < headDim; d++) {
        const want = weights.reduce((acc, w, t) => acc + w * (values[t]?.[offset + d] ?? 0), 0) / sum; // prettier-ignore
        error += ((out[j * headDim + d] ?? NaN) - want) ** 2;
        energy += want ** 2;
      }
    }
    expect(error / energy).toBeLessThan(1e-10);
  });
});

describe('kv-store shapes and inputs', () => {
  const shape = { n_kv_head: 8, head_dim: 128, pos: 3, max_ctx: 4 };
  const pathsOf = (run: () => void): string[] => {
    try {
      run();
    } catch (error) {
      if (error instanceof ValidationError) return error.issues.map((issue) => issue.path);
      throw error;
    }
    return [];
  };

  it('rejects pos at or past max_ctx, an odd head_dim, a cache past 4 GiB and missing fields', () => {
    expect(pathsOf(() => kvStore.checkShape?.(shape))).toEqual([]);
    expect(pathsOf(() => kvStore.checkShape?.({ ...shape, pos: 4 }))).toEqual(['pos']);
    expect(() => kvStore.checkShape?.({ ...shape, pos: 4 })).toThrow(
      /pos: 4 is not below max_ctx 4/,
    );
    expect(pathsOf(() => kvStore.checkShape?.({ ...shape, head_dim: 7 }))).toEqual(['head_dim']);
    expect(pathsOf(() => kvStoreF32.checkShape?.({ ...shape, max_ctx: 2 ** 20 }))).toEqual(['max_ctx']); // prettier-ignore
    expect(pathsOf(() => kvStore.checkShape?.({ ...shape, max_ctx: 2 ** 20 }))).toEqual([]);
    expect(pathsOf(() => kvStore.checkShape?.({ n_kv_head: 0, head_dim: 2.5 }))).toEqual(['n_kv_head', 'head_dim', 'pos', 'max_ctx']); // prettier-ignore
  });

  it('sizes the caches in words of two halves or in f32, and describes their layout', () => {
    expect(kvStore.bufferLengths(shape)).toEqual({ k: 1024, v: 1024, k_cache: 2048, v_cache: 2048 }); // prettier-ignore
    expect(kvStoreF32.bufferLengths(shape)['k_cache']).toBe(4096);
    expect(kvStore.describeInput?.('v_cache', shape)).toMatch(/^\[max_ctx 4\]\[n_kv_head 8\]\[head_dim 128\] raw IEEE halves/); // prettier-ignore
    expect(kvStore.describeInput?.('k', shape)).toBeUndefined();
  });

  it('draws f16-ties values exactly halfway between halves, which the reference rounds to even', () => {
    const ties = kvStoreTies(4096, new Rng(3));
    let up = 0;
    for (const value of ties) {
      const bits = f16Bits(value);
      const rounded = f16FromBits(bits);
      // value is not a half, its half is even, and the other neighbour is as far on the other side.
      expect(rounded).not.toBe(value);
      expect(bits & 1).toBe(0);
      const roundsUp = Math.abs(rounded) > Math.abs(value);
      const other = f16FromBits(roundsUp ? bits - 1 : bits + 1);
      expect(Math.abs(value - rounded)).toBe(Math.abs(other - value));
      if (roundsUp) up++;
    }
    // Both directions occur, so rounding halfway cases one fixed way fails some of them.
    expect(up).toBeGreaterThan(1000);
    expect(up).toBeLessThan(3096);
    expect(ties.some((value) => Math.abs(value) < 2 ** -14)).toBe(true);
  });
});
