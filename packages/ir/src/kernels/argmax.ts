// Catalog kernel `argmax`: the index of the largest logit (greedy decoding's last step).
import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { ValidationError } from '../errors.js';
import {
  add,
  and,
  bitcast,
  div,
  eq,
  gt,
  i32,
  le,
  lt,
  min,
  mul,
  select,
  shr,
  sub,
  u32,
} from '../expressions.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { argmaxFamily, ARGMAX_FAMILIES } from './argmax-families.js';

export { argmaxFamily, ARGMAX_FAMILIES, ARGMAX_NAN_BITS } from './argmax-families.js';

/** An index no lane holds (n < 2^32 - 1): the identity of the lowest-index reduction. */
const NO_INDEX = 0xffffffff;

/**
 * The rank (an i32) argmax orders an f32 by, from its bits alone: a NaN of any sign or payload is
 * 0x7f800001, above +inf (0x7f800000); any other x ranks as its bits if its sign bit is clear and
 * minus its magnitude bits if set, so ranks order as the values do, −0 and +0 both 0. Integer ops
 * only: WGSL lets an implementation assume no NaN exists, and PTX's max.f32 drops NaNs, so no
 * float comparison may decide what a NaN does. `bits` is read three times: pass a local.
 */
export function argmaxRank(bits: Expr<'u32'>): Expr<'i32'> {
  // As i32, the bits of a negative x other than NaN are [−2^31, −2^23] (−0 to −inf); a negative
  // NaN's are above −2^23, so it takes the other arm, min(bits, 0x7f800001), as any NaN does.
  return select(
    le(bitcast('i32', bits), i32(-0x800000)),
    bitcast('i32', sub(u32(0x80000000), bits)),
    bitcast('i32', min(bits, u32(0x7f800001))),
  );
}

// One workgroup: thread t scans the groups of four x[4g .. 4g + 3] for g = t, t + size, … (one
// 16-byte load each), then x[4·⌊n/4⌋ + t] if that is below n, keeping the first of the highest
// rank it sees (argmaxRank: strict `>` in increasing index order, so its lowest index), starting
// from x[0] at index 0 — a real candidate, so threads past n need no sentinel and all −inf input
// still gives 0. A warp takes the max of its lanes' ranks, then the lowest index among the lanes
// holding it; warps meet in shared memory and fold the same way. Integer folds, exact and
// order-free, so the result is deterministic: the lowest index of a NaN if there is one, else the
// lowest index of a value equal (==) to the max, what argmaxIndex's float64 scan gives. Every lane
// holds a real candidate, so a lane always holds the max rank and NO_INDEX never reaches the load
// of `value`: x[index] read back, so −0 against +0 matches bit for bit and a NaN comes out as
// stored (its payload too where the engine keeps float bits: GPUs and the PTX simulator do, the
// JS interpreters set a signaling NaN's quiet bit).
// Cost model, H200, n 32000 (`forge run argmax --target ptx-sim --gpu H200`): 2.20 µs at 256
// threads, 2.77 at 1024, 7.62 at 32 (0.91, 1.38 and 2.55 with the float compare of semanticVersion
// 1, which NaN broke); one SM, bound by integer issue: ranking an element takes a move out of the
// float register and four integer ops, then a compare and a branch. Still small beside a decode
// step's mat-vecs.
const spec = defineKernel(
  {
    id: 'argmax',
    semanticVersion: 2,
    entryPoint: 'argmax',
    description:
      'index[0] = the lowest i < n with x[i] NaN if any x is NaN, else the lowest i with x[i] the largest of x (f32, n >= 1; -0 == +0), value[0] = x[index]; one workgroup',
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'index', element: 'u32', access: 'read_write' },
      { group: 0, binding: 2, name: 'value', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [
      { name: 'warp_rank', element: 'i32', length: `workgroupSize / ${WARP_SIZE}` },
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
    const { first } = b.let({ first: bitcast('u32', b.load('x', 0)) });
    const { best, at, groups } = b.let({ best: argmaxRank(first), at: u32(0), groups: shr(n, 2) });
    // Visits x[index] in increasing order per thread: the strict `>` keeps the first of the highest rank.
    const visit = (block: typeof b, name: string, value: Expr<'f32'>, index: Expr<'u32'>) => {
      const bits = block.let(`bits_${name}`, bitcast('u32', value));
      const rank = block.let(`rank_${name}`, argmaxRank(bits));
      block.if(gt(rank, best), (better) => {
        better.assign(best, rank);
        better.assign(at, index);
      });
    };
    // Groups of four in one 16-byte load, then the n % 4 last elements, one a thread.
    b.for('g', { start: b.localId(), end: groups, step: size }, (loop, g) => {
      const { base } = loop.let({ base: mul(g, 4) });
      const values = loop.loadVector('x', base, ['x0', 'x1', 'x2', 'x3']);
      values.forEach((value, k) => visit(loop, `x${k}`, value, add(base, k)));
    });
    b.if(lt(b.localId(), and(n, 3)), (tail) => {
      const { last } = tail.let({ last: add(mul(groups, 4), tail.localId()) });
      visit(tail, 'last', tail.load('x', last), last);
    });
    const warpMax = b.reduce('max', 'warp_max', best);
    const warpAt = b.reduce('min', 'warp_at', select(eq(best, warpMax), at, NO_INDEX));
    b.if(eq(b.laneId(), 0), (lane0) => {
      lane0.store('warp_rank', lane0.warpId(), warpMax);
      lane0.store('warp_index', lane0.warpId(), warpAt);
    });
    b.barrier();
    // Lanes past the warp count take warp 0's pair again: a real candidate, no sentinel needed.
    const { lane } = b.let({
      lane: select(lt(b.laneId(), div(size, WARP_SIZE)), b.laneId(), u32(0)),
    });
    const { groupBest, groupAt } = b.let({
      groupBest: b.load('warp_rank', lane),
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

/**
 * The index greedy decoding picks from `x` (its first `n`, all of it by default): the lowest i
 * with x[i] NaN if any is, else the lowest i with x[i] equal (==) to the largest (−0 == +0) — the
 * `argmax` kernel's rule, and numpy.argmax's and torch.argmax's. 0 for an empty x.
 */
export function argmaxIndex(x: ArrayLike<number>, n = x.length): number {
  let at = 0;
  for (let i = 0; i < n; i++) {
    const value = x[i] ?? 0;
    if (Number.isNaN(value)) return i;
    if (value > (x[at] ?? 0)) at = i;
  }
  return at;
}

const sizeOf = (shape: Shape): number => shape['n'] ?? 0;

/** Throws a ValidationError when n is not a count argmax can take (at least 1, below 2^32 - 1). */
function checkShape(shape: Shape): void {
  const n = sizeOf(shape);
  if (!Number.isSafeInteger(n) || n < 1 || n >= NO_INDEX)
    throw new ValidationError([
      { path: 'n', message: `${n} is not between 1 and ${NO_INDEX - 1}` },
    ]);
}

/**
 * Catalog kernel `argmax`: `index` (u32, length 1) the lowest index of a NaN of n f32 `x` if there
 * is one, else of the largest (argmaxIndex), `value` (f32, length 1) that element; exact, so its
 * tolerance is 0 (a NaN value matches a NaN reference: compareWithReference).
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
    const at = argmaxIndex(x, sizeOf(params));
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
