// Catalog kernel `argmax`: the index of the largest logit (greedy decoding's last step).
import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import { ValidationError } from '../errors.js';
import type { Value } from '../expression-methods.js';
import { bitcast, min, u32 } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { lazyKernel } from './lazy-kernel.js';
import { argmaxFamily, ARGMAX_FAMILIES } from './argmax-families.js';
import { field } from './shape-reader.js';
import { stageBody } from './stage-body.js';

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
export function argmaxRank(bits: Expr<'u32'>): Value<'i32'> {
  // As i32, the bits of a negative x other than NaN are [−2^31, −2^23] (−0 to −inf); a negative
  // NaN's are above −2^23, so it takes the other arm, min(bits, 0x7f800001), as any NaN does.
  return bitcast('i32', bits)
    .le(-0x800000)
    .select(u32(0x80000000).sub(bits).bitcast('i32'), min(bits, 0x7f800001).bitcast('i32'));
}

/** Most workgroups of the scan, each leaving one (rank, index) partial for the combine. */
export const ARGMAX_PARTS = 1024;
/** 16-byte loads a thread issues before it ranks any of them. */
const LOADS_IN_FLIGHT = 4;
/** Elements a workgroup thread takes at most per pass of the scan (the grid is sized by it). */
const PER_THREAD = 4 * LOADS_IN_FLIGHT;
/** A rank below every real one (−inf ranks −0x7f800000): a masked element never wins. */
const NO_RANK = -0x80000000;

// Bandwidth plan. A vocabulary of logits (128256 at Llama 3: 501 KiB) is read once, so the scan
// must keep many loads in flight on many SMs: one workgroup (semanticVersion 2) waited for 125
// dependent round trips, 50.7 µs on the H200 model. Dispatch 1 runs min(ceil(n / (16 ·
// workgroupSize)), 1024) workgroups; thread t of T issues its 16-byte loads of the groups of four
// g, g + T, g + 2T, g + 3T (g from its global index, 4T a pass) before ranking any, so a thread
// has 64 bytes in flight and a pass is one round trip. Each thread keeps the first of the highest
// rank it sees (argmaxRank: strict `>` in increasing index order, so its lowest index), starting
// from x[0] at index 0, a real candidate, so threads past n need no sentinel and all −inf input
// still gives 0; loads past the last group re-read it and rank below everything. The n % 4 last
// elements go to the grid's first threads. A warp takes the max of its lanes' ranks, then the
// lowest index among the lanes holding it; warps meet in shared memory and fold the same way, and
// the workgroup's (rank, index) goes to scratch. Dispatch 2, one workgroup, folds the partials
// alike (higher rank, or equal rank and lower index) and reads x[index] back, so −0 against +0
// matches bit for bit and a NaN comes out as stored (its payload too where the engine keeps float
// bits: GPUs and the PTX simulator do; the JS interpreters set a signaling NaN's quiet bit).
// Integer folds, exact and order-free: the lowest index of a NaN if there is one, else the lowest
// index of a value equal (==) to the max, what argmaxIndex's float64 scan gives, on any grid.
// H200 model (`forge run argmax --target ptx-sim --gpu H200 --shape n=128256`): 2.50 µs in 2
// kernels (1.50 + 1.00, each at the model's per-kernel floor; 32 SMs scan, 1.1 round trips a warp)
// against 50.7 µs for one workgroup; n 32000 2.47 µs.
const declarations = {
  id: 'argmax',
  semanticVersion: 2,
  entryPoint: 'argmax',
  description:
    'index[0] = the lowest i < n with x[i] NaN if any x is NaN, else the lowest i with x[i] the largest of x (f32, n >= 1; -0 == +0), value[0] = x[index]; workgroups scan, one folds their partials',
  buffers: [
    { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
    { group: 0, binding: 1, name: 'index', element: 'u32', access: 'read_write' },
    { group: 0, binding: 2, name: 'value', element: 'f32', access: 'read_write' },
  ],
  params: [{ name: 'n', type: 'u32' }],
  // Both dispatches' warps fold through these: a rank and an index a warp.
  shared: [
    { name: 'warp_rank', element: 'i32', length: `workgroupSize / ${WARP_SIZE}` },
    { name: 'warp_index', element: 'u32', length: `workgroupSize / ${WARP_SIZE}` },
  ],
  scratch: [
    { group: 0, binding: 3, name: 'part_rank', element: 'i32', length: `${ARGMAX_PARTS}` },
    { group: 0, binding: 4, name: 'part_index', element: 'u32', length: `${ARGMAX_PARTS}` },
  ],
  schedule: [
    {
      name: 'workgroupSize',
      description: 'threads of a workgroup, in both dispatches; a multiple of the 32-lane warp',
      default: 256,
      bounds: {
        ptx: { min: 32, max: 1024, multipleOf: 32 },
        wgsl: { min: 32, max: 1024, multipleOf: 32 },
      },
    },
  ],
  launch: {
    workgroupSize: 'workgroupSize',
    grid: [`min(ceil_div(n, workgroupSize * ${PER_THREAD}), ${ARGMAX_PARTS})`, '1', '1'],
  },
} as const;

type ArgmaxBuilder = BodyBuilder<DeclaredBy<typeof declarations>>;

const argmaxSpec = (): KernelSpec =>
  defineKernel(
    {
      ...declarations,
      stages: [
        {
          entryPoint: 'argmax_combine',
          shared: declarations.shared,
          launch: { workgroupSize: 'workgroupSize', grid: ['1', '1', '1'] },
          body: stageBody(declarations, 0, combineBody),
        },
      ],
    },
    scanBody,
  );

/** The workgroup's (rank, index): the max rank of its threads' `best`, the lowest `at` holding it. */
function foldWorkgroup(b: ArgmaxBuilder, best: Value<'i32'>, at: Value<'u32'>) {
  const { warp_rank: warpRank, warp_index: warpIndex } = b.memory;
  const warpMax = b.reduce('max', 'warp_max', best);
  const warpAt = b.reduce('min', 'warp_at', best.eq(warpMax).select(at, NO_INDEX));
  b.if(b.laneId().eq(0), () => {
    warpRank.store(b.warpId(), warpMax);
    warpIndex.store(b.warpId(), warpAt);
  });
  b.barrier();
  // Lanes past the warp count take warp 0's pair again: a real candidate, no sentinel needed.
  const warps = b.schedule('workgroupSize').div(WARP_SIZE);
  const { lane } = b.let({ lane: b.laneId().lt(warps).select(b.laneId(), 0) });
  const { groupBest, groupAt } = b.let({
    groupBest: warpRank.at(lane),
    groupAt: warpIndex.at(lane),
  });
  const rank = b.reduce('max', 'all_max', groupBest);
  const index = b.reduce('min', 'all_at', groupBest.eq(rank).select(groupAt, NO_INDEX));
  return { rank, index };
}

/** Dispatch 1: each workgroup's threads scan their groups of four, LOADS_IN_FLIGHT loads at a time. */
function scanBody(b: ArgmaxBuilder): void {
  const { x, part_rank: partRank, part_index: partIndex } = b.memory;
  const size = b.schedule('workgroupSize');
  const n = b.param('n');
  const { first, groups, threads } = b.let({
    first: x.at(0).bitcast('u32'),
    groups: n.shr(2),
    threads: size.mul(b.numWorkgroups()),
  });
  const { best, at, lastGroup, thread } = b.let({
    best: argmaxRank(first),
    at: u32(0),
    lastGroup: groups.max(1).sub(1),
    thread: b.workgroupId().mul(size).add(b.localId()),
  });
  // Visits x[index] in increasing order per thread: the strict `>` keeps the first of the highest rank.
  const visit = (value: Value<'f32'>, index: Value<'u32'>, live?: Value<'bool'>) => {
    const bits = b.let('bits', value.bitcast('u32'));
    const ranked = argmaxRank(bits);
    const rank = b.let('rank', live === undefined ? ranked : live.select(ranked, NO_RANK));
    b.if(rank.gt(best), () => {
      b.assign(best, rank);
      b.assign(at, index);
    });
  };
  b.for('g', { start: thread, end: groups, step: threads.mul(LOADS_IN_FLIGHT) }, (_, g) => {
    // Every load of the pass is issued before the first rank; a group past the end re-reads the last.
    const loads = Array.from({ length: LOADS_IN_FLIGHT }, (_, k) => {
      const quad = b.let('quad', k === 0 ? g : g.add(threads.mul(k)));
      const live = b.let('live', quad.lt(groups));
      const base = b.let('base', quad.min(lastGroup).mul(4));
      return { live, base, values: b.loadVector('x', base, ['x0', 'x1', 'x2', 'x3']) };
    });
    for (const { live, base, values } of loads)
      values.forEach((value, j) => visit(value, base.add(j), live));
  });
  b.if(thread.lt(n.and(3)), () => {
    const { last } = b.let({ last: groups.mul(4).add(thread) });
    visit(x.at(last), last);
  });
  const { rank, index } = foldWorkgroup(b, best, at);
  b.if(b.localId().eq(0), () => {
    partRank.store(b.workgroupId(), rank);
    partIndex.store(b.workgroupId(), index);
  });
}

/** Dispatch 2: one workgroup folds the scan's partials and reads the winner back from x. */
function combineBody(b: ArgmaxBuilder): void {
  const { x, index, value, part_rank: partRank, part_index: partIndex } = b.memory;
  const size = b.schedule('workgroupSize');
  const perPass = size.mul(PER_THREAD);
  const { parts } = b.let({
    parts: b.param('n').add(perPass.sub(1)).div(perPass).min(ARGMAX_PARTS),
  });
  // Partial 0 is a real candidate, so every thread starts from it.
  const { best, at } = b.let({ best: partRank.at(0), at: partIndex.at(0) });
  b.for('p', { start: b.localId(), end: parts, step: size }, (_, p) => {
    const { candidateRank, candidateAt } = b.let({
      candidateRank: partRank.at(p),
      candidateAt: partIndex.at(p),
    });
    const better = candidateRank.gt(best).or(candidateRank.eq(best).and(candidateAt.lt(at)));
    b.if(better, () => {
      b.assign(best, candidateRank);
      b.assign(at, candidateAt);
    });
  });
  const { index: winner } = foldWorkgroup(b, best, at);
  b.if(b.localId().eq(0), () => {
    index.store(0, winner);
    value.store(0, x.at(winner));
  });
}

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

const sizeOf = (shape: Shape): number => field(shape, 'n');

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
export const argmax: CatalogKernel = lazyKernel('argmax', () => ({
  spec: argmaxSpec(),
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
}));
