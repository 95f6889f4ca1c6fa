// Shapes, params and buffer sizes of decode-time attention (`sdpa-decode`, `sdpa-decode-f32`).
import { ValidationError, type ValidationIssue } from '../errors.js';
import type { Shape } from './catalog-kernel.js';
import { U32_LIMIT, checkShapeFields } from './shape-fields.js';

/** How the KV cache stores its values: IEEE halves (two a u32 word) or f32. */
export type SdpaCache = 'f16' | 'f32';

/** The shape names of decode attention, in listing order; each is also a u32 param. */
export const SDPA_SHAPE_NAMES = [
  'n_head',
  'n_kv_head',
  'head_dim',
  'n_kv',
  'max_ctx',
  'window',
] as const;

/** One of {@link SDPA_SHAPE_NAMES}. */
export type SdpaShapeName = (typeof SDPA_SHAPE_NAMES)[number];

/**
 * A checked decode-attention shape: `n_head` query heads over `n_kv_head` KV heads of `head_dim`
 * values, `n_kv` visible positions of a `max_ctx`-position cache, and a sliding `window` (0: none).
 */
export type SdpaShape = Readonly<Record<SdpaShapeName, number>>;

/** Bytes of one cached value. */
export const SDPA_CACHE_BYTES: Readonly<Record<SdpaCache, number>> = { f16: 2, f32: 4 };

/** Largest head_dim the op takes (llama.cpp's largest vector-kernel head size). */
export const SDPA_MAX_HEAD_DIM = 256;

/**
 * `shape` checked for decode attention over a `cache` of that element type: every field a whole
 * number (window may be left out, meaning 0), n_kv_head ≥ 1 dividing n_head, head_dim a multiple
 * of 32 from 32 to 256, 1 ≤ n_kv ≤ max_ctx, window ≥ 0, and the cache and q/out byte sizes below
 * 2^32 (the kernels address them with u32 byte offsets). Throws a ValidationError carrying every
 * problem, each at the path of the field to change.
 */
export function checkSdpaShape(shape: Shape, cache: SdpaCache): SdpaShape {
  const issues: ValidationIssue[] = [];
  const problem = (path: SdpaShapeName, message: string): void => {
    issues.push({ path, message });
  };
  const values = checkShapeFields(
    shape,
    SDPA_SHAPE_NAMES,
    issues,
    (name) => (name === 'window' ? 0 : 1),
    (name) => (name === 'window' ? 0 : undefined),
  );
  const {
    n_head: nHead,
    n_kv_head: nKvHead,
    head_dim: headDim,
    n_kv: nKv,
    max_ctx: maxCtx,
    window,
  } = values;
  if (nHead !== undefined && nKvHead !== undefined && nHead % nKvHead !== 0)
    problem('n_kv_head', `${nKvHead} does not divide n_head ${nHead}`);
  if (headDim !== undefined && (headDim % 32 !== 0 || headDim > SDPA_MAX_HEAD_DIM))
    problem('head_dim', `${headDim} is not a multiple of 32 from 32 to ${SDPA_MAX_HEAD_DIM}`);
  if (nKv !== undefined && maxCtx !== undefined && nKv > maxCtx)
    problem('n_kv', `${nKv} exceeds max_ctx ${maxCtx}`);
  // Every field is defined once no issue was found.
  if (issues.length > 0 || nHead === undefined || nKvHead === undefined || headDim === undefined)
    throw new ValidationError(issues);
  if (nKv === undefined || maxCtx === undefined || window === undefined)
    throw new ValidationError(issues);
  const checked: SdpaShape = {
    n_head: nHead,
    n_kv_head: nKvHead,
    head_dim: headDim,
    n_kv: nKv,
    max_ctx: maxCtx,
    window,
  };
  const cacheBytes =
    checked.max_ctx * checked.n_kv_head * checked.head_dim * SDPA_CACHE_BYTES[cache];
  if (cacheBytes >= U32_LIMIT)
    problem(
      'max_ctx',
      `${checked.max_ctx} positions of ${checked.n_kv_head}×${checked.head_dim} ${cache} values (${cacheBytes} bytes) exceed 32-bit byte offsets`,
    );
  const headBytes = checked.n_head * checked.head_dim * 4;
  if (headBytes >= U32_LIMIT)
    problem(
      'n_head',
      `${checked.n_head} heads of ${checked.head_dim} f32 values (${headBytes} bytes) exceed 32-bit byte offsets`,
    );
  if (issues.length > 0) throw new ValidationError(issues);
  return checked;
}

/** The default softmax scale 1/√head_dim, as the f32 the kernel's `scale` param holds. */
export function sdpaDefaultScale(headDim: number): number {
  return Math.fround(1 / Math.sqrt(headDim));
}

/**
 * Every param of decode attention for `shape`: the shape names (window 0 when left out) and the f32
 * `scale`, 1/√head_dim unless given. A scale that is not a finite f32 is a ValidationError at
 * `scale`; the shape itself is checked by {@link checkSdpaShape}.
 */
export function sdpaParams(shape: Shape, scale?: number): Record<string, number> {
  const params: Record<string, number> = {};
  for (const name of SDPA_SHAPE_NAMES) params[name] = shape[name] ?? 0;
  const value = Math.fround(scale ?? sdpaDefaultScale(params['head_dim'] ?? 0));
  if (!Number.isFinite(value))
    throw new ValidationError([{ path: 'scale', message: `${scale} is not a finite f32` }]);
  params['scale'] = value;
  return params;
}

/**
 * Element counts of the buffers: `q` and `out` f32 `[n_head][head_dim]`; `k` and `v` the cache
 * `[max_ctx][n_kv_head][head_dim]`, in u32 words of two halves for an f16 cache (head_dim is even).
 */
export function sdpaBufferLengths(shape: Shape, cache: SdpaCache): Record<string, number> {
  const size = (name: SdpaShapeName): number => shape[name] ?? 0;
  const heads = size('n_head') * size('head_dim');
  const cached = size('max_ctx') * size('n_kv_head') * size('head_dim');
  const cacheLength = cache === 'f16' ? Math.ceil(cached / 2) : cached;
  return { q: heads, k: cacheLength, v: cacheLength, out: heads };
}

/**
 * The positions query heads see, [start, end): the last `window` of the n_kv positions when window
 * > 0 (clamped at 0), else all n_kv.
 */
export function sdpaVisibleRange(shape: SdpaShape): { start: number; end: number } {
  const start = shape.window > 0 ? Math.max(0, shape.n_kv - shape.window) : 0;
  return { start, end: shape.n_kv };
}

/** The KV head query head `head` reads: floor(head / (n_head / n_kv_head)). */
export function sdpaKvHead(shape: SdpaShape, head: number): number {
  return Math.floor(head / (shape.n_head / shape.n_kv_head));
}
