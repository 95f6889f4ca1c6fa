import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import {
  add,
  and,
  convert,
  div,
  eq,
  f32,
  fma,
  le,
  lt,
  min,
  mul,
  select,
  shr,
  sqrt,
  sub,
  u32,
} from '../expressions.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import { four } from './locals.js';
import { quantizeXQuarter, X_GROUP } from './x-quantize.js';

type Four<T> = readonly [T, T, T, T];

/**
 * Workgroups a quantized row is split across: each sums the whole row's squares (the same threads
 * and order, so the same scale) and writes its part of s, y and the quantized groups. One workgroup
 * would move all of them through one SM's link to L2; the parts move the row's inputs again from L2.
 */
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

/** Values a vector load moves, and vec4s a thread loads a step before using any (16 values). */
const VECTOR = 4;
const UNROLL = 4;

/** Where a row's values come from: x itself, or the residual sum a + b (stored to s as well). */
type RmsnormInput = 'x' | 'residual';

/**
 * What a row-streaming mat-vec's first dispatch writes for x (gemv-rows.ts), as buffers: words
 * then factors (scales, then sums of 8) of row r at r·n_embd/2 and r·n_embd/32·5.
 */
const QUANTIZED_OUTPUTS = [
  { group: 0, binding: 5, name: 'x_quant', element: 'u32', access: 'read_write' },
  { group: 0, binding: 6, name: 'x_factors', element: 'f32', access: 'read_write' },
] as const;

function rmsnormInterface(input: RmsnormInput, quantize = true) {
  const x = { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' } as const;
  const residual = [
    { group: 0, binding: 0, name: 'a', element: 'f32', access: 'read' },
    { group: 0, binding: 1, name: 'b', element: 'f32', access: 'read' },
    { group: 0, binding: 4, name: 's', element: 'f32', access: 'read_write' },
  ] as const;
  return {
    buffers: [
      ...(input === 'x' ? [x] : residual.slice(0, 2)),
      { group: 0, binding: input === 'x' ? 1 : 2, name: 'w', element: 'f32', access: 'read' },
      { group: 0, binding: input === 'x' ? 2 : 3, name: 'y', element: 'f32', access: 'read_write' },
      ...(input === 'x' ? [] : residual.slice(2)),
      // Typed always (RmsnormBuilder); declared by add-rmsnorm-quantize alone.
      ...(quantize ? QUANTIZED_OUTPUTS : ([] as unknown as typeof QUANTIZED_OUTPUTS)),
    ],
    params: [
      { name: 'n_embd', type: 'u32' },
      { name: 'rows', type: 'u32' },
      { name: 'eps', type: 'f32' },
    ],
    shared: [{ name: 'partial', element: 'f32', length: `workgroupSize / ${WARP_SIZE}` }],
  } as const; // checked by defineKernel
}
// Its buffers' type holds both kernels' names; each body uses only its own (defineKernel checks).
type RmsnormBuilder = BodyBuilder<DeclaredBy<ReturnType<typeof rmsnormInterface>>>;

export function rmsnormSpec(input: RmsnormInput, quantize = false) {
  const residual = input === 'residual';
  const id = `${residual ? 'add-rmsnorm' : 'rmsnorm'}${quantize ? '-quantize' : ''}`;
  return defineKernel(
    {
      id,
      semanticVersion: residual ? 1 : 2,
      entryPoint: id.replaceAll('-', '_'),
      description: quantize
        ? 'add-rmsnorm (s = a + b, y = s * w / sqrt(mean s^2 + eps)), then y quantized as the row-streaming mat-vecs quantize x, into x_quant and x_factors, so they skip that dispatch; a row is split across `parts` workgroups, each summing the whole row and writing its share of whole groups'
        : residual
          ? 's[r,i] = a[r,i] + b[r,i] (the residual add), y[r,i] = s[r,i] * w[i] / sqrt(mean_i s[r,i]^2 + eps), one workgroup per row, 16 values a thread in flight'
          : 'y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps), one workgroup per row, 16 values a thread in flight',
      ...rmsnormInterface(input, quantize),
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
    (b) => rmsnormBody(b, input, quantize),
  );
}

/**
 * Loads a vec4 of the row's inputs at `at` (x, or a and b) and returns how to get its values where
 * they are used: x's as loaded, or a + b bound on the builder of the use.
 */
function loadValues(b: RmsnormBuilder, input: RmsnormInput, at: Expr<'u32'>, prefix: string) {
  if (input === 'x') {
    const x = b.loadVector(
      'x',
      at,
      four((k) => `${prefix}${k}`),
    );
    return (): Four<Expr<'f32'>> => x;
  }
  const a = b.loadVector(
    'a',
    at,
    four((k) => `${prefix}a${k}`),
  );
  const other = b.loadVector(
    'b',
    at,
    four((k) => `${prefix}b${k}`),
  );
  return (use: RmsnormBuilder): Four<Expr<'f32'>> =>
    four((k) => use.let(`${prefix}${k}`, add(a[k], other[k])));
}

function rmsnormBody(b: RmsnormBuilder, input: RmsnormInput, quantize: boolean): void {
  const size = b.schedule('workgroupSize');
  const nEmbd = b.param('n_embd');
  const { row } = b.let({ row: b.workgroupId(quantize ? 'y' : 'x') });
  // The guard is workgroup-uniform, so the barrier inside it is reached by all threads or none.
  b.if(lt(row, b.param('rows')), (body) => {
    const { base, sum, vectorRows } = body.let({
      base: mul(row, nEmbd),
      sum: f32(0),
      // Rows of a multiple of 4 values start on 16-byte boundaries: x, w and y move in vec4s.
      vectorRows: eq(and(nEmbd, VECTOR - 1), 0),
    });
    const { first } = body.let({ first: mul(body.localId(), VECTOR) });
    // This workgroup's share of the row when quantizing: whole groups, `partSlots` 8-value slots.
    const share = quantize ? partShare(body, nEmbd) : undefined;
    const stride = mul(size, VECTOR * UNROLL);
    const scalarValue = (loop: RmsnormBuilder, index: Expr<'u32'>): Expr<'f32'> =>
      input === 'x' ? loop.load('x', index) : add(loop.load('a', index), loop.load('b', index));
    body.if(
      vectorRows,
      (vector) =>
        vector.for('i', { start: first, end: nEmbd, step: stride }, (loop, i) => {
          const xs = vectorsAt(loop, 'x', size, nEmbd, i, (at, u) =>
            loadValues(loop, input, add(base, at), `x${u}_`),
          );
          for (const { live, at, values } of xs) {
            const vector = values(loop);
            // The residual sum goes out once, by the thread (and part) that owns it.
            const owned = share === undefined ? live : and(live, share.owns(at));
            if (input === 'residual')
              loop.if(owned, (store) => store.storeVector('s', add(base, at), vector));
            for (const value of vector) {
              const kept = select(live, value, f32(0));
              loop.assign(sum, fma(kept, kept, sum));
            }
          }
        }),
      (scalar) =>
        scalar.for('i_scalar', { start: scalar.localId(), end: nEmbd, step: size }, (loop, i) => {
          const { value } = loop.let({ value: scalarValue(loop, add(base, i)) });
          if (input === 'residual')
            if (share === undefined) loop.store('s', add(base, i), value);
            else loop.if(share.owns(i), (store) => store.store('s', add(base, i), value));
          loop.assign(sum, fma(value, value, sum));
        }),
    );
    const total = body.blockReduce('add', sum, 'partial', div(size, WARP_SIZE));
    const mean = div(total, convert('f32', nEmbd));
    const { invRms: scale } = body.let({
      invRms: div(1, sqrt(add(mean, body.param('eps')))),
    });
    // Quantizing, the second pass is quantizeRow's: it stores y beside the quantized words.
    if (share !== undefined) {
      quantizeRow(body, input, { row, base, nEmbd, scale, share });
      return;
    }
    // The second pass reads its inputs again (from cache) rather than s, which other threads wrote.
    body.if(
      vectorRows,
      (vector) =>
        vector.for('j', { start: first, end: nEmbd, step: stride }, (loop, j) => {
          const loaded = vectorsAt(loop, 'y', size, nEmbd, j, (at, u) => ({
            x: loadValues(loop, input, add(base, at), `y_x${u}_`),
            w: loop.loadVector(
              'w',
              at,
              four((k) => `y_w${u}_${k}`),
            ),
          }));
          loaded.forEach(({ live, at, values: { x, w } }) => {
            const vector = x(loop);
            loop.if(live, (store) => {
              const y = four((k) => mul(mul(vector[k], scale), w[k]));
              store.storeVector('y', add(base, at), y);
            });
          });
        }),
      (scalar) =>
        scalar.for('j_scalar', { start: scalar.localId(), end: nEmbd, step: size }, (loop, j) => {
          const index = add(base, j);
          loop.store('y', index, mul(mul(scalarValue(loop, index), scale), loop.load('w', j)));
        }),
    );
  });
}

/** A workgroup's share of a quantized row: 8-value slots [first, end), whole 32-value groups. */
interface PartShare {
  readonly slotFirst: Var<'u32'>;
  readonly slotEnd: Var<'u32'>;
  /** Slots of a part, a multiple of 4. */
  readonly slots: Var<'u32'>;
  /** Whether value `index` of the row is this part's. */
  readonly owns: (index: Expr<'u32'>) => Expr<'bool'>;
  /** w at the thread's first slot (8 values), loaded before the sums so it is there after them. */
  readonly w: readonly Var<'f32'>[];
}

function partShare(b: RmsnormBuilder, n: Expr<'u32'>): PartShare {
  const parts = b.schedule('parts');
  const { partSlots: slots } = b.let({
    partSlots: mul(div(add(div(n, X_GROUP), sub(parts, 1)), parts), 4),
  });
  const { slotFirst, slotCount } = b.let({
    slotFirst: mul(b.workgroupId('x'), slots),
    slotCount: div(n, 8),
  });
  const { slotEnd } = b.let({ slotEnd: min(add(slotFirst, slots), slotCount) });
  const [valueFirst, valueEnd] = [mul(slotFirst, 8), mul(slotEnd, 8)];
  const { wFirst } = b.let({ wFirst: mul(min(add(slotFirst, b.localId()), sub(slotCount, 1)), 8) });
  const w = [0, 4].flatMap((offset) =>
    b.loadVector(
      'w',
      offset === 0 ? wFirst : add(wFirst, offset),
      four((i) => `w_first${offset}_${i}`),
    ),
  );
  return {
    slotFirst,
    slotEnd,
    slots,
    owns: (index) => and(le(valueFirst, index), lt(index, valueEnd)),
    w,
  };
}

/**
 * The second pass of add-rmsnorm-quantize, four lanes a 32-value group (quantizeXQuarter), 8 values
 * a lane: y computed as add-rmsnorm's second pass computes it (inputs from cache) and stored, then
 * quantized and stored as a row-streaming mat-vec's first dispatch would store it (gemv-rows.ts),
 * bit for bit. The loop runs the same steps in every thread (the shuffles need every lane): a lane
 * past the row reads its last 8 values and stores nothing.
 */
function quantizeRow(
  b: RmsnormBuilder,
  input: RmsnormInput,
  at: {
    readonly row: Var<'u32'>;
    readonly base: Var<'u32'>;
    readonly nEmbd: Expr<'u32'>;
    readonly scale: Var<'f32'>;
    readonly share: PartShare;
  },
): void {
  const { row, base, nEmbd: n, scale, share } = at;
  const size = b.schedule('workgroupSize');
  const { qGroups: groups, lanes } = b.let({ qGroups: div(n, X_GROUP), lanes: div(n, 8) });
  const {
    quantRow,
    factorRow,
    qEnd: end,
  } = b.let({
    quantRow: mul(row, div(n, 2)),
    factorRow: mul(row, mul(groups, 5)),
    qEnd: mul(div(add(share.slots, sub(size, 1)), size), size),
  });
  // Uniform bounds (the shuffles need every lane): a step's slot is the part's first, the step's
  // start and the thread; slots past the part's read its row's last 8 values. The first step's w
  // was loaded before the sums (share.w); the others load theirs.
  const step = (q: RmsnormBuilder, start: Expr<'u32'>, tag: string, w?: readonly Var<'f32'>[]) => {
    const name = (base: string): string => `q${tag}_${base}`;
    const slot = q.let(name('slot'), add(add(share.slotFirst, start), q.localId()));
    const live = q.let(name('live'), lt(slot, share.slotEnd));
    const first = q.let(name('first'), mul(min(slot, sub(lanes, 1)), 8));
    const group = q.let(name('group'), shr(slot, 2));
    const part = q.let(name('part'), and(slot, 3));
    const values = [0, 4].flatMap((offset, half) => {
      const index = offset === 0 ? first : q.let(name(`at${offset}`), add(first, offset));
      const x = loadValues(q, input, add(base, index), name(`x${offset}_`))(q);
      const ws = w?.slice(4 * half, 4 * half + 4) ?? q.loadVector('w', index, four((i) => name(`w${offset}_${i}`))); // prettier-ignore
      return four((i) => q.let(name(`y${offset}_${i}`), mul(mul(x[i], scale), ws[i]!)));
    });
    q.if(live, (store) =>
      [0, 4].forEach(
        (offset, half) =>
        store.storeVector('y', add(add(base, first), offset), values.slice(4 * half, 4 * half + 4) as [Var<'f32'>, Var<'f32'>, Var<'f32'>, Var<'f32'>]), // prettier-ignore
      ),
    );
    const quantized = quantizeXQuarter(q as unknown as Parameters<typeof quantizeXQuarter>[0], values, tag === '' ? '' : `q${tag}_`); // prettier-ignore
    q.if(live, (store) => {
      const word = store.let(name('word'), add(add(quantRow, mul(group, X_QUANT_GROUP_WORDS)), mul(part, 2))); // prettier-ignore
      const [low, high] = quantized.words as [(typeof quantized.words)[0], (typeof quantized.words)[0]]; // prettier-ignore
      store.storeVector('x_quant', word, [low.high, high.high]);
      store.storeVector('x_quant', add(word, 8), [low.low, high.low]);
      store.store('x_factors', add(add(add(factorRow, groups), mul(group, 4)), part), quantized.sum); // prettier-ignore
      store.if(eq(part, 0), (lead) => lead.store('x_factors', add(factorRow, group), quantized.scale)); // prettier-ignore
    });
  };
  step(b, u32(0), '_first', share.w);
  b.for('q_step', { start: size, end, step: size }, (q, start) => step(q, start, ''));
}

/**
 * The UNROLL vec4s of a step from value `start`, 4·size apart: each loaded by `load` at its
 * index clamped into the row (so every load of the step issues before any use), with whether it
 * lies in the row.
 */
function vectorsAt<T>(
  b: RmsnormBuilder,
  prefix: string,
  size: Expr<'u32'>,
  nEmbd: Expr<'u32'>,
  start: Var<'u32'>,
  load: (at: Var<'u32'>, u: number) => T,
): { live: Var<'bool'>; at: Var<'u32'>; values: T }[] {
  return Array.from({ length: UNROLL }, (_, u) => {
    const index = u === 0 ? start : b.let(`${prefix}_index${u}`, add(start, mul(size, VECTOR * u)));
    const live = b.let(`${prefix}_live${u}`, lt(index, nEmbd));
    const at = b.let(`${prefix}_at${u}`, min(index, sub(nEmbd, VECTOR)));
    return { live, at, values: load(at, u) };
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

export const rowsShape = {
  shapeNames: ['n_embd', 'rows'],
  defaultShape: { n_embd: 4096, rows: 3 },
  params: (shape: Shape) => ({
    n_embd: shape['n_embd'] ?? 0,
    rows: shape['rows'] ?? 0,
    eps: 1e-6,
  }),
  tolerance: 1e-10,
} as const;
export const rowValues = (shape: Shape): number => (shape['n_embd'] ?? 0) * (shape['rows'] ?? 0);

/**
 * Catalog kernel `rmsnorm`: y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps) over `rows` rows
 * of `n_embd` f32, one workgroup per row (eps is 1e-6 in the catalog's params).
 */
export const rmsnorm: CatalogKernel = {
  spec: rmsnormSpec('x'),
  ...rowsShape,
  bufferLengths: (shape) => ({ x: rowValues(shape), w: shape['n_embd'] ?? 0, y: rowValues(shape) }),
  outputs: ['y'],
  reference(inputs, params) {
    const [n, rows] = [params['n_embd'] ?? 0, params['rows'] ?? 0];
    return { y: normalizeRows(inputs['x'] ?? [], inputs['w'] ?? [], n, rows, params['eps'] ?? 0) };
  },
  // Pins a non-default workgroup size, so a schedule-dependent change shows in a golden diff.
  goldenSchedules: { ptx: [{ workgroupSize: 128 }] },
};

/**
 * Catalog kernel `add-rmsnorm`: the residual add and the next RMSNorm in one launch, s = a + b and
 * y = rmsnorm(s) · w (a decode step's attn/ffn residual with the norm after it), one workgroup a row.
 */
export const addRmsnorm: CatalogKernel = {
  spec: rmsnormSpec('residual'),
  ...rowsShape,
  bufferLengths: (shape) => {
    const values = rowValues(shape);
    return { a: values, b: values, w: shape['n_embd'] ?? 0, y: values, s: values };
  },
  outputs: ['s', 'y'],
  reference(inputs, params) {
    const [a, b] = [inputs['a'] ?? [], inputs['b'] ?? []];
    const [n, rows] = [params['n_embd'] ?? 0, params['rows'] ?? 0];
    const s = Float64Array.from({ length: n * rows }, (_, i) => (a[i] ?? 0) + (b[i] ?? 0));
    return { s, y: normalizeRows(s, inputs['w'] ?? [], n, rows, params['eps'] ?? 0) };
  },
};
