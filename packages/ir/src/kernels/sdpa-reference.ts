// The float64 reference of decode attention, written from the math with a two-pass softmax.
import { ValidationError } from '../errors.js';
import { f16FromBits } from '../f16.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { unpackF16Words } from './half-words.js';
import {
  checkSdpaShape,
  sdpaDefaultScale,
  sdpaKvHead,
  sdpaVisibleRange,
  type SdpaCache,
  type SdpaShape,
} from './sdpa-shape.js';

/**
 * The exact values of a cache buffer's first `count` elements: for an f16 cache, u32 words of two
 * halves (element 2i the low half) or, from a Uint16Array, one f16 bit pattern an element; for f32,
 * the values. A buffer shorter than `count` is a ValidationError at `buffers.<name>`.
 */
export function decodeSdpaCache(
  data: ArrayLike<number>,
  count: number,
  cache: SdpaCache,
  name: string,
): Float64Array {
  const halves = cache === 'f16' && !(data instanceof Uint16Array);
  const needed = halves ? Math.ceil(count / 2) : count;
  if (data.length < needed) {
    const unit = halves ? 'u32 words' : 'elements';
    throw new ValidationError([
      {
        path: `buffers.${name}`,
        message: `holds ${data.length} ${unit}; the shape needs ${needed}`,
      },
    ]);
  }
  if (halves) return unpackF16Words(data, count);
  const values = new Float64Array(count);
  const decode = cache === 'f16' ? f16FromBits : (value: number): number => value;
  for (let index = 0; index < count; index++) values[index] = decode(data[index] ?? 0);
  return values;
}

/**
 * Decode attention in float64 on decoded values: for each query head j and its KV head g,
 * s_t = scale · Σ_d q[j][d]·K[t][g][d] over the visible positions t, then (second pass, after the
 * max m) p_t = exp(s_t − m) and out[j][d] = Σ_t p_t·V[t][g][d] / Σ_t p_t. `q` is
 * `[n_head][head_dim]`; `k` and `v` are token-major `[max_ctx][n_kv_head][head_dim]`.
 */
export function sdpaAttention(
  shape: SdpaShape,
  scale: number,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
): Float64Array {
  const { n_head: nHead, n_kv_head: nKvHead, head_dim: headDim } = shape;
  const { start, end } = sdpaVisibleRange(shape);
  const out = new Float64Array(nHead * headDim);
  const scores = new Float64Array(end - start);
  for (let head = 0; head < nHead; head++) {
    const group = sdpaKvHead(shape, head);
    const qBase = head * headDim;
    let max = -Infinity;
    for (let t = start; t < end; t++) {
      const kBase = (t * nKvHead + group) * headDim;
      let dot = 0;
      for (let d = 0; d < headDim; d++) dot += (q[qBase + d] ?? 0) * (k[kBase + d] ?? 0);
      const score = scale * dot;
      scores[t - start] = score;
      max = Math.max(max, score);
    }
    let sum = 0;
    const accumulator = new Float64Array(headDim);
    for (let t = start; t < end; t++) {
      const weight = Math.exp((scores[t - start] ?? 0) - max);
      sum += weight;
      const vBase = (t * nKvHead + group) * headDim;
      for (let d = 0; d < headDim; d++)
        accumulator[d] = (accumulator[d] ?? 0) + weight * (v[vBase + d] ?? 0);
    }
    for (let d = 0; d < headDim; d++) out[qBase + d] = (accumulator[d] ?? 0) / sum;
  }
  return out;
}

/**
 * The catalog reference of decode attention over a `cache` of that type, in the shape of
 * `CatalogKernel.reference`: reads `q` (f32), `k` and `v` (the stored values, f16 decoded exactly,
 * as the kernel sees them) and the params (the shape names and `scale`, 1/√head_dim in f32 when
 * absent), checks the shape, and returns `{ out }`.
 */
export function sdpaReference(cache: SdpaCache): CatalogKernel['reference'] {
  return (inputs, params) => {
    const shape = checkSdpaShape(params, cache);
    const scale = params['scale'] ?? sdpaDefaultScale(shape.head_dim);
    const cached = shape.max_ctx * shape.n_kv_head * shape.head_dim;
    const heads = shape.n_head * shape.head_dim;
    const q = decodeSdpaCache(inputs['q'] ?? [], heads, 'f32', 'q');
    const k = decodeSdpaCache(inputs['k'] ?? [], cached, cache, 'k');
    const v = decodeSdpaCache(inputs['v'] ?? [], cached, cache, 'v');
    return { out: sdpaAttention(shape, scale, q, k, v) };
  };
}
