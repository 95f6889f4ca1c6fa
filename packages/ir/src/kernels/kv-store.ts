// Catalog kernels `kv-store` (f16 cache) and `kv-store-f32`: this step's k and v into the KV cache.
import type { Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { packHalf } from '../expressions.js';
import { f16Bits, f16FromBits } from '../f16.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import type { Rng } from './random.js';
import { SDPA_CACHE_BYTES, type SdpaCache } from './sdpa-shape.js';
import { U32_LIMIT, checkShapeFields } from './shape-fields.js';

// The cache layout is sdpa-decode's: token-major `[max_ctx][n_kv_head][head_dim]`, an f16 cache as
// u32 words of two halves (element 2i in the low half of word i), so position pos is one
// contiguous row of n_kv_head·head_dim values. A thread takes a pair of values of k and of v (one
// 8-byte load each) and writes one word of each cache (f16) or a pair (f32, one 8-byte store): a
// warp moves whole 128- or 256-byte lines, and only row pos is touched.

/** `value` as an untyped Expr: the caches hold u32 words or f32 values, by variant. */
const untyped = (value: Expr): Expr => value;

/** The shape names of kv-store, in listing order; each is also a u32 param. */
export const KV_STORE_SHAPE_NAMES = ['n_kv_head', 'head_dim', 'pos', 'max_ctx'] as const;

function spec(cache: SdpaCache): KernelSpec {
  const cached = cache === 'f16' ? 'u32' : 'f32';
  const what = cache === 'f16' ? 'f16 (two halves a u32 word, rounded to nearest even)' : 'f32';
  return defineKernel(
    {
      id: cache === 'f16' ? 'kv-store' : 'kv-store-f32',
      semanticVersion: 1,
      entryPoint: cache === 'f16' ? 'kv_store' : 'kv_store_f32',
      description: `k_cache[pos] = k, v_cache[pos] = v: f32 [n_kv_head][head_dim] into the ${what} cache [max_ctx][n_kv_head][head_dim] sdpa-decode reads; other positions untouched`,
      buffers: [
        { group: 0, binding: 0, name: 'k', element: 'f32', access: 'read' },
        { group: 0, binding: 1, name: 'v', element: 'f32', access: 'read' },
        { group: 0, binding: 2, name: 'k_cache', element: cached, access: 'read_write' },
        { group: 0, binding: 3, name: 'v_cache', element: cached, access: 'read_write' },
      ],
      params: KV_STORE_SHAPE_NAMES.map((name) => ({ name, type: 'u32' as const })),
      shared: [],
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup, each storing a pair of values of k and of v',
          default: 256,
          bounds: {
            ptx: { min: 32, max: 1024, multipleOf: 32 },
            wgsl: { min: 32, max: 256, multipleOf: 32 },
          },
        },
      ],
      launch: {
        workgroupSize: 'workgroupSize',
        grid: ['min(ceil_div(n_kv_head * head_dim, 2 * workgroupSize), 65535)', '1', '1'],
      },
    },
    (b) => {
      const nKvHead = b.param('n_kv_head');
      const headDim = b.param('head_dim');
      const pos = b.param('pos');
      const size = b.schedule('workgroupSize');
      const { pairs, stride } = b.let({
        pairs: nKvHead.mul(headDim).shr(1),
        stride: b.numWorkgroups('x').mul(size),
      });
      // Row pos starts at pair pos·pairs (the row has 2·pairs values); u32 is enough, as checkShape
      // keeps the cache's bytes below 2^32. A pos past the cache stores nothing rather than out of bounds.
      const { row } = b.let({ row: pos.mul(pairs) });
      const start = b.workgroupId('x').mul(size).add(b.localId());
      b.if(pos.lt(b.param('max_ctx')), () =>
        b.for('i', { start, end: pairs, step: stride }, (_, i) => {
          const [k0, k1] = b.loadVector('k', i.shl(1), ['k0', 'k1']);
          const [v0, v1] = b.loadVector('v', i.shl(1), ['v0', 'v1']);
          const word = row.add(i);
          if (cache === 'f16') {
            b.store('k_cache', word, untyped(packHalf(k0, k1)));
            b.store('v_cache', word, untyped(packHalf(v0, v1)));
          } else {
            b.storeVector('k_cache', word.shl(1), [untyped(k0), untyped(k1)]);
            b.storeVector('v_cache', word.shl(1), [untyped(v0), untyped(v1)]);
          }
        }),
      );
    },
  );
}

/**
 * Every problem of `shape` for kv-store, each at the path of the field to change: every field a
 * whole number below 2^32, n_kv_head, head_dim and max_ctx at least 1, head_dim even, pos below
 * max_ctx, and the cache's bytes below 2^32.
 */
export function kvStoreShapeIssues(shape: Shape, cache: SdpaCache): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const values = checkShapeFields(shape, KV_STORE_SHAPE_NAMES, issues, (name) =>
    name === 'pos' ? 0 : 1,
  );
  const { n_kv_head: heads, head_dim: headDim, pos, max_ctx: maxCtx } = values;
  if (headDim !== undefined && headDim % 2 !== 0)
    issues.push({ path: 'head_dim', message: `${headDim} is not even` });
  if (pos !== undefined && maxCtx !== undefined && pos >= maxCtx)
    issues.push({ path: 'pos', message: `${pos} is not below max_ctx ${maxCtx}` });
  if (issues.length === 0 && heads !== undefined && headDim !== undefined && maxCtx !== undefined) {
    const bytes = maxCtx * heads * headDim * SDPA_CACHE_BYTES[cache];
    if (bytes >= U32_LIMIT)
      issues.push({
        path: 'max_ctx',
        message: `${maxCtx} positions of ${heads}×${headDim} ${cache} values (${bytes} bytes) exceed 32-bit byte offsets`,
      });
  }
  return issues;
}

/** Throws a ValidationError carrying kvStoreShapeIssues, when there are any. */
export function checkKvStoreShape(shape: Shape, cache: SdpaCache): void {
  const issues = kvStoreShapeIssues(shape, cache);
  if (issues.length > 0) throw new ValidationError(issues);
}

/**
 * The float64 reference: the caches as they came in (zero where absent) with row pos replaced by k
 * and v, each value rounded to nearest even into the cache's type; an f16 cache as its u32 words.
 */
export function kvStoreReference(cache: SdpaCache): CatalogKernel['reference'] {
  return (inputs, params) => {
    const size = (name: string): number => params[name] ?? 0;
    const row = size('n_kv_head') * size('head_dim');
    const perWord = cache === 'f16' ? 2 : 1;
    const length = (size('max_ctx') * row) / perWord;
    const result: Record<string, Float64Array> = {};
    for (const [source, target] of [
      ['k', 'k_cache'],
      ['v', 'v_cache'],
    ] as const) {
      const before = inputs[target] ?? [];
      const after = Float64Array.from({ length }, (_, index) => before[index] ?? 0);
      const values = inputs[source] ?? [];
      const base = (size('pos') * row) / perWord;
      for (let word = 0; word < row / perWord; word++) {
        if (cache === 'f32') after[base + word] = Math.fround(values[word] ?? 0);
        else {
          const [low, high] = [values[2 * word] ?? 0, values[2 * word + 1] ?? 0];
          after[base + word] = (f16Bits(low) | (f16Bits(high) << 16)) >>> 0;
        }
      }
      result[target] = after;
    }
    return result;
  };
}

/** The input families of kv-store a case may name: `f16-ties`, see kvStoreTies. */
export const KV_STORE_FAMILIES: readonly string[] = ['f16-ties'];

/**
 * `length` values each exactly halfway between two adjacent finite f16 (normal and subnormal, both
 * parities, random signs), so round-to-nearest-even decides every one: a kernel rounding another
 * way, or through another precision, gets some half wrong.
 */
export function kvStoreTies(length: number, rng: Rng): Float32Array {
  return Float32Array.from({ length }, () => {
    // Below 0x7bff, so the upper neighbour is finite; a quarter subnormal.
    const bits = rng.integer(0, 3) === 0 ? rng.integer(0, 0x3ff) : rng.integer(0x400, 0x7bfe);
    const tie = (f16FromBits(bits) + f16FromBits(bits + 1)) / 2;
    return rng.integer(0, 1) === 0 ? tie : -tie;
  });
}

function kvStoreKernel(cache: SdpaCache): CatalogKernel {
  return {
    spec: spec(cache),
    shapeNames: KV_STORE_SHAPE_NAMES,
    defaultShape: { n_kv_head: 8, head_dim: 128, pos: 37, max_ctx: 64 },
    params: (shape) => Object.fromEntries(KV_STORE_SHAPE_NAMES.map((n) => [n, shape[n] ?? 0])),
    bufferLengths: (shape) => {
      const row = (shape['n_kv_head'] ?? 0) * (shape['head_dim'] ?? 0);
      const cached = ((shape['max_ctx'] ?? 0) * row) / (cache === 'f16' ? 2 : 1);
      return { k: row, v: row, k_cache: cached, v_cache: cached };
    },
    outputs: ['k_cache', 'v_cache'],
    reference: kvStoreReference(cache),
    // Exact: every stored value is one correctly rounded conversion (f16 caches compare as words).
    tolerance: 0,
    checkShape: (shape) => checkKvStoreShape(shape, cache),
    inputFamilies: KV_STORE_FAMILIES,
    generateFamily: ({ family, shape, rng }) => {
      if (!KV_STORE_FAMILIES.includes(family))
        throw new ValidationError([
          { path: 'family', message: `'${family}' is not one of ${KV_STORE_FAMILIES.join(', ')}` },
        ]);
      const row = (shape['n_kv_head'] ?? 0) * (shape['head_dim'] ?? 0);
      return { k: kvStoreTies(row, rng), v: kvStoreTies(row, rng) };
    },
    describeInput: (buffer, shape) => {
      if (buffer !== 'k_cache' && buffer !== 'v_cache') return undefined;
      const [positions, heads, dims] = ['max_ctx', 'n_kv_head', 'head_dim'].map((n) => shape[n]);
      const values = cache === 'f16' ? 'raw IEEE halves, little-endian' : 'f32 values';
      return `[max_ctx ${positions}][n_kv_head ${heads}][head_dim ${dims}] ${values}; --shape max_ctx=N sizes the cache`;
    },
  };
}

/** Catalog kernel `kv-store`: k and v rounded to f16 into row pos of sdpa-decode's cache. */
export const kvStore: CatalogKernel = kvStoreKernel('f16');
/** Catalog kernel `kv-store-f32`: k and v into row pos of sdpa-decode-f32's cache. */
export const kvStoreF32: CatalogKernel = kvStoreKernel('f32');
