// A float64 Llama decoder written from the math (llama.cpp's arch `llama`), never by running the IR or
// the catalog kernels: the yardstick the model runner's logits are measured against.
import { ValidationError, roundToF16, type ValidationIssue } from '@forge/ir';
import type { LlamaHyperparameters, RopeMode } from './model.js';

/** The hyperparameters the reference reads: a model's, less the context length it never needs. */
export type ReferenceHyperparameters = Omit<LlamaHyperparameters, 'contextLength'>;

/** One decoder layer's weights, dequantized; a matrix is row-major [out][in] (y = W·x). */
export interface ReferenceLayer {
  /** [nEmbd] */
  readonly attnNorm: Float64Array;
  /** [nHead·headDim][nEmbd] */
  readonly wq: Float64Array;
  /** [nKvHead·headDim][nEmbd] */
  readonly wk: Float64Array;
  /** [nKvHead·headDim][nEmbd] */
  readonly wv: Float64Array;
  /** [nEmbd][nHead·headDim] */
  readonly wo: Float64Array;
  /** [nEmbd] */
  readonly ffnNorm: Float64Array;
  /** [nFf][nEmbd] */
  readonly wGate: Float64Array;
  /** [nFf][nEmbd] */
  readonly wUp: Float64Array;
  /** [nEmbd][nFf] */
  readonly wDown: Float64Array;
}

/** A whole model's weights, dequantized to float64. */
export interface ReferenceModel {
  readonly hparams: ReferenceHyperparameters;
  /** [nVocab][nEmbd] */
  readonly tokenEmbd: Float64Array;
  readonly layers: readonly ReferenceLayer[];
  /** [nEmbd] */
  readonly outputNorm: Float64Array;
  /** [nVocab][nEmbd]; absent when the model ties its output to `tokenEmbd`. */
  readonly output?: Float64Array | undefined;
}

/** How the KV cache stores k and v: exactly, or rounded to f16 as the kernels' f16 cache does. */
export type ReferenceKv = 'f32' | 'f16';

/** Options of createReferenceDecoder. */
export interface ReferenceDecoderOptions {
  readonly kv: ReferenceKv;
}

/** A decoder holding its KV cache: one `step` per token, positions 0, 1, 2, … */
export interface ReferenceDecoder {
  /**
   * The logits [nVocab] after `token` at position `pos`; `pos` must be at most the number of positions
   * cached so far (a smaller one rewinds the cache to it).
   */
  step(token: number, pos: number): Float64Array;
  /** How many positions the cache holds. */
  readonly length: number;
}

/** y = W·x for W row-major [rows][x.length]. */
export function referenceMatVec(w: Float64Array, x: Float64Array, rows: number): Float64Array {
  const cols = x.length;
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    const base = r * cols;
    for (let c = 0; c < cols; c++) sum += (w[base + c] ?? 0) * (x[c] ?? 0);
    y[r] = sum;
  }
  return y;
}

/** x / sqrt(mean(x²) + eps), times `weight` elementwise. */
export function referenceRmsNorm(x: Float64Array, weight: Float64Array, eps: number): Float64Array {
  let squares = 0;
  for (const value of x) squares += value * value;
  const scale = 1 / Math.sqrt(squares / x.length + eps);
  return x.map((value, i) => value * scale * (weight[i] ?? 0));
}

/**
 * Rotates, in place, each of the `nHeads` heads of `x` (headDim values each) for position `pos`: pair i
 * ((2i, 2i+1) in normal mode, (i, i + headDim/2) in NeoX mode) by θ_i = pos · base^(−2i/headDim).
 */
export function referenceRope(
  x: Float64Array,
  nHeads: number,
  headDim: number,
  pos: number,
  base: number,
  mode: RopeMode,
): void {
  const half = headDim / 2;
  for (let i = 0; i < half; i++) {
    const theta = pos * Math.pow(base, (-2 * i) / headDim);
    const [cos, sin] = [Math.cos(theta), Math.sin(theta)];
    const [first, second] = mode === 'normal' ? [2 * i, 2 * i + 1] : [i, i + half];
    for (let h = 0; h < nHeads; h++) {
      const [a, b] = [h * headDim + first, h * headDim + second];
      const [x0, x1] = [x[a] ?? 0, x[b] ?? 0];
      x[a] = x0 * cos - x1 * sin;
      x[b] = x0 * sin + x1 * cos;
    }
  }
}

function silu(value: number): number {
  return value / (1 + Math.exp(-value));
}

function checkPositiveInteger(issues: ValidationIssue[], path: string, value: number): void {
  if (!Number.isInteger(value) || value < 1)
    issues.push({ path, message: `${value} is not a positive whole number` });
}

function checkLength(
  issues: ValidationIssue[],
  path: string,
  array: Float64Array | undefined,
  dims: readonly number[],
): void {
  const expected = dims.reduce((a, b) => a * b, 1);
  if (!(array instanceof Float64Array))
    issues.push({ path, message: `missing (expected a Float64Array [${dims.join('][')}])` });
  else if (array.length !== expected)
    issues.push({
      path,
      message: `length ${array.length}, expected ${expected} ([${dims.join('][')}])`,
    });
}

/** Throws a ValidationError naming the first hyperparameter or weight that does not fit. */
export function validateReferenceModel(model: ReferenceModel): void {
  const p = model.hparams;
  const issues: ValidationIssue[] = [];
  for (const name of ['nVocab', 'nEmbd', 'nLayer', 'nHead', 'nKvHead', 'headDim', 'nFf'] as const)
    checkPositiveInteger(issues, `hparams.${name}`, p[name]);
  if (issues.length > 0) throw new ValidationError(issues);
  if (p.headDim % 2 !== 0)
    issues.push({
      path: 'hparams.headDim',
      message: `${p.headDim} is not even (rope rotates pairs)`,
    });
  if (p.nHead % p.nKvHead !== 0)
    issues.push({
      path: 'hparams.nKvHead',
      message: `${p.nKvHead} does not divide nHead ${p.nHead}`,
    });
  if (!Number.isFinite(p.rmsEps) || p.rmsEps < 0)
    issues.push({ path: 'hparams.rmsEps', message: `${p.rmsEps} is not a finite number >= 0` });
  if (!Number.isFinite(p.ropeBase) || p.ropeBase <= 0)
    issues.push({ path: 'hparams.ropeBase', message: `${p.ropeBase} is not a finite number > 0` });
  if (p.ropeMode !== 'normal' && p.ropeMode !== 'neox')
    issues.push({
      path: 'hparams.ropeMode',
      message: `'${String(p.ropeMode)}' is not 'normal' or 'neox'`,
    });
  const [qDim, kvDim] = [p.nHead * p.headDim, p.nKvHead * p.headDim];
  checkLength(issues, 'tokenEmbd', model.tokenEmbd, [p.nVocab, p.nEmbd]);
  if (model.layers.length !== p.nLayer)
    issues.push({
      path: 'layers',
      message: `${model.layers.length} layers, expected nLayer ${p.nLayer}`,
    });
  model.layers.forEach((layer, l) => {
    const shapes: readonly [keyof ReferenceLayer, readonly number[]][] = [
      ['attnNorm', [p.nEmbd]],
      ['wq', [qDim, p.nEmbd]],
      ['wk', [kvDim, p.nEmbd]],
      ['wv', [kvDim, p.nEmbd]],
      ['wo', [p.nEmbd, qDim]],
      ['ffnNorm', [p.nEmbd]],
      ['wGate', [p.nFf, p.nEmbd]],
      ['wUp', [p.nFf, p.nEmbd]],
      ['wDown', [p.nEmbd, p.nFf]],
    ];
    for (const [name, dims] of shapes)
      checkLength(issues, `layers[${l}].${name}`, layer[name], dims);
  });
  checkLength(issues, 'outputNorm', model.outputNorm, [p.nEmbd]);
  if (model.output !== undefined) checkLength(issues, 'output', model.output, [p.nVocab, p.nEmbd]);
  if (issues.length > 0) throw new ValidationError(issues);
}

/** One layer's cache: k and v rows [pos][nKvHead·headDim], grown a position at a time. */
interface LayerCache {
  readonly k: Float64Array[];
  readonly v: Float64Array[];
}

/**
 * Softmax attention of the nHead query heads over cached positions 0..last; query head h reads KV head
 * ⌊h / (nHead/nKvHead)⌋ (grouped-query attention). Returns [nHead·headDim].
 */
function attend(
  p: ReferenceHyperparameters,
  q: Float64Array,
  cache: LayerCache,
  last: number,
): Float64Array {
  const out = new Float64Array(p.nHead * p.headDim);
  const group = p.nHead / p.nKvHead;
  const scale = 1 / Math.sqrt(p.headDim);
  const scores = new Float64Array(last + 1);
  for (let h = 0; h < p.nHead; h++) {
    const [qBase, kvBase] = [h * p.headDim, Math.floor(h / group) * p.headDim];
    let max = -Infinity;
    for (let t = 0; t <= last; t++) {
      const k = cache.k[t] ?? new Float64Array(0);
      let dot = 0;
      for (let d = 0; d < p.headDim; d++) dot += (q[qBase + d] ?? 0) * (k[kvBase + d] ?? 0);
      scores[t] = dot * scale;
      max = Math.max(max, dot * scale);
    }
    let total = 0;
    for (let t = 0; t <= last; t++) {
      // Subtracting the max changes nothing in exact math and keeps exp finite.
      scores[t] = Math.exp((scores[t] ?? 0) - max);
      total += scores[t] ?? 0;
    }
    for (let t = 0; t <= last; t++) {
      const [weight, v] = [(scores[t] ?? 0) / total, cache.v[t] ?? new Float64Array(0)];
      for (let d = 0; d < p.headDim; d++)
        out[qBase + d] = (out[qBase + d] ?? 0) + weight * (v[kvBase + d] ?? 0);
    }
  }
  return out;
}

function addInPlace(x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < x.length; i++) x[i] = (x[i] ?? 0) + (y[i] ?? 0);
}

/**
 * A float64 decoder for `model` (validated first: a ValidationError names the field that does not
 * fit). With kv 'f16' the cache keeps each k and v value rounded to the nearest f16 (ties to even,
 * through f32 as the kernels' cvt sees an f32); with 'f32' it keeps them exactly.
 */
export function createReferenceDecoder(
  model: ReferenceModel,
  options: ReferenceDecoderOptions,
): ReferenceDecoder {
  validateReferenceModel(model);
  if (options.kv !== 'f32' && options.kv !== 'f16')
    throw new ValidationError([
      { path: 'kv', message: `'${String(options.kv)}' is not 'f32' or 'f16'` },
    ]);
  const p = model.hparams;
  const [qDim, kvDim] = [p.nHead * p.headDim, p.nKvHead * p.headDim];
  const output = model.output ?? model.tokenEmbd;
  const store = (values: Float64Array): Float64Array =>
    options.kv === 'f16' ? values.map(roundToF16) : values;
  const caches: LayerCache[] = model.layers.map(() => ({ k: [], v: [] }));
  let length = 0;

  function step(token: number, pos: number): Float64Array {
    if (!Number.isInteger(token) || token < 0 || token >= p.nVocab)
      throw new ValidationError([
        { path: 'token', message: `${token} is not a token id below nVocab ${p.nVocab}` },
      ]);
    if (!Number.isInteger(pos) || pos < 0 || pos > length)
      throw new ValidationError([
        { path: 'pos', message: `${pos} is not a position from 0 to ${length}` },
      ]);
    const x = model.tokenEmbd.slice(token * p.nEmbd, (token + 1) * p.nEmbd);
    model.layers.forEach((layer, l) => {
      const cache = caches[l] ?? { k: [], v: [] };
      const h = referenceRmsNorm(x, layer.attnNorm, p.rmsEps);
      const [q, k, v] = [
        referenceMatVec(layer.wq, h, qDim),
        referenceMatVec(layer.wk, h, kvDim),
        referenceMatVec(layer.wv, h, kvDim),
      ];
      referenceRope(q, p.nHead, p.headDim, pos, p.ropeBase, p.ropeMode);
      referenceRope(k, p.nKvHead, p.headDim, pos, p.ropeBase, p.ropeMode);
      // Rewinding drops the positions after `pos`: they belonged to another continuation.
      cache.k.length = pos;
      cache.v.length = pos;
      cache.k.push(store(k));
      cache.v.push(store(v));
      addInPlace(x, referenceMatVec(layer.wo, attend(p, q, cache, pos), p.nEmbd));
      const f = referenceRmsNorm(x, layer.ffnNorm, p.rmsEps);
      const gate = referenceMatVec(layer.wGate, f, p.nFf);
      const up = referenceMatVec(layer.wUp, f, p.nFf);
      addInPlace(
        x,
        referenceMatVec(
          layer.wDown,
          gate.map((g, i) => silu(g) * (up[i] ?? 0)),
          p.nEmbd,
        ),
      );
    });
    length = pos + 1;
    return referenceMatVec(output, referenceRmsNorm(x, model.outputNorm, p.rmsEps), p.nVocab);
  }

  return {
    step,
    get length() {
      return length;
    },
  };
}
