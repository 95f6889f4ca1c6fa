import { WARP_SIZE, type Expr, type VarExpr } from '../body.js';
import type { BodyBuilder, DeclaredBy } from '../builder.js';
import { add, and, div, eq, lt, min, mul, sub, u32 } from '../expressions.js';
import { ROWS, forRows, perRow, type PerRow } from './locals.js';

/**
 * The interface every gemv kernel shares: weights `w` as u32 words, `x` and `y` f32, shapes `n_in`
 * and `n_out`, one 32-lane warp per row with `rowsPerWarp` rows each; engines launch them alike.
 *
 * Windows. q8_0-gemv, q4k-gemv and q6k-gemv stream a row in windows of 32 consecutive words: lane l
 * loads word (window base + l), so each warp load is 128 contiguous bytes and every weight word is
 * loaded once (a row that starts mid-word shares that boundary word with the previous row).
 * Load widths. A lane's 4-byte weight word pairs with runs of 4 consecutive x, which it reads as
 * one 16-byte vector (Q8_0's 34-byte blocks leave half the runs 8 bytes off: such a lane takes the
 * run's tail from its neighbour's vector by shuffle), so lanes of a warp read adjacent bytes of
 * both streams and every request fills whole sectors.
 * Wider weight loads (16 bytes a lane) would give each lane 16+ consecutive x, and a warp's 16-byte
 * x requests would then use half of each sector. x costs 4 bytes a value against 0.56-0.82 weight
 * bytes and every row re-reads it (from L1/L2), so x dominates an SM's load traffic: at H200 rates
 * (4.8 TB/s over 132 SMs at 1.98 GHz, ~18 weight bytes per SM-clock) Q4_K streams ~33 values a
 * clock, i.e. ~131 B of x with whole sectors and ~262 B with half-used ones, against the ~128 B a
 * clock an SM's L1 delivers. Halving x's sector use would cost more than wide weight loads save.
 * q8_0-gemv, q4k-gemv and q6k-soa-gemv therefore stream two rows per warp at once, sharing each x
 * load (gemvPairBody): ~3.0, ~4.6 and ~3.4 sector bytes per weight byte instead of ~5.0, ~8.1 and
 * ~5.9. q6k-gemv keeps one row per warp: it holds three windows per row and spends 21 shuffles a
 * window on them, which a second row would double, and its ~6.0 is within an SM's L1 rate.
 */
export const GEMV_INTERFACE = {
  buffers: [
    { group: 0, binding: 0, name: 'w', element: 'u32', access: 'read' },
    { group: 0, binding: 1, name: 'x', element: 'f32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  params: [
    { name: 'n_in', type: 'u32' },
    { name: 'n_out', type: 'u32' },
  ],
  shared: [],
  schedule: [
    {
      name: 'workgroupSize',
      description: 'threads per workgroup; each 32-lane warp streams its own rows',
      default: 128,
      bounds: {
        ptx: { min: 32, max: 1024, multipleOf: 32 },
        wgsl: { min: 32, max: 1024, multipleOf: 32 },
      },
    },
    {
      name: 'rowsPerWarp',
      description: 'rows each warp streams one after another',
      default: 1,
      bounds: { ptx: { min: 1, max: 8 }, wgsl: { min: 1, max: 8 } },
    },
  ],
  launch: {
    workgroupSize: 'workgroupSize',
    // WebGPU caps a grid dimension at 65535 workgroups; more rows run as a grid-stride loop.
    grid: ['min(ceil_div(n_out, workgroupSize / 32 * rowsPerWarp), 65535)', '1', '1'],
  },
} as const; // defineKernel checks it against KernelDeclarations

/** The builder of a gemv kernel's body: `w` u32, `x` and `y` f32, `n_in` and `n_out` u32. */
export type GemvBuilder = BodyBuilder<DeclaredBy<typeof GEMV_INTERFACE>>;
type U32 = Expr<'u32'>;
type Var<T extends 'u32' | 'f32' | 'bool' = 'u32'> = VarExpr<T>;

/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
export const SECTOR_WORDS = 8;
/** `and` with this rounds a word index down to its sector's first word. */
export const SECTOR_MASK = 0x100000000 - SECTOR_WORDS;

/**
 * A row body's block (run once per row or pair), whether each row exists, and the row clamped to
 * the last one. Warp ops need workgroup-uniform control flow in WGSL, so a warp past the last row
 * still runs every window, shuffle and reduce: it only skips its loads, its addresses clamped.
 */
export interface GemvRows<R> {
  readonly rows: GemvBuilder;
  readonly live: R extends 'pair' ? PerRow<Var<'bool'>> : Var<'bool'>;
  readonly clamped: R extends 'pair' ? PerRow<U32> : U32;
  readonly lane: Var;
}
type Sums<R> = R extends 'pair' ? PerRow<Var<'f32'>> : Var<'f32'>;

/**
 * A gemv kernel's part: `setup` declares locals before the loop (after `blocks` = n_in /
 * blockSize), `laneSetup` those needing the lane; `row` streams a row (or pair) into partial sums.
 */
interface GemvKernel<Setup, LaneSetup, R> {
  readonly blockSize: number;
  readonly setup: (b: GemvBuilder, blocks: Var) => Setup;
  readonly laneSetup?: (b: GemvBuilder, lane: Var) => LaneSetup;
  readonly row: (rows: GemvRows<R>, setup: Setup, lanes: LaneSetup) => Sums<R>;
}

/**
 * The loop every gemv kernel shares: workgroups stride over groups of rows, each warp takes
 * `rowsPerWarp` consecutive rows of its group, and lane 0 stores the warp's sum of each row.
 */
export function gemvBody<Setup, LaneSetup = undefined>(
  b: GemvBuilder,
  kernel: GemvKernel<Setup, LaneSetup, 'row'>,
): void {
  const nOut = b.param('n_out');
  const names = ['rows_per_group', 'r', 'row'] as const;
  warpSlots(
    b,
    kernel,
    b.schedule('rowsPerWarp'),
    names,
    () => nOut,
    (rows, row, slot) => {
      const { live } = rows.let({ live: lt(row, nOut) });
      const clamped = min(row, sub(nOut, 1));
      const total = kernel.row({ rows, live, clamped, lane: slot.lane }, slot.setup, slot.lanes);
      const rowSum = rows.reduce('add', 'row_sum', total);
      rows.if(and(live, eq(slot.lane, 0)), (store) => store.store('y', row, rowSum));
    },
  );
}

/**
 * The grid-stride loop of both: workgroups stride over groups of `count` slots (rows or pairs),
 * each warp takes `perWarp` consecutive slots of its group; `count`'s locals follow the setup.
 */
function warpSlots<Setup, LaneSetup>(
  b: GemvBuilder,
  kernel: GemvKernel<Setup, LaneSetup, unknown>,
  perWarp: U32,
  names: readonly [perGroup: string, index: string, slot: string],
  count: (setup: Setup) => U32,
  body: (
    rows: GemvBuilder,
    slot: Var,
    context: { lane: Var; setup: Setup; lanes: LaneSetup },
  ) => void,
): void {
  const perGroup = b.let(names[0], mul(div(b.schedule('workgroupSize'), WARP_SIZE), perWarp));
  const { blocks } = b.let({ blocks: div(b.param('n_in'), kernel.blockSize) });
  const setup = kernel.setup(b, blocks);
  const { groups } = b.let({ groups: div(add(count(setup), sub(perGroup, 1)), perGroup) });
  const { lane } = b.let({ lane: b.laneId() });
  // Without laneSetup, LaneSetup is undefined and so is `lanes`.
  const lanes = kernel.laneSetup?.(b, lane) as LaneSetup;
  const groupRange = { start: b.workgroupId('x'), end: groups, step: b.numWorkgroups('x') };
  b.for('group', groupRange, (g, group) => {
    g.for(names[1], { start: 0, end: perWarp }, (rows, index) => {
      const first = add(mul(group, perGroup), mul(rows.warpId(), perWarp));
      body(rows, rows.let(names[2], add(first, index)), { lane, setup, lanes });
    });
  });
}

/** GEMV_INTERFACE for kernels that stream two rows per warp at once: `rowsPerWarp` is even. */
export const GEMV_PAIR_INTERFACE = {
  ...GEMV_INTERFACE,
  schedule: [
    GEMV_INTERFACE.schedule[0],
    {
      name: 'rowsPerWarp',
      description: 'rows each warp streams, two at a time sharing their x loads',
      default: 2,
      bounds: {
        ptx: { min: 2, max: 8, multipleOf: 2 },
        wgsl: { min: 2, max: 8, multipleOf: 2 },
      },
    },
  ],
} as const;

/**
 * gemvBody for kernels that stream two rows per warp at once, sharing their x loads: workgroups
 * stride over groups of row pairs, each warp takes `rowsPerWarp / 2` pairs. The rows of a pair are
 * `delta` apart (from the setup; 1 when omitted) so that they sit alike in their sectors: pair q
 * takes rows 2·delta·(q / delta) + q % delta and delta more, which covers every row once.
 */
export function gemvPairBody<Setup, LaneSetup = undefined>(
  b: GemvBuilder,
  kernel: GemvKernel<Setup, LaneSetup, 'pair'> & { readonly delta?: (setup: Setup) => U32 },
): void {
  const nOut = b.param('n_out');
  const perWarp = b.let('pairs_per_warp', div(b.schedule('rowsPerWarp'), 2));
  let delta: Var | undefined;
  const count = (setup: Setup) => {
    delta = kernel.delta && b.let('delta', kernel.delta(setup));
    // u32(2): the IR keeps `2 - 1` unfolded.
    const span = delta === undefined ? u32(2) : mul(delta, 2);
    const pairCount = div(add(nOut, sub(span, 1)), span);
    return b.let('pairs', delta === undefined ? pairCount : mul(pairCount, delta));
  };
  const names = ['pairs_per_group', 'p', 'row_pair'] as const;
  warpSlots(b, kernel, perWarp, names, count, (rows, pair, { lane, setup, lanes }) => {
    const block = delta && mul(div(pair, delta), delta);
    const first = block === undefined ? mul(pair, 2) : add(mul(block, 2), sub(pair, block));
    const rowA = rows.let('row_a', first);
    const row = { a: rowA, b: rows.let('row_b', add(rowA, delta ?? 1)) };
    const { live } = perRow(rows, { live: (k) => lt(row[k], nOut) });
    const clamped = forRows((k) => min(row[k], sub(nOut, 1)));
    const totals = kernel.row({ rows, live, clamped, lane }, setup, lanes);
    for (const k of ROWS) {
      const rowSum = rows.reduce('add', `row_sum_${k}`, totals[k]);
      rows.if(and(live[k], eq(lane, 0)), (store) => store.store('y', row[k], rowSum));
    }
  });
}
