// Catalog kernel `rope`: rotary position embedding of q and k in place. A thread rotates one pair a
// trip, reading its two values and one 8-byte (cos, sin) table entry.
import { defineKernel, type MemoryHandle } from '../builder.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import type { Value } from '../expression-methods.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { ROPE_FREQ_BASE, ropeTable } from './rope-table.js';
import { U32_LIMIT, checkShapeFields } from './shape-fields.js';
import { field, fields } from './shape-reader.js';

const spec = defineKernel(
  {
    id: 'rope',
    semanticVersion: 1,
    entryPoint: 'rope',
    description:
      'rotary position embedding of q and k in place at position pos, pairs (2i, 2i+1) or, when neox != 0, (i, i + head_dim/2), angles from the cos_sin table row pos (grid-stride loop)',
    buffers: [
      { group: 0, binding: 0, name: 'q', element: 'f32', access: 'read_write' },
      { group: 0, binding: 1, name: 'k', element: 'f32', access: 'read_write' },
      { group: 0, binding: 2, name: 'cos_sin', element: 'f32', access: 'read' },
    ],
    params: [
      { name: 'n_head', type: 'u32' },
      { name: 'n_kv_head', type: 'u32' },
      { name: 'head_dim', type: 'u32' },
      { name: 'pos', type: 'u32' },
      { name: 'max_ctx', type: 'u32' },
      { name: 'neox', type: 'u32' },
    ],
    shared: [],
    schedule: [
      {
        name: 'workgroupSize',
        description: 'threads per workgroup, one rotated pair each per loop trip',
        default: 64,
        bounds: { ptx: { min: 32, max: 1024, multipleOf: 32 }, wgsl: { min: 1, max: 1024 } },
      },
    ],
    launch: {
      workgroupSize: 'workgroupSize',
      // WebGPU caps a grid dimension at 65535 workgroups, so more pairs run as a grid-stride loop.
      grid: ['min(ceil_div((n_head + n_kv_head) * (head_dim / 2), workgroupSize), 65535)', '1', '1'], // prettier-ignore
    },
  },
  (b) => {
    const { q, k } = b.memory;
    const size = b.schedule('workgroupSize');
    const [headDim, nHead] = [b.param('head_dim'), b.param('n_head')];
    const { half, row, isNeox } = b.let({
      half: headDim.shr(1),
      // Row `pos` of the table holds head_dim/2 (cos, sin) pairs: head_dim values.
      row: b.param('pos').mul(headDim),
      isNeox: b.param('neox').ne(0),
    });
    const { stride } = b.let({ stride: b.numWorkgroups().mul(size) });
    const start = b.workgroupId().mul(size).add(b.localId());
    const pairs = nHead.add(b.param('n_kv_head')).mul(half);
    b.for('p', { start, end: pairs, step: stride }, (_, p) => {
      const { head } = b.let({ head: p.div(half) });
      const { pair } = b.let({ pair: p.sub(head.mul(half)) });
      const [cos, sin] = b.loadVector('cos_sin', row.add(pair.mul(2)), ['cos_t', 'sin_t']);
      // Normal mode rotates adjacent values (2i, 2i+1); NeoX mode value i with i + head_dim/2.
      const { first } = b.let({ first: isNeox.select(pair, pair.mul(2)) });
      const { second } = b.let({ second: first.add(isNeox.select(half, 1)) });
      /** Rotates the pair of `x` at base + first, base + second by (cos θ, sin θ). */
      const rotate = (x: MemoryHandle<'f32'>, base: Value<'u32'>): void => {
        const [at0, at1] = [base.add(first), base.add(second)];
        const { x0, x1 } = b.let({ x0: x.at(at0), x1: x.at(at1) });
        x.store(at0, x0.mul(cos).sub(x1.mul(sin)));
        x.store(at1, x0.mul(sin).add(x1.mul(cos)));
      };
      b.if(
        head.lt(nHead),
        () => rotate(q, b.let('q_base', head.mul(headDim))),
        () => rotate(k, b.let('k_base', head.sub(nHead).mul(headDim))),
      );
    });
  },
);

/** The shape names of `rope`, in listing order; each is also a u32 param (neox: 0 or 1). */
export const ROPE_SHAPE_NAMES = [
  'n_head',
  'n_kv_head',
  'head_dim',
  'pos',
  'max_ctx',
  'neox',
] as const;
export type RopeField = (typeof ROPE_SHAPE_NAMES)[number];

/**
 * Every field of `shape` that `rope` cannot run, one issue each: each a whole number, n_head,
 * n_kv_head and max_ctx at least 1, head_dim even and at least 2, pos below max_ctx, neox 0 or 1,
 * and the q, k and table byte sizes below 2^32 (u32 indices).
 */
export function ropeShapeIssues(shape: Shape): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const values = checkShapeFields(shape, ROPE_SHAPE_NAMES, issues, (name) =>
    name === 'pos' || name === 'neox' ? 0 : 1,
  );
  const { n_head: nHead, n_kv_head: nKvHead, head_dim: headDim, pos, max_ctx: maxCtx } = values;
  if (headDim !== undefined && headDim % 2 !== 0)
    issues.push({ path: 'head_dim', message: `${headDim} is not even (values rotate in pairs)` });
  if (pos !== undefined && maxCtx !== undefined && pos >= maxCtx)
    issues.push({ path: 'pos', message: `${pos} is not below max_ctx ${maxCtx}` });
  if (values.neox !== undefined && values.neox > 1)
    issues.push({ path: 'neox', message: `${values.neox} is not 0 (normal) or 1 (NeoX)` });
  if (headDim !== undefined && maxCtx !== undefined && maxCtx * headDim * 4 >= U32_LIMIT)
    issues.push({
      path: 'max_ctx',
      message: `a ${maxCtx}×${headDim} f32 table exceeds 2^32 bytes`,
    });
  if (headDim !== undefined && nHead !== undefined && nKvHead !== undefined)
    if (Math.max(nHead, nKvHead) * headDim * 4 >= U32_LIMIT)
      issues.push({ path: 'n_head', message: `${nHead}×${headDim} f32 values exceed 2^32 bytes` });
  return issues;
}

/** Throws a ValidationError carrying ropeShapeIssues, when there are any. */
export function checkRopeShape(shape: Shape): void {
  const issues = ropeShapeIssues(shape);
  if (issues.length > 0) throw new ValidationError(issues);
}

/**
 * `x`'s heads with rope pair i (values 2i, 2i+1, or i, i + head_dim/2 in NeoX mode) of each turned
 * by `angle(i)` = (cos θ, sin θ), every value, product and sum passed through `round` (none by
 * default: float64; `Math.fround`: f32, operation by operation, as a kernel computes it).
 */
export function rotatePairs(
  x: ArrayLike<number>,
  heads: number,
  headDim: number,
  neox: boolean,
  angle: (pair: number) => readonly [number, number],
  round: (value: number) => number = (value) => value,
): Float64Array {
  const out = Float64Array.from({ length: heads * headDim }, (_, index) => round(x[index] ?? 0));
  const half = headDim / 2;
  for (let head = 0; head < heads; head++) {
    for (let i = 0; i < half; i++) {
      const [cos, sin] = angle(i);
      const [j0, j1] = neox ? [i, i + half] : [2 * i, 2 * i + 1];
      const x0 = out[head * headDim + j0] ?? 0;
      const x1 = out[head * headDim + j1] ?? 0;
      out[head * headDim + j0] = round(round(x0 * cos) - round(x1 * sin));
      out[head * headDim + j1] = round(round(x0 * sin) + round(x1 * cos));
    }
  }
  return out;
}

/** The float64 rotation of `x`'s heads at `pos`, θ from pow/cos/sin (never from the f32 table). */
export function rotateHeads(
  x: ArrayLike<number>,
  heads: number,
  headDim: number,
  pos: number,
  neox: boolean,
): Float64Array {
  return rotatePairs(x, heads, headDim, neox, (i) => {
    const theta = pos * Math.pow(ROPE_FREQ_BASE, (-2 * i) / headDim);
    return [Math.cos(theta), Math.sin(theta)];
  });
}

/**
 * Catalog kernel `rope`: rotary position embedding of q (`[n_head][head_dim]` f32) and k
 * (`[n_kv_head][head_dim]` f32) in place at position `pos`, pair i (< head_dim/2) rotated by θ =
 * pos · 10000^(−2i/head_dim) — ggml's normal mode, pairs (2i, 2i+1) as arch `llama` uses, or with
 * shape `neox` 1 NeoX mode, pairs (i, i + head_dim/2). θ comes from the `cos_sin` table
 * (`ropeTable(max_ctx, head_dim, 10000)`, row `pos` read); the reference computes it in float64.
 */
export const rope: CatalogKernel = {
  spec,
  shapeNames: ROPE_SHAPE_NAMES,
  defaultShape: { n_head: 32, n_kv_head: 8, head_dim: 128, pos: 17, max_ctx: 4096, neox: 0 },
  params: (shape) => Object.fromEntries(ROPE_SHAPE_NAMES.map((name) => [name, field(shape, name)])),
  bufferLengths: (shape) => {
    const size = fields<RopeField>(shape);
    return {
      q: size('n_head') * size('head_dim'),
      k: size('n_kv_head') * size('head_dim'),
      cos_sin: size('max_ctx') * size('head_dim'),
    };
  },
  outputs: ['q', 'k'],
  inPlace: ['q', 'k'],
  reference({ q = [], k = [] }, params) {
    const size = fields<RopeField>(params);
    const [headDim, pos, neox] = [size('head_dim'), size('pos'), size('neox') !== 0];
    return {
      q: rotateHeads(q, size('n_head'), headDim, pos, neox),
      k: rotateHeads(k, size('n_kv_head'), headDim, pos, neox),
    };
  },
  // Only the table's rounding to f32 and the f32 arithmetic differ from float64 (about 1e-14).
  tolerance: 1e-10,
  checkShape: checkRopeShape,
  generateInput: ({ buffer, shape }) =>
    buffer === 'cos_sin'
      ? ropeTable(field(shape, 'max_ctx'), field(shape, 'head_dim'), ROPE_FREQ_BASE)
      : undefined,
  describeInput: (buffer, shape) =>
    buffer === 'cos_sin'
      ? `[max_ctx ${shape['max_ctx']}][head_dim/2 ${field(shape, 'head_dim') / 2}][2] f32 (cos θ, sin θ), θ = pos·10000^(−2i/head_dim), as ropeTable writes it`
      : undefined,
};
