// Catalog kernels `rmsnorm` and `add-rmsnorm`, and the body `add-rmsnorm-quantize` shares with
// them: y[r,i] = x[r,i]·w[i] / sqrt(mean_i x[r,i]² + eps), x the row itself or the residual sum
// s = a + b (stored to s as well).
//
// Bandwidth plan: one workgroup a row; each thread issues UNROLL vec4 loads (16 values) before it
// uses any, so x (or a and b) and w stream in 16-byte accesses; a row whose length is not a
// multiple of 4 takes a scalar loop. The second pass reads its inputs again (from L2) rather than
// s, which other threads wrote. add-rmsnorm-quantize splits a row across `parts` workgroups, each
// summing the whole row (the same threads and order, so the same scale) and writing its share of
// y and of the quantized groups: one workgroup would move all of them through one SM's link to L2.
import { WARP_SIZE } from '../body.js';
import {
  defineKernel,
  type BodyBuilder,
  type DeclaredBy,
  type KernelDeclarations,
} from '../builder.js';
import type { Local, Value } from '../expression-methods.js';
import { div, f32 } from '../expressions.js';
import type { BufferDecl } from '../spec.js';
import type { BufferData, CatalogKernel, Shape } from './catalog-kernel.js';
import { X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import { four, vectorNames } from './locals.js';
import type { Four } from './tuples.js';
import { quantizeXQuarter, X_GROUP } from './x-quantize.js';

export type RmsnormId = 'rmsnorm' | 'add-rmsnorm' | 'add-rmsnorm-quantize';

/** Values a vector load moves, and vec4s a thread loads a step before using any (16 values). */
const VECTOR = 4;
const UNROLL = 4;

const RESIDUAL = [
  { group: 0, binding: 0, name: 'a', element: 'f32', access: 'read' },
  { group: 0, binding: 1, name: 'b', element: 'f32', access: 'read' },
  { group: 0, binding: 2, name: 'w', element: 'f32', access: 'read' },
  { group: 0, binding: 3, name: 'y', element: 'f32', access: 'read_write' },
  { group: 0, binding: 4, name: 's', element: 'f32', access: 'read_write' },
] as const;

const BUFFERS = {
  rmsnorm: [
    { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
    { group: 0, binding: 1, name: 'w', element: 'f32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  'add-rmsnorm': RESIDUAL,
  // y quantized as a row-streaming mat-vec's first dispatch writes x (gemv-rows.ts): words, then
  // factors (scales, then sums of 8) of row r at r·n_embd/2 and r·n_embd/32·5.
  'add-rmsnorm-quantize': [
    ...RESIDUAL,
    { group: 0, binding: 5, name: 'x_quant', element: 'u32', access: 'read_write' },
    { group: 0, binding: 6, name: 'x_factors', element: 'f32', access: 'read_write' },
  ],
} as const satisfies Record<RmsnormId, readonly BufferDecl[]>;
/** A buffer of any of the three kernels: each declares its own, the builder knows them all. */
type RmsnormBuffer = (typeof BUFFERS)[RmsnormId][number];

const PARAMS = [
  { name: 'n_embd', type: 'u32' },
  { name: 'rows', type: 'u32' },
  { name: 'eps', type: 'f32' },
] as const;
const SHARED = [
  { name: 'partial', element: 'f32', length: `workgroupSize / ${WARP_SIZE}` },
] as const;

/** The three kernels' declarations as the body sees them: every buffer any of them declares. */
interface RmsnormDeclarations extends KernelDeclarations {
  readonly buffers: readonly RmsnormBuffer[];
  readonly params: typeof PARAMS;
  readonly shared: typeof SHARED;
}
type RmsnormBuilder = BodyBuilder<DeclaredBy<RmsnormDeclarations>>;

const DESCRIPTIONS: Record<RmsnormId, string> = {
  rmsnorm:
    'y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps), one workgroup per row, 16 values a thread in flight',
  'add-rmsnorm':
    's[r,i] = a[r,i] + b[r,i] (the residual add), y[r,i] = s[r,i] * w[i] / sqrt(mean_i s[r,i]^2 + eps), one workgroup per row, 16 values a thread in flight',
  'add-rmsnorm-quantize':
    'add-rmsnorm (s = a + b, y = s * w / sqrt(mean s^2 + eps)), then y quantized as the row-streaming mat-vecs quantize x, into x_quant and x_factors, so they skip that dispatch; a row is split across `parts` workgroups, each summing the whole row and writing its share of whole groups',
};

/** The spec of `id`. */
export function rmsnormSpec(id: RmsnormId) {
  const quantize = id === 'add-rmsnorm-quantize';
  return defineKernel<RmsnormDeclarations>(
    {
      id,
      semanticVersion: id === 'rmsnorm' ? 2 : 1,
      entryPoint: id.replaceAll('-', '_'),
      description: DESCRIPTIONS[id],
      buffers: BUFFERS[id],
      params: PARAMS,
      shared: SHARED,
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per row; a multiple of the 32-lane warp',
          default: 256,
          bounds: {
            ptx: { min: 32, max: 1024, multipleOf: 32 },
            wgsl: { min: 32, max: 1024, multipleOf: 32 },
          },
        },
        ...(quantize ? [PARTS_KNOB] : []),
      ],
      launch: {
        workgroupSize: 'workgroupSize',
        grid: quantize ? ['parts', 'rows', '1'] : ['rows', '1', '1'],
      },
    },
    (b) => rmsnormBody(b, id !== 'rmsnorm', quantize),
  );
}

/** Workgroups a quantized row is split across (see the plan at the top). */
const PARTS_KNOB = {
  name: 'parts',
  description:
    'workgroups a row is split across (add-rmsnorm-quantize), each writing its share of whole 32-value groups',
  default: 8,
  bounds: {
    ptx: { min: 1, max: 16, powerOfTwo: true },
    wgsl: { min: 1, max: 16, powerOfTwo: true },
  },
} as const;

/**
 * Loads a vec4 of the row's inputs at `at` (x, or a and b) and returns how to get its values where
 * they are used: x's as loaded, or a + b declared there.
 */
function loadValues(b: RmsnormBuilder, residual: boolean, at: Value<'u32'>) {
  if (!residual) {
    const x = b.loadVector('x', at, vectorNames('x'));
    return (): Four<Value<'f32'>> => x;
  }
  const a = b.loadVector('a', at, vectorNames('a'));
  const other = b.loadVector('b', at, vectorNames('b'));
  return (): Four<Value<'f32'>> => four((k) => b.let('value', a[k].add(other[k])));
}

function rmsnormBody(b: RmsnormBuilder, residual: boolean, quantize: boolean): void {
  const { w, y } = b.memory;
  const size = b.schedule('workgroupSize');
  const n = b.param('n_embd');
  const value = (index: Value<'u32'>): Value<'f32'> =>
    residual ? b.load('a', index).add(b.load('b', index)) : b.load('x', index);
  const row = b.let('row', b.workgroupId(quantize ? 'y' : 'x'));
  // The guard is workgroup-uniform, so the barrier inside it is reached by all threads or none.
  b.if(row.lt(b.param('rows')), () => {
    const base = b.let('base', row.mul(n));
    const sum = b.let('sum', f32(0));
    // Rows of a multiple of 4 values start on 16-byte boundaries: x, w and y move in vec4s.
    const vectorRows = b.let('vector_rows', n.and(VECTOR - 1).eq(0));
    const first = b.let('first', b.localId().mul(VECTOR));
    const share = quantize ? partShare(b, n) : undefined;
    const stride = size.mul(VECTOR * UNROLL);
    b.if(
      vectorRows,
      () =>
        b.for('i', { start: first, end: n, step: stride }, (_, i) => {
          const steps = vectorsAt(b, size, n, i, (at) => loadValues(b, residual, base.add(at)));
          for (const { live, at, values } of steps) {
            const vector = values();
            // The residual sum goes out once, by the thread (and part) that owns it.
            const owned = share === undefined ? live : live.and(share.owns(at));
            if (residual) b.if(owned, () => b.storeVector('s', base.add(at), vector));
            for (const x of vector) {
              const kept = live.select(x, f32(0));
              b.assign(sum, kept.fma(kept, sum));
            }
          }
        }),
      () =>
        b.for('i_scalar', { start: b.localId(), end: n, step: size }, (_, i) => {
          const x = b.let('value', value(base.add(i)));
          const store = () => b.store('s', base.add(i), x);
          if (residual && share) b.if(share.owns(i), store);
          else if (residual) store();
          b.assign(sum, x.fma(x, sum));
        }),
    );
    const total = b.blockReduce('add', sum, 'partial', size.div(WARP_SIZE));
    const scale = b.let('inv_rms', div(1, total.div(n.to('f32')).add(b.param('eps')).sqrt()));
    // Quantizing, the second pass is quantizeRow's: it stores y beside the quantized words.
    if (share !== undefined) return quantizeRow(b, residual, share, [row, base, scale]);
    // The second pass reads its inputs again (from cache) rather than s, which other threads wrote.
    b.if(
      vectorRows,
      () =>
        b.for('j', { start: first, end: n, step: stride }, (_, j) => {
          const steps = vectorsAt(b, size, n, j, (at) => ({
            x: loadValues(b, residual, base.add(at)),
            w: b.loadVector('w', at, vectorNames('w')),
          }));
          for (const { live, at, values } of steps) {
            const x = values.x();
            b.if(live, () =>
              b.storeVector(
                'y',
                base.add(at),
                four((k) => x[k].mul(scale).mul(values.w[k])),
              ),
            );
          }
        }),
      () =>
        b.for('j_scalar', { start: b.localId(), end: n, step: size }, (_, j) => {
          const index = base.add(j);
          y.store(index, value(index).mul(scale).mul(w.at(j)));
        }),
    );
  });
}

/**
 * A workgroup's share of a quantized row: 8-value slots [slotFirst, slotEnd), `slots` of them (a
 * multiple of 4: whole 32-value groups), whether a value of the row is its, and w at the thread's
 * first slot (8 values), loaded before the sums so it is there after them.
 */
function partShare(b: RmsnormBuilder, n: Value<'u32'>) {
  const parts = b.schedule('parts');
  const slots = b.let('part_slots', n.div(X_GROUP).add(parts.sub(1)).div(parts).mul(4));
  const { slotFirst, slotCount } = b.let({
    slotFirst: b.workgroupId('x').mul(slots),
    slotCount: n.div(8),
  });
  const slotEnd = b.let('slot_end', slotFirst.add(slots).min(slotCount));
  const wFirst = b.let('w_first', slotFirst.add(b.localId()).min(slotCount.sub(1)).mul(8));
  const w = [
    b.loadVector('w', wFirst, vectorNames('w')),
    b.loadVector('w', wFirst.add(4), vectorNames('w')),
  ] as const;
  const [from, to] = [slotFirst.mul(8), slotEnd.mul(8)];
  const owns = (index: Value<'u32'>) => from.le(index).and(index.lt(to));
  return { slotFirst, slotEnd, slots, owns, w };
}

type PartShare = ReturnType<typeof partShare>;

/**
 * The second pass of add-rmsnorm-quantize, four lanes a 32-value group (quantizeXQuarter), 8 values
 * a lane: y computed as add-rmsnorm's second pass computes it (inputs from cache) and stored, then
 * quantized and stored as a row-streaming mat-vec's first dispatch would store it (gemv-rows.ts),
 * bit for bit. The loop runs the same steps in every thread (the shuffles need every lane): a lane
 * past the row reads its last 8 values and stores nothing.
 */
function quantizeRow(
  b: RmsnormBuilder,
  residual: boolean,
  share: PartShare,
  [row, base, scale]: readonly [Local<'u32'>, Local<'u32'>, Local<'f32'>],
): void {
  const [size, n] = [b.schedule('workgroupSize'), b.param('n_embd')];
  const { qGroups: groups, lanes } = b.let({ qGroups: n.div(X_GROUP), lanes: n.div(8) });
  const { quantRow, factorRow, stepsEnd } = b.let({
    quantRow: row.mul(n.div(2)),
    factorRow: row.mul(groups.mul(5)),
    stepsEnd: share.slots.add(size.sub(1)).div(size).mul(size),
  });
  // A step's slot is the part's first, the step's start and the thread; slots past the part's read
  // its row's last 8 values. The first step's w was loaded before the sums (share.w).
  const step = (start: Value<'u32'> | number, ws?: PartShare['w']) => {
    const slot = b.let('slot', share.slotFirst.add(start).add(b.localId()));
    const live = b.let('live', slot.lt(share.slotEnd));
    const first = b.let('first', slot.min(lanes.sub(1)).mul(8));
    const group = b.let('group_id', slot.shr(2));
    const part = b.let('part', slot.and(3));
    const half = (offset: 0 | 4, w?: Four<Local<'f32'>>) => {
      const index = offset === 0 ? first : b.let('at', first.add(offset));
      const x = loadValues(b, residual, base.add(index))();
      const wv = w ?? b.loadVector('w', index, vectorNames('w'));
      return four((i) => b.let('norm', x[i].mul(scale).mul(wv[i])));
    };
    const halves = [half(0, ws?.[0]), half(4, ws?.[1])];
    b.if(live, () =>
      halves.forEach((values, k) => b.storeVector('y', base.add(first).add(4 * k), values)),
    );
    const quantized = quantizeXQuarter(b, halves.flat());
    const [low, high] = quantized.words;
    if (low === undefined || high === undefined) throw new Error('quantizeXQuarter: two words');
    b.if(live, () => {
      const word = b.let('word', quantRow.add(group.mul(X_QUANT_GROUP_WORDS)).add(part.mul(2)));
      b.storeVector('x_quant', word, [low.high, high.high]);
      b.storeVector('x_quant', word.add(8), [low.low, high.low]);
      b.store('x_factors', factorRow.add(groups).add(group.mul(4)).add(part), quantized.sum);
      b.if(part.eq(0), () => b.store('x_factors', factorRow.add(group), quantized.scale));
    });
  };
  step(0, share.w);
  b.for('q_step', { start: size, end: stepsEnd, step: size }, (_, start) => step(start));
}

/**
 * The UNROLL vec4s of a step from value `start`, 4·size apart: each loaded by `load` at its index
 * clamped into the row (so every load of the step issues before any use), with whether it lies in
 * the row.
 */
function vectorsAt<T>(
  b: RmsnormBuilder,
  size: Value<'u32'>,
  n: Value<'u32'>,
  start: Local<'u32'>,
  load: (at: Local<'u32'>) => T,
): { live: Local<'bool'>; at: Local<'u32'>; values: T }[] {
  return Array.from({ length: UNROLL }, (_, u) => {
    const index = u === 0 ? start : b.let('index', start.add(size.mul(VECTOR * u)));
    const live = b.let('live', index.lt(n));
    const at = b.let('at', index.min(n.sub(VECTOR)));
    return { live, at, values: load(at) };
  });
}

/** y = x · w / sqrt(mean(x²) + eps) a row of n values, in float64. */
function normalizeRows(
  x: ArrayLike<number>,
  w: ArrayLike<number>,
  n: number,
  rows: number,
  eps: number,
) {
  const y = new Float64Array(n * rows);
  for (let r = 0; r < rows; r++) {
    let squares = 0;
    for (let i = 0; i < n; i++) squares += (x[r * n + i] ?? 0) ** 2;
    const denominator = Math.sqrt(squares / n + eps);
    for (let i = 0; i < n; i++) y[r * n + i] = ((x[r * n + i] ?? 0) * (w[i] ?? 0)) / denominator;
  }
  return y;
}

/** n_embd and rows of a shape or params, and its values n_embd·rows (0 for a missing field). */
export function rowDims(shape: Shape): { n: number; rows: number; values: number } {
  const [n, rows] = [shape['n_embd'] ?? 0, shape['rows'] ?? 0];
  return { n, rows, values: n * rows };
}

export const rowsShape = {
  shapeNames: ['n_embd', 'rows'],
  defaultShape: { n_embd: 4096, rows: 3 },
  params: (shape: Shape) => {
    const { n, rows } = rowDims(shape);
    return { n_embd: n, rows, eps: 1e-6 };
  },
  tolerance: 1e-10,
} as const;

/**
 * Catalog kernel `rmsnorm`: y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps) over `rows` rows
 * of `n_embd` f32, one workgroup per row (eps is 1e-6 in the catalog's params).
 */
export const rmsnorm: CatalogKernel = {
  spec: rmsnormSpec('rmsnorm'),
  ...rowsShape,
  bufferLengths: (shape) => {
    const { n, values } = rowDims(shape);
    return { x: values, w: n, y: values };
  },
  outputs: ['y'],
  reference(inputs, params) {
    const { n, rows } = rowDims(params);
    return { y: normalizeRows(inputs['x'] ?? [], inputs['w'] ?? [], n, rows, params['eps'] ?? 0) };
  },
};

/** add-rmsnorm's s = a + b and y = rmsnorm(s) · w, in float64. */
export function addRmsnormReference(
  inputs: BufferData,
  params: Readonly<Record<string, number>>,
): { s: Float64Array; y: Float64Array } {
  const [a, b] = [inputs['a'] ?? [], inputs['b'] ?? []];
  const { n, rows, values } = rowDims(params);
  const s = Float64Array.from({ length: values }, (_, i) => (a[i] ?? 0) + (b[i] ?? 0));
  return { s, y: normalizeRows(s, inputs['w'] ?? [], n, rows, params['eps'] ?? 0) };
}

/**
 * Catalog kernel `add-rmsnorm`: the residual add and the next RMSNorm in one launch, s = a + b and
 * y = rmsnorm(s) · w (a decode step's attn/ffn residual with the norm after it), one workgroup a row.
 */
export const addRmsnorm: CatalogKernel = {
  spec: rmsnormSpec('add-rmsnorm'),
  ...rowsShape,
  bufferLengths: (shape) => {
    const { n, values } = rowDims(shape);
    return { a: values, b: values, w: n, y: values, s: values };
  },
  outputs: ['s', 'y'],
  reference: addRmsnormReference,
};
