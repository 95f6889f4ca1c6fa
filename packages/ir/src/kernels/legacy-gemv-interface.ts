import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import { add, and, div, eq, lt, min, mul, sub, u32 } from '../expressions.js';
import { QUANT_FORMATS, type QuantType } from '../quant/formats.js';
import type { KnobBounds } from '../spec.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { gemvCatalogKernel, type GemvCatalogOptions } from './gemv-catalog.js';
import { ROWS, forRows, perRow, type PerRow } from './locals.js';

/**
 * The buffers and params every gemv kernel shares, so engines launch them alike.
 *
 * Windows. q8_0-, q4k- and q6k-gemv stream a row in 32-word windows starting on a sector boundary:
 * lane l loads word base + l, so a warp load is 128 contiguous bytes, touches no sector it only
 * partly uses (but at a row's ends) and loads each weight word once (a row starting mid-word shares
 * that word with the previous row).
 * Load widths. A lane's 4-byte weight word pairs with 4 consecutive x, one 16-byte vector load
 * (Q8_0's 34-byte blocks put half the runs 8 bytes off; such a lane takes the run's tail from its
 * neighbour's vector by shuffle): a warp reads adjacent bytes of both streams, in whole sectors.
 * 16-byte weight loads would pair a lane with 16+ consecutive x, whose 16-byte requests use half
 * of each sector. x costs 4 bytes a value against 0.56-0.82 weight bytes and every row re-reads it
 * (from L1/L2), so x dominates an SM's load traffic: at H200 rates (4.8 TB/s over 132 SMs at 1.98
 * GHz, ~18 weight bytes per SM-clock) Q4_K streams ~33 values a clock, ~131 B of x in whole sectors
 * or ~262 B in half-used ones, against the ~128 B a clock an SM's L1 delivers: half-used sectors
 * cost more than wide loads save.
 * Pairs. q8_0-, q4k- and q6k-soa-gemv stream two rows a warp that start alike in their sectors, so
 * each x a lane loads serves both (reused in registers): ~3.0, ~4.6 and ~3.4 sector bytes per
 * weight byte instead of ~5.0, ~8.1 and ~5.9. q6k-gemv keeps one row a warp: it holds three windows
 * a row and spends 21 shuffles a window on them, which a second row would double; its ~6.0 is
 * within an SM's L1 rate.
 */
const GEMV_INTERFACE = {
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
} as const; // checked by defineKernel
const GROUP_SIZES = { min: 32, max: 1024, multipleOf: 32 };

export type GemvBuilder = BodyBuilder<DeclaredBy<typeof GEMV_INTERFACE>>;
/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
export const SECTOR_WORDS = 8;
/** `and` with this rounds a word index down to its sector's first word. */
export const SECTOR_MASK = 0x100000000 - SECTOR_WORDS;

/**
 * A row (or pair) body's block, whether each row exists, and the row clamped to the last. WGSL warp
 * ops need uniform control flow: a warp past the last row runs every window, shuffle and reduce
 * (lanes discard what they do not use) but loads nothing. A pair's row b is dead whenever row a is,
 * and if live sits in its sectors as row a does: row a's offsets serve both.
 */
export interface GemvRows<R> {
  readonly rows: GemvBuilder;
  readonly live: Each<R, Var<'bool'>>;
  readonly clamped: Each<R, Expr<'u32'>>;
  readonly lane: Var<'u32'>;
}
type Each<R, T> = R extends 'pair' ? PerRow<T> : T;

/**
 * A gemv kernel: `setup` declares locals before the loop (after `blocks` = n_in / blockSize),
 * `laneSetup` those needing the lane; `row` streams a row (or pair) into partial sums. Pair rows are
 * the setup's `delta` apart (default 1) so that they sit alike in their sectors: pair q takes rows
 * 2·delta·(q / delta) + q % delta and delta more, which covers every row once.
 */
interface GemvKernel<S extends GemvSetup, L, R extends Rows> {
  readonly id: string;
  readonly semanticVersion: number;
  readonly type: QuantType;
  readonly rows: R;
  readonly setup: (b: GemvBuilder, blocks: Var<'u32'>) => S;
  readonly laneSetup?: (b: GemvBuilder, lane: Var<'u32'>) => L;
  readonly row: (rows: GemvRows<R>, setup: S, lanes: L) => Each<R, Var<'f32'>>;
}
type Rows = 'row' | 'pair';
type GemvSetup = { readonly delta?: Expr<'u32'>; readonly [local: string]: unknown };

/** A gemv catalog kernel, W's rows `layout`; `ptxGroupSizes` bounds workgroupSize on PTX. */
export function gemvKernel<S extends GemvSetup, L, R extends Rows>(
  kernel: GemvKernel<S, L, R>,
  layout: string,
  options: Omit<GemvCatalogOptions, 'spec' | 'type' | 'tolerance'> & {
    readonly ptxGroupSizes?: KnobBounds;
  },
): CatalogKernel {
  const { id, semanticVersion, type } = kernel;
  const { ptxGroupSizes = GROUP_SIZES, ...catalog } = options;
  const pair = kernel.rows === 'pair';
  const description = `y = dequant(W) x, W rows ${layout} (read as u32 words), x and y f32; one warp per ${pair ? 'two rows' : 'row'}`;
  const rowBounds = pair ? { min: 2, max: 8, multipleOf: 2 } : { min: 1, max: 8 };
  const rowsPerWarp = pair
    ? 'rows each warp streams, two at a time sharing their x loads'
    : 'rows each warp streams one after another';
  const spec = defineKernel(
    {
      ...{ id, semanticVersion, entryPoint: id.replaceAll('-', '_'), description },
      ...GEMV_INTERFACE,
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup; each 32-lane warp streams its own rows',
          default: 128,
          bounds: { ptx: ptxGroupSizes, wgsl: GROUP_SIZES },
        },
        {
          name: 'rowsPerWarp',
          description: rowsPerWarp,
          default: rowBounds.min,
          bounds: { ptx: rowBounds, wgsl: rowBounds },
        },
      ],
      launch: {
        workgroupSize: 'workgroupSize',
        // WebGPU caps a grid dimension at 65535 workgroups; more rows run as a grid-stride loop.
        grid: ['min(ceil_div(n_out, workgroupSize / 32 * rowsPerWarp), 65535)', '1', '1'],
      },
    },
    (b) => gemvBody(b, kernel),
  );
  return gemvCatalogKernel({ spec, type, ...catalog, tolerance: 1e-10 });
}

/**
 * The gemv loop: workgroups stride over groups of rows (or pairs), each warp takes `rowsPerWarp`
 * consecutive rows of its group, and lane 0 stores each row's warp sum.
 */
function gemvBody<S extends GemvSetup, L, R extends Rows>(
  b: GemvBuilder,
  kernel: GemvKernel<S, L, R>,
): void {
  const pair = kernel.rows === 'pair';
  const nOut = b.param('n_out');
  let perWarp: Expr<'u32'> = b.schedule('rowsPerWarp');
  if (pair) perWarp = b.let('pairs_per_warp', div(perWarp, 2));
  const warps = div(b.schedule('workgroupSize'), WARP_SIZE);
  const perGroup = b.let(pair ? 'pairs_per_group' : 'rows_per_group', mul(warps, perWarp));
  const { blocks } = b.let({ blocks: div(b.param('n_in'), QUANT_FORMATS[kernel.type].blockSize) });
  const setup = kernel.setup(b, blocks);
  const delta = setup.delta && b.let('delta', setup.delta);
  // u32(2): the IR keeps `2 - 1` unfolded.
  const span = delta ? mul(delta, 2) : u32(2);
  const pairCount = div(add(nOut, sub(span, 1)), span);
  const count = pair ? b.let('pairs', delta ? mul(pairCount, delta) : pairCount) : nOut;
  const { groups } = b.let({ groups: div(add(count, sub(perGroup, 1)), perGroup) });
  const { lane } = b.let({ lane: b.laneId() });
  // Without laneSetup, L and `lanes` are undefined.
  const lanes = kernel.laneSetup?.(b, lane) as L;
  const groupRange = { start: b.workgroupId('x'), end: groups, step: b.numWorkgroups('x') };
  b.for('group', groupRange, (g, group) => {
    g.for(pair ? 'p' : 'r', { start: 0, end: perWarp }, (rows, index) => {
      const first = add(mul(group, perGroup), mul(rows.warpId(), perWarp));
      const slot = rows.let(pair ? 'row_pair' : 'row', add(first, index));
      const store = (name: string, row: Expr<'u32'>, live: Var<'bool'>, total: Var<'f32'>) => {
        const sum = rows.reduce('add', name, total);
        rows.if(and(live, eq(lane, 0)), (then) => then.store('y', row, sum));
      };
      if (!pair) {
        const { live } = rows.let({ live: lt(slot, nOut) });
        const single = kernel as GemvKernel<S, L, 'row'>;
        const clamped = min(slot, sub(nOut, 1));
        const total = single.row({ rows, live, clamped, lane }, setup, lanes);
        return store('row_sum', slot, live, total);
      }
      const block = delta && mul(div(slot, delta), delta);
      const rowA = rows.let('row_a', block ? add(mul(block, 2), sub(slot, block)) : mul(slot, 2));
      const row = { a: rowA, b: rows.let('row_b', add(rowA, delta ?? 1)) };
      const { live } = perRow(rows, { live: (k) => lt(row[k], nOut) });
      const clamped = forRows((k) => min(row[k], sub(nOut, 1)));
      const pairs = kernel as GemvKernel<S, L, 'pair'>;
      const totals = pairs.row({ rows, live, clamped, lane }, setup, lanes);
      for (const k of ROWS) store(`row_sum_${k}`, row[k], live[k], totals[k]);
    });
  });
}
