import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { sdpaCatalogParts } from './sdpa-catalog.js';
import {
  checkSdpaShape,
  sdpaBufferLengths,
  sdpaDefaultScale,
  sdpaKvHead,
  sdpaParams,
  sdpaVisibleRange,
  type SdpaCache,
} from './sdpa-shape.js';
import type { Shape } from './catalog-kernel.js';

const good = { n_head: 8, n_kv_head: 2, head_dim: 128, n_kv: 33, max_ctx: 64, window: 0 };

/** The issues `shape` raises, as `path: message`. */
function issuesOf(shape: Shape, cache: SdpaCache = 'f16'): string[] {
  try {
    checkSdpaShape(shape, cache);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  return [];
}

describe('checkSdpaShape', () => {
  it('accepts the shapes the issue exercises, window defaulting to 0', () => {
    for (const [nHead, nKvHead] of [
      [8, 8],
      [8, 2],
      [32, 8],
      [4, 1],
    ] as const)
      for (const headDim of [32, 64, 128, 256])
        expect(issuesOf({ ...good, n_head: nHead, n_kv_head: nKvHead, head_dim: headDim })).toEqual(
          [],
        );
    const { window: _, ...noWindow } = good;
    expect(checkSdpaShape(noWindow, 'f32')).toEqual({ ...good, window: 0 });
    expect(issuesOf({ ...good, n_kv: 64, window: 1000 })).toEqual([]);
  });

  it('names the one field at fault, with a one-line message', () => {
    const cases: readonly [Partial<Record<string, number>>, string][] = [
      [{ n_head: 0 }, 'n_head: 0 is not at least 1'],
      [{ n_head: 2.5 }, 'n_head: 2.5 is not a whole number'],
      [{ n_kv_head: 0 }, 'n_kv_head: 0 is not at least 1'],
      [{ n_kv_head: 3 }, 'n_kv_head: 3 does not divide n_head 8'],
      [{ n_kv_head: 16 }, 'n_kv_head: 16 does not divide n_head 8'],
      [{ head_dim: 0 }, 'head_dim: 0 is not at least 1'],
      [{ head_dim: 48 }, 'head_dim: 48 is not a multiple of 32 from 32 to 256'],
      [{ head_dim: 288 }, 'head_dim: 288 is not a multiple of 32 from 32 to 256'],
      [{ head_dim: Number.NaN }, 'head_dim: NaN is not a whole number'],
      [{ n_kv: 0 }, 'n_kv: 0 is not at least 1'],
      [{ n_kv: 65 }, 'n_kv: 65 exceeds max_ctx 64'],
      [{ n_kv: Infinity }, 'n_kv: Infinity is not a whole number'],
      [{ max_ctx: 0 }, 'max_ctx: 0 is not at least 1'],
      [{ max_ctx: 64.5 }, 'max_ctx: 64.5 is not a whole number'],
      [{ window: -1 }, 'window: -1 is not at least 0'],
      [{ window: 0.5 }, 'window: 0.5 is not a whole number'],
      [{ window: 2 ** 32 }, 'window: 4294967296 does not fit a u32 param'],
      [{ n_head: undefined }, 'n_head: is missing'],
    ];
    for (const [change, message] of cases)
      expect(issuesOf({ ...good, ...change })).toEqual([message]);
  });

  it('reports every field at fault at once', () => {
    const error = (() => {
      try {
        checkSdpaShape({ ...good, n_head: 0, head_dim: 40, window: -2 }, 'f16');
      } catch (caught) {
        return caught as ValidationError;
      }
      throw new Error('no error');
    })();
    expect(error.issues.map((issue) => issue.path)).toEqual(['n_head', 'window', 'head_dim']);
    expect(error.path).toBe('n_head');
    expect(error.message).toBe('n_head: 0 is not at least 1 (and 2 more)');
  });

  it('keeps the cache below 2^32 bytes, counting 2 bytes an f16 and 4 an f32', () => {
    // 2^32 / (8 heads · 256 values · 2 bytes) = 2^20 positions fill exactly 2^32 bytes.
    const big = { n_head: 8, n_kv_head: 8, head_dim: 256, n_kv: 1, window: 0 };
    expect(issuesOf({ ...big, max_ctx: 2 ** 20 - 1 }, 'f16')).toEqual([]);
    expect(issuesOf({ ...big, max_ctx: 2 ** 20 }, 'f16')).toEqual([
      'max_ctx: 1048576 positions of 8×256 f16 values (4294967296 bytes) exceed 32-bit byte offsets',
    ]);
    expect(issuesOf({ ...big, max_ctx: 2 ** 19 - 1 }, 'f32')).toEqual([]);
    expect(issuesOf({ ...big, max_ctx: 2 ** 19 }, 'f32')[0]).toMatch(
      /^max_ctx: .*4294967296 bytes/,
    );
    // q and out: n_head · head_dim f32 values.
    expect(issuesOf({ ...good, n_head: 2 ** 22, n_kv_head: 1, head_dim: 256 })).toEqual([
      'n_head: 4194304 heads of 256 f32 values (4294967296 bytes) exceed 32-bit byte offsets',
    ]);
  });
});

describe('sdpa params, buffers and mapping', () => {
  it('defaults scale to 1/√head_dim rounded to f32, and takes a given scale as its f32', () => {
    expect(sdpaParams(good)).toEqual({ ...good, scale: Math.fround(1 / Math.sqrt(128)) });
    expect(sdpaDefaultScale(64)).toBe(0.125);
    expect(sdpaDefaultScale(32)).toBe(Math.fround(0.17677669529663687));
    expect(sdpaParams(good, 0.1)['scale']).toBe(Math.fround(0.1));
    const { window: _, ...noWindow } = good;
    expect(sdpaParams(noWindow)['window']).toBe(0);
    expect(() => sdpaParams(good, Number.NaN)).toThrow('scale: NaN is not a finite f32');
    expect(() => sdpaParams(good, 1e39)).toThrow(ValidationError);
  });

  it('sizes q and out [n_head][head_dim], the cache [max_ctx][n_kv_head][head_dim] (halves two a word)', () => {
    expect(sdpaBufferLengths(good, 'f32')).toEqual({ q: 1024, k: 16384, v: 16384, out: 1024 });
    expect(sdpaBufferLengths(good, 'f16')).toEqual({ q: 1024, k: 8192, v: 8192, out: 1024 });
  });

  it('maps query head j to KV head floor(j / (n_head / n_kv_head))', () => {
    const heads = (nHead: number, nKvHead: number): number[] => {
      const shape = checkSdpaShape({ ...good, n_head: nHead, n_kv_head: nKvHead }, 'f16');
      return Array.from({ length: nHead }, (_, head) => sdpaKvHead(shape, head));
    };
    expect(heads(8, 2)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(heads(8, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(heads(4, 1)).toEqual([0, 0, 0, 0]);
    expect(heads(32, 8).slice(0, 9)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2]);
  });

  it('sees the last `window` positions, clamped at 0, or all n_kv without a window', () => {
    const range = (nKv: number, window: number): [number, number] => {
      const { start, end } = sdpaVisibleRange(
        checkSdpaShape({ ...good, n_kv: nKv, window }, 'f16'),
      );
      return [start, end];
    };
    expect(range(33, 0)).toEqual([0, 33]);
    expect(range(33, 1)).toEqual([32, 33]);
    expect(range(33, 8)).toEqual([25, 33]);
    expect(range(33, 33)).toEqual([0, 33]);
    expect(range(33, 100)).toEqual([0, 33]);
  });

  it('gives a catalog entry its shape names, outputs and checks', () => {
    const parts = sdpaCatalogParts('f16');
    expect(parts.shapeNames).toEqual([
      'n_head',
      'n_kv_head',
      'head_dim',
      'n_kv',
      'max_ctx',
      'window',
    ]);
    expect(parts.outputs).toEqual(['out']);
    expect(() => parts.checkShape?.(parts.defaultShape)).not.toThrow();
    expect(() => parts.checkShape?.({ ...parts.defaultShape, n_kv_head: 3 })).toThrow(
      'n_kv_head: 3 does not divide n_head 8',
    );
    expect(parts.params(parts.defaultShape)['scale']).toBe(sdpaDefaultScale(128));
  });
});
