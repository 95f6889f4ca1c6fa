// Catalog kernel `argmax`: the index of the largest logit (greedy decoding's last step).
import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { ValidationError } from '../errors.js';
import { add, and, div, eq, gt, lt, mul, select, shr, u32 } from '../expressions.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { fillUniform, type Rng } from './random.js';

/** An index no lane holds (n < 2^32 - 1): the identity of the lowest-index reduction. */
const NO_INDEX = 0xffffffff;

// One workgroup: thread t scans the groups of four x[4g .. 4g + 3] for g = t, t + size, … (one
// 16-byte load each), then x[4·⌊n/4⌋ + t] if that is below n, keeping the first largest it sees
// (strict `>` in increasing index order, so its lowest index), starting from x[0] at index 0 — a
// real candidate, so threads past n need no −inf sentinel (WGSL has no infinite constant) and all
// −inf input still gives 0. A warp takes the max of its lanes' values, then the lowest index
// among the lanes holding it; warps meet in shared memory and fold the same way. Both folds are
// exact and order-free, so the result is deterministic: the lowest index of a value equal (==)
// to the max, what a float64 scan with `>` gives. `value` is x[index] read back, so even −0 against +0 matches bit for bit.
// Cost model, H200, n 32000: 0.91 µs at 256 threads (1.60 with scalar loads), 1.38 at 1024, 2.55
// at 32; one SM, issue-bound — small beside a decode step's mat-vecs.
const spec = defineKernel(
  {
    id: 'argmax',
    semanticVersion: 1,
    entryPoint: 'argmax',
    description:
      'index[0] = the lowest i < n with x[i] the largest of x (f32, n >= 1), value[0] = x[index]; one workgroup; NaN inputs are not handled',
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'index', element: 'u32', access: 'read_write' },
      { group: 0, binding: 2, name: 'value', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [
      { name: 'warp_value', element: 'f32', length: `workgroupSize / ${WARP_SIZE}` },
      { name: 'warp_index', element: 'u32', length: `workgroupSize / ${WARP_SIZE}` },
    ],
    schedule: [
      {
        name: 'workgroupSize',
        description: 'threads of the one workgroup; a multiple of the 32-lane warp',
        default: 256,
        bounds: {
          ptx: { min: 32, max: 1024, multipleOf: 32 },
          wgsl: { min: 32, max: 1024, multipleOf: 32 },
        },
      },
    ],
    launch: { workgroupSize: 'workgroupSize', grid: ['1', '1', '1'] },
  },
  (b) => {
    const size = b.schedule('workgroupSize');
    const n = b.param('n');
    const { best, at, groups } = b.let({ best: b.load('x', 0), at: u32(0), groups: shr(n, 2) });
    // Visits x[index] in increasing order per thread: the strict `>` keeps the first largest.
    const visit = (block: typeof b, value: Expr<'f32'>, index: Expr<'u32'>): void =>
      block.if(gt(value, best), (better) => {
        better.assign(best, value);
        better.assign(at, index);
      });
    // Groups of four in one 16-byte load, then the n % 4 last elements, one a thread.
    b.for('g', { start: b.localId(), end: groups, step: size }, (loop, g) => {
      const { base } = loop.let({ base: mul(g, 4) });
      const values = loop.loadVector('x', base, ['x0', 'x1', 'x2', 'x3']);
      values.forEach((value, k) => visit(loop, value, add(base, k)));
    });
    b.if(lt(b.localId(), and(n, 3)), (tail) => {
      const { last } = tail.let({ last: add(mul(groups, 4), tail.localId()) });
      visit(tail, tail.load('x', last), last);
    });
    const warpMax = b.reduce('max', 'warp_max', best);
    const warpAt = b.reduce('min', 'warp_at', select(eq(best, warpMax), at, NO_INDEX));
    b.if(eq(b.laneId(), 0), (lane0) => {
      lane0.store('warp_value', lane0.warpId(), warpMax);
      lane0.store('warp_index', lane0.warpId(), warpAt);
    });
    b.barrier();
    // Lanes past the warp count take warp 0's pair again: a real candidate, no sentinel needed.
    const { lane } = b.let({
      lane: select(lt(b.laneId(), div(size, WARP_SIZE)), b.laneId(), u32(0)),
    });
    const { groupBest, groupAt } = b.let({
      groupBest: b.load('warp_value', lane),
      groupAt: b.load('warp_index', lane),
    });
    const allMax = b.reduce('max', 'all_max', groupBest);
    const allAt = b.reduce('min', 'all_at', select(eq(groupBest, allMax), groupAt, NO_INDEX));
    b.if(eq(b.localId(), 0), (first) => {
      first.store('index', 0, allAt);
      first.store('value', 0, first.load('x', allAt));
    });
  },
);

const sizeOf = (shape: Shape): number => shape['n'] ?? 0;

/** Throws a ValidationError when n is not a count argmax can take (at least 1, below 2^32 - 1). */
function checkShape(shape: Shape): void {
  const n = sizeOf(shape);
  if (!Number.isSafeInteger(n) || n < 1 || n >= NO_INDEX)
    throw new ValidationError([
      { path: 'n', message: `${n} is not between 1 and ${NO_INDEX - 1}` },
    ]);
}

/** The input families of `argmax` (see argmaxFamily). */
export const ARGMAX_FAMILIES = [
  'ties',
  'twin-max',
  'max-first',
  'max-last',
  'all-equal',
  'negative',
  'signed-zeros',
] as const;

/**
 * x for an `argmax` family, uniform in ±magnitude but: `ties` whole multiples of magnitude/4 (the
 * max repeats across lanes and warps), `twin-max` one value above the rest at two random indices,
 * `max-first` / `max-last` the largest at 0 / n−1, `all-equal` every x magnitude/2, `negative` all
 * in [−magnitude, −magnitude/1000), `signed-zeros` that with a quarter of x after x[0] set to −0 or
 * +0 at random (the max is 0: the first zero wins, whatever its sign).
 */
export function argmaxFamily(family: string, n: number, rng: Rng, magnitude: number): Float32Array {
  const x = fillUniform(new Float32Array(n), rng, magnitude);
  switch (family) {
    case 'ties':
      return x.map((value) => (Math.round((4 * value) / magnitude) * magnitude) / 4);
    case 'twin-max': {
      const [i, j] = [rng.integer(0, n - 1), rng.integer(0, n - 1)];
      x[i] = x[j] = 2 * magnitude;
      return x;
    }
    case 'max-first':
    case 'max-last':
      x[family === 'max-first' ? 0 : n - 1] = 2 * magnitude;
      return x;
    case 'all-equal':
      return x.fill(magnitude / 2);
    case 'negative':
      return x.map((value) => -Math.max(Math.abs(value), magnitude / 1000));
    case 'signed-zeros': {
      const negative = x.map((value) => -Math.max(Math.abs(value), magnitude / 1000));
      for (let i = 1; i < n; i++)
        if (rng.nextFloat() < 0.25) negative[i] = rng.nextFloat() < 0.5 ? -0 : 0;
      return negative;
    }
    default:
      throw new ValidationError([
        { path: 'family', message: `'${family}' is not one of ${ARGMAX_FAMILIES.join(', ')}` },
      ]);
  }
}

/**
 * Catalog kernel `argmax`: `index` (u32, length 1) the lowest index of the largest of n f32 `x`,
 * `value` (f32, length 1) that element; exact, so its tolerance is 0. NaN inputs are not handled.
 */
export const argmax: CatalogKernel = {
  spec,
  shapeNames: ['n'],
  defaultShape: { n: 32000 },
  params: (shape) => ({ n: sizeOf(shape) }),
  bufferLengths: (shape) => ({ x: sizeOf(shape), index: 1, value: 1 }),
  outputs: ['index', 'value'],
  reference(inputs, params) {
    const x = inputs['x'] ?? [];
    let at = 0;
    for (let i = 1; i < sizeOf(params); i++) if ((x[i] ?? 0) > (x[at] ?? 0)) at = i;
    return { index: Float64Array.of(at), value: Float64Array.of(x[at] ?? 0) };
  },
  // A comparison and a copy, no arithmetic: the index and the value must match exactly.
  tolerance: 0,
  checkShape,
  inputFamilies: ARGMAX_FAMILIES,
  generateFamily: ({ family, shape, rng, magnitude }) => ({
    x: argmaxFamily(family, sizeOf(shape), rng, magnitude),
  }),
};
