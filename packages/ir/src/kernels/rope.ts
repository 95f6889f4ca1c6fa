import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import type { Expr } from '../body.js';
import { add, div, lt, mul, ne, select, shr, sub } from '../expressions.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { ROPE_FREQ_BASE, ropeTable } from './rope-table.js';
import { U32_LIMIT, checkShapeFields } from './shape-fields.js';

const declarations = {
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
    grid: ['min(ceil_div((n_head + n_kv_head) * (head_dim / 2), workgroupSize), 65535)', '1', '1'],
  },
} as const;

type RopeBuilder = BodyBuilder<DeclaredBy<typeof declarations>>;

/** Rotates one pair of `buffer` at `base + first`, `base + second` by the angle (cos θ, sin θ). */
function rotatePair(
  block: RopeBuilder,
  buffer: 'q' | 'k',
  at: { readonly base: Expr<'u32'>; readonly first: Expr<'u32'>; readonly second: Expr<'u32'> },
  angle: { readonly cos: Expr<'f32'>; readonly sin: Expr<'f32'> },
): void {
  const [i0, i1] = [add(at.base, at.first), add(at.base, at.second)];
  const x0 = block.let(`${buffer}0`, block.load(buffer, i0));
  const x1 = block.let(`${buffer}1`, block.load(buffer, i1));
  block.store(buffer, i0, sub(mul(x0, angle.cos), mul(x1, angle.sin)));
  block.store(buffer, i1, add(mul(x0, angle.sin), mul(x1, angle.cos)));
}

const spec = defineKernel(declarations, (b) => {
  const size = b.schedule('workgroupSize');
  const headDim = b.param('head_dim');
  const nHead = b.param('n_head');
  const {
    half,
    row,
    isNeox: neox,
  } = b.let({
    half: shr(headDim, 1),
    // Row `pos` of the table holds head_dim/2 (cos, sin) pairs: head_dim values.
    row: mul(b.param('pos'), headDim),
    isNeox: ne(b.param('neox'), 0),
  });
  const { stride } = b.let({ stride: mul(b.numWorkgroups('x'), size) });
  const start = add(mul(b.workgroupId('x'), size), b.localId());
  const pairs = mul(add(nHead, b.param('n_kv_head')), half);
  b.for('p', { start, end: pairs, step: stride }, (loop, p) => {
    const { head } = loop.let({ head: div(p, half) });
    const { pair } = loop.let({ pair: sub(p, mul(head, half)) });
    const [cos, sin] = loop.loadVector('cos_sin', add(row, mul(pair, 2)), ['cos_t', 'sin_t']);
    // Normal mode rotates adjacent values (2i, 2i+1); NeoX mode value i with i + head_dim/2.
    const { first } = loop.let({ first: select(neox, pair, mul(pair, 2)) });
    const { second } = loop.let({ second: add(first, select(neox, half, 1)) });
    loop.if(
      lt(head, nHead),
      (block) => {
        const { qBase: base } = block.let({ qBase: mul(head, headDim) });
        rotatePair(block, 'q', { base, first, second }, { cos, sin });
      },
      (block) => {
        const { kBase: base } = block.let({ kBase: mul(sub(head, nHead), headDim) });
        rotatePair(block, 'k', { base, first, second }, { cos, sin });
      },
    );
  });
});

/** The shape names of `rope`, in listing order; each is also a u32 param (neox: 0 or 1). */
export const ROPE_SHAPE_NAMES = [
  'n_head',
  'n_kv_head',
  'head_dim',
  'pos',
  'max_ctx',
  'neox',
] as const;

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
  params: (shape) => Object.fromEntries(ROPE_SHAPE_NAMES.map((name) => [name, shape[name] ?? 0])),
  bufferLengths: (shape) => {
    const headDim = shape['head_dim'] ?? 0;
    return {
      q: (shape['n_head'] ?? 0) * headDim,
      k: (shape['n_kv_head'] ?? 0) * headDim,
      cos_sin: (shape['max_ctx'] ?? 0) * headDim,
    };
  },
  outputs: ['q', 'k'],
  inPlace: ['q', 'k'],
  reference(inputs, params) {
    const [headDim, pos] = [params['head_dim'] ?? 0, params['pos'] ?? 0];
    const neox = (params['neox'] ?? 0) !== 0;
    return {
      q: rotateHeads(inputs['q'] ?? [], params['n_head'] ?? 0, headDim, pos, neox),
      k: rotateHeads(inputs['k'] ?? [], params['n_kv_head'] ?? 0, headDim, pos, neox),
    };
  },
  // Only the table's rounding to f32 and the f32 arithmetic differ from float64 (about 1e-14).
  tolerance: 1e-10,
  checkShape: checkRopeShape,
  generateInput: ({ buffer, shape }) =>
    buffer === 'cos_sin'
      ? ropeTable(shape['max_ctx'] ?? 0, shape['head_dim'] ?? 0, ROPE_FREQ_BASE)
      : undefined,
  describeInput: (buffer, shape) =>
    buffer === 'cos_sin'
      ? `[max_ctx ${shape['max_ctx']}][head_dim/2 ${(shape['head_dim'] ?? 0) / 2}][2] f32 (cos θ, sin θ), θ = pos·10000^(−2i/head_dim), as ropeTable writes it`
      : undefined,
};
