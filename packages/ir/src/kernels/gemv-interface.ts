import { WARP_SIZE, type Expr, type VarExpr } from '../body.js';
import type { BodyBuilder, KernelDeclarations } from '../builder.js';
import { add, and, div, eq, lt, mul, sub, u32 } from '../expressions.js';

/**
 * The interface every gemv kernel shares: weights `w` as u32 words, `x` and `y` f32, shapes `n_in`
 * and `n_out`, one 32-lane warp per row with `rowsPerWarp` rows each; engines launch them alike.
 *
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
export const GEMV_INTERFACE: Pick<
  KernelDeclarations,
  'buffers' | 'params' | 'shared' | 'schedule' | 'launch'
> = {
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
};

/** What a gemv kernel's row body works with. */
export interface GemvRow {
  /** The block of one row: its statements run once per row of the warp. */
  readonly rows: BodyBuilder;
  readonly row: VarExpr;
  /** Whether the row exists; a warp past the last row still takes part in warp operations. */
  readonly live: VarExpr;
  readonly lane: VarExpr;
  readonly nOut: Expr;
}

/**
 * The loop every gemv kernel shares: workgroups stride over groups of rows, each warp takes
 * `rowsPerWarp` consecutive rows of its group, and lane 0 stores the warp's sum of each row.
 * `setup` declares the kernel's locals before the loop (before `groups`), `laneSetup` those that
 * need the lane; `row` streams one row and returns the lane's partial sum.
 */
export function gemvBody<Setup, LaneSetup = undefined>(
  b: BodyBuilder,
  kernel: {
    readonly setup: (b: BodyBuilder) => Setup;
    readonly laneSetup?: (b: BodyBuilder, lane: VarExpr) => LaneSetup;
    readonly row: (row: GemvRow, setup: Setup, lanes: LaneSetup) => VarExpr;
  },
): void {
  const nOut = b.param('n_out');
  forEachWarpSlot(b, {
    perWarp: b.schedule('rowsPerWarp'),
    names: { perGroup: 'rows_per_group', index: 'r', slot: 'row' },
    setup: kernel.setup,
    count: () => nOut,
    ...(kernel.laneSetup === undefined ? {} : { laneSetup: kernel.laneSetup }),
    slot: ({ rows, slot: row, lane }, setup, lanes) => {
      const live = rows.let('live', lt(row, nOut));
      const total = kernel.row({ rows, row, live, lane, nOut }, setup, lanes);
      const rowSum = rows.reduce('add', 'row_sum', total);
      rows.if(and(live, eq(lane, u32(0))), (store) => store.store('y', row, rowSum));
    },
  });
}

/** What a warp slot's body works with: its block, its index (a row or a pair) and its lane. */
interface WarpSlot {
  readonly rows: BodyBuilder;
  readonly slot: VarExpr;
  readonly lane: VarExpr;
}

/**
 * The grid-stride loop of both gemv loops: workgroups stride over groups of `count` slots (rows,
 * or row pairs), each warp takes `perWarp` consecutive slots of its group. `setup` and `count`
 * declare their locals before `groups`, `laneSetup` after `lane`.
 */
function forEachWarpSlot<Setup, LaneSetup>(
  b: BodyBuilder,
  loop: {
    readonly perWarp: Expr;
    readonly names: { readonly perGroup: string; readonly index: string; readonly slot: string };
    readonly setup: (b: BodyBuilder) => Setup;
    readonly count: (setup: Setup) => Expr;
    readonly laneSetup?: (b: BodyBuilder, lane: VarExpr) => LaneSetup;
    readonly slot: (slot: WarpSlot, setup: Setup, lanes: LaneSetup) => void;
  },
): void {
  const { perWarp, names } = loop;
  const perGroup = b.let(
    names.perGroup,
    mul(div(b.schedule('workgroupSize'), u32(WARP_SIZE)), perWarp),
  );
  const setup = loop.setup(b);
  const count = loop.count(setup);
  const groups = b.let('groups', div(add(count, sub(perGroup, u32(1))), perGroup));
  const lane = b.let('lane', b.laneId());
  // Without laneSetup, LaneSetup is undefined and so is `lanes`.
  const lanes = loop.laneSetup?.(b, lane) as LaneSetup;
  const groupRange = { start: b.workgroupId('x'), end: groups, step: b.numWorkgroups('x') };
  b.for('group', groupRange, (g, group) => {
    g.for(names.index, { start: u32(0), end: perWarp, step: u32(1) }, (rows, index) => {
      const first = add(mul(group, perGroup), mul(rows.warpId(), perWarp));
      const slot = rows.let(names.slot, add(first, index));
      loop.slot({ rows, slot, lane }, setup, lanes);
    });
  });
}

/** GEMV_INTERFACE for kernels that stream two rows per warp at once: `rowsPerWarp` is even. */
export const GEMV_PAIR_INTERFACE: typeof GEMV_INTERFACE = {
  ...GEMV_INTERFACE,
  schedule: [
    ...GEMV_INTERFACE.schedule.filter((knob) => knob.name !== 'rowsPerWarp'),
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
};

/** The two rows a warp streams at once, `a` and `b`, for a kernel's pair body. */
export interface GemvPair {
  readonly rows: BodyBuilder;
  readonly row: { readonly a: VarExpr; readonly b: VarExpr };
  /** Row b is past the end whenever row a is. */
  readonly live: { readonly a: VarExpr; readonly b: VarExpr };
  readonly lane: VarExpr;
  readonly nOut: Expr;
}

/**
 * gemvBody for kernels that stream two rows per warp at once, sharing their x loads: workgroups
 * stride over groups of row pairs, each warp takes `rowsPerWarp / 2` pairs. The rows of a pair are
 * `delta` apart (from the setup; 1 when omitted) so that they sit alike in their sectors: pair q
 * takes rows 2·delta·(q / delta) + q % delta and delta more, which covers every row once.
 */
export function gemvPairBody<Setup, LaneSetup = undefined>(
  b: BodyBuilder,
  kernel: {
    readonly setup: (b: BodyBuilder) => Setup;
    readonly delta?: (setup: Setup) => Expr;
    readonly laneSetup?: (b: BodyBuilder, lane: VarExpr) => LaneSetup;
    readonly rows: (
      pair: GemvPair,
      setup: Setup,
      lanes: LaneSetup,
    ) => { readonly a: VarExpr; readonly b: VarExpr };
  },
): void {
  const nOut = b.param('n_out');
  forEachWarpSlot(b, {
    perWarp: b.let('pairs_per_warp', div(b.schedule('rowsPerWarp'), u32(2))),
    names: { perGroup: 'pairs_per_group', index: 'p', slot: 'row_pair' },
    setup: (b) => {
      const setup = kernel.setup(b);
      const delta = kernel.delta === undefined ? undefined : b.let('delta', kernel.delta(setup));
      return { setup, delta };
    },
    count: ({ delta }) => {
      const span = delta === undefined ? u32(2) : mul(delta, u32(2));
      const pairCount = div(add(nOut, sub(span, u32(1))), span);
      return b.let('pairs', delta === undefined ? pairCount : mul(pairCount, delta));
    },
    ...(kernel.laneSetup === undefined ? {} : { laneSetup: kernel.laneSetup }),
    slot: ({ rows, slot: pair, lane }, { setup, delta }, lanes) => {
      const first =
        delta === undefined
          ? mul(pair, u32(2))
          : add(mul(mul(div(pair, delta), delta), u32(2)), sub(pair, mul(div(pair, delta), delta)));
      const rowA = rows.let('row_a', first);
      const row = { a: rowA, b: rows.let('row_b', add(rowA, delta ?? u32(1))) };
      const live = {
        a: rows.let('live_a', lt(row.a, nOut)),
        b: rows.let('live_b', lt(row.b, nOut)),
      };
      const totals = kernel.rows({ rows, row, live, lane, nOut }, setup, lanes);
      for (const k of ['a', 'b'] as const) {
        const rowSum = rows.reduce('add', `row_sum_${k}`, totals[k]);
        rows.if(and(live[k], eq(lane, u32(0))), (store) => store.store('y', row[k], rowSum));
      }
    },
  });
}
