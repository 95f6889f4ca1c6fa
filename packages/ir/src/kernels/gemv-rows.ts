import { WARP_SIZE } from '../body.js';
import type { Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import type { BodyBuilder, DeclaredBy } from '../builder.js';
import type { Local } from '../expression-methods.js';
import { f32 } from '../expressions.js';
import type { QuantType } from '../quant/formats.js';
import type { KnobBounds } from '../spec.js';
import { siluTimes } from './elementwise.js';
import { gemvCatalogKernel } from './gemv-catalog.js';
import type { GemvCatalogOptions } from './gemv-catalog.js';
import { GEMV_BINDINGS, SECTOR_WORDS } from './gemv-interface.js';
import { lazyKernel } from './lazy-kernel.js';
import { quantizeXGroup, X_GROUP } from './x-quantize.js';

// Plan, for a mat-vec bound by DRAM. Dispatch 1 quantizes x once for every row, into scratch: per
// 32-value group g, 8 x_high and 8 x_low words at x_quant[16g..16g + 15] (int8 halves of 16-bit
// values, as quantizeXGroup makes them), its scale at x_factors[g] and its sums of 8 at
// x_factors[n_in / 32 + 4g..]. Dispatch 2 streams the rows: a warp a row, every load of a step
// issued before its first use and no barrier anywhere, so a warp waits for DRAM once a step and the
// SM keeps as many steps in flight as it holds warps; x comes from L1 (every warp of an SM reads
// the same 2.5 bytes a value). Rows past n_out are clamped to the last and add nothing, so a
// workgroup's warps all run the same steps (WGSL's uniformity rules for the warp reduction).

/** Words of quantized x a 32-value group: 8 x_high, then 8 x_low. */
export const X_QUANT_GROUP_WORDS = 16;

const [W, X, Y] = GEMV_BINDINGS.buffers;
/** The up projection's weights of a gated kernel, rows like `w`'s (the gate's). */
const UP_WEIGHTS = { group: 0, binding: 5, name: 'w_up', element: 'u32', access: 'read' } as const;

/** Both dispatches' declarations: x's sums of 8 add 4 factors a group, a gated kernel `w_up`. */
const rowsInterface = (factorsPerGroup: number, gated: boolean) =>
  ({
    ...GEMV_BINDINGS,
    buffers: gated ? [W, X, Y, UP_WEIGHTS] : [W, X, Y],
    shared: [],
    scratch: [
      { group: 0, binding: 3, name: 'x_quant', element: 'u32', length: 'n_in / 2' },
      { group: 0, binding: 4, name: 'x_factors', element: 'f32', length: `n_in / 32 * ${factorsPerGroup}` }, // prettier-ignore
    ],
  }) as const;

export type RowsBuilder = BodyBuilder<DeclaredBy<ReturnType<typeof rowsInterface>>>;

/**
 * One of the rows a warp streams together: its weights (`w`, or a gated kernel's `w_up`), the
 * lane's running partial, and the row (the last for a warp past n_out, which is not `live`).
 */
export interface WarpRow {
  readonly weights: 'w' | 'w_up';
  readonly total: Local<'f32'>;
  readonly row: Local<'u32'>;
  readonly live: Local<'bool'>;
}

/**
 * What a row step sees: the warp's ROWS_PER_WARP rows (sharing every x load), its lane and the
 * x_factors index of x's first sum of 8 (n_in / 32).
 */
export interface RowStep {
  readonly b: RowsBuilder;
  readonly rows: readonly [WarpRow, WarpRow];
  readonly lane: Local<'u32'>;
  readonly sumBase: Local<'u32'>;
}

/** A row-streaming gemv kernel: `row` adds the lane's share of each row into its `total`. */
export interface RowsGemvKernel {
  readonly id: string;
  readonly semanticVersion: number;
  readonly type: QuantType;
  readonly row: (step: RowStep) => void;
  /** Whether rows read x's sums of 8 (blocks with mins do; their 16-byte stores need 128 | n_in). */
  readonly xSums?: boolean;
  /** Whether the row dispatch keeps to ROWS_MAX_REGISTERS (default true): false where it spills. */
  readonly capRegisters?: boolean;
}

/**
 * A gated kernel (`gated: true`) reads a second matrix `w_up` of W's shape and writes
 * y = silu(W x) · (W_up x), SwiGLU's gate and up projections in one launch: a warp streams row r
 * of both, sharing every x load, as a plain kernel's warp streams two consecutive rows.
 */
export type RowsGemvOptions = Omit<GemvCatalogOptions, 'spec' | 'type' | 'tolerance' | 'offsetHeadroom'>; // prettier-ignore

/** Rows a warp streams together, sharing every x load: x moves through L1 once per two rows. */
export const ROWS_PER_WARP = 2;
// At most 256 threads: ptxas then has 255 registers a thread to keep a step's loads in flight (at
// 1024 threads it has 64, and spills).
const GROUP_SIZES: KnobBounds = { min: 32, max: 256, multipleOf: 32 };
// Registers a row-streaming thread may take: 20 warps an SM where 112-127 allowed 16; ptxas fits
// the q4k, q4k-swiglu, q6k-soa and q8_0 row steps in it without spilling (80 spills; q6k-gemv
// spills 12 bytes at 96 on sm_75 and sm_80, so it keeps its 127). Where the grid takes several
// waves that is more loads in flight: H200 model, q4k-swiglu-gemv 4096 -> 14336 17.77 -> 16.70 µs,
// q4k-gemv 9.59 -> 8.84 µs; one wave (n_out 4096, 6144) is unchanged.
const ROWS_MAX_REGISTERS = 96;
// A warp a workgroup: each thread's group is a dependent chain, so spreading them over SMs beats
// sharing one SM's issue (H200 model at n_in 4096: 1.01 µs against 1.21 at 128 threads).
const QUANTIZE_THREADS = 32;

/** A row-streaming gemv catalog kernel, W's rows `layout`: x quantized once, then a warp a row. */
export const rowsGemvKernel = (kernel: RowsGemvKernel, layout: string, options: RowsGemvOptions) =>
  lazyKernel(kernel.id, () => buildRowsGemvKernel(kernel, layout, options));

function buildRowsGemvKernel(kernel: RowsGemvKernel, layout: string, options: RowsGemvOptions) {
  const { id, semanticVersion, type } = kernel;
  const gated = options.gated ?? false;
  const sums = kernel.xSums ?? true;
  const entryPoint = id.replaceAll('-', '_');
  const what = gated
    ? `y = silu(dequant(W) x) * dequant(W_up) x (SwiGLU), W and W_up rows ${layout}`
    : `y = dequant(W) x, W rows ${layout}`;
  const description = `${what} (read as u32 words), x and y f32; x quantized once to 16 bits a value (two int8 halves, a scale per 32) in scratch, then a warp a row${gated ? ' of both' : ''} meets the weights in int8 dot products`;
  const rowsPerWarp = gated ? 1 : ROWS_PER_WARP;
  const declarations = rowsInterface(sums ? 5 : 1, gated);
  const spec = defineKernel(
    {
      ...{ id, semanticVersion, entryPoint, description },
      ...declarations,
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup of the row dispatch; each 32-lane warp streams rows',
          default: 128,
          bounds: { ptx: GROUP_SIZES, wgsl: GROUP_SIZES },
        },
      ],
      launch: {
        workgroupSize: `${QUANTIZE_THREADS}`,
        grid: [`ceil_div(n_in / ${X_GROUP}, ${QUANTIZE_THREADS})`, '1', '1'],
      },
      stages: [
        {
          entryPoint: `${entryPoint}_rows`,
          shared: [],
          launch: {
            workgroupSize: 'workgroupSize',
            ...(kernel.capRegisters === false ? {} : { maxRegisters: `${ROWS_MAX_REGISTERS}` }),
            // WebGPU caps a grid dimension at 65535 workgroups; more rows run as a grid-stride loop.
            grid: [`min(ceil_div(n_out, workgroupSize / 32 * ${rowsPerWarp}), 65535)`, '1', '1'],
          },
          // defineKernel types a stage's builder loosely (Declared); its names are declarations'.
          body: (b) => rowsBody(b as unknown as RowsBuilder, kernel, gated),
        },
      ],
    },
    (b) => quantizeBody(b, sums),
  );
  // Offsets may address a sector (32 bytes) past the weights: a load window rounds up to one.
  return gemvCatalogKernel({ spec, type, ...options, offsetHeadroom: 4 * SECTOR_WORDS, tolerance: 1e-6 }); // prettier-ignore
}

/** Dispatch 1: a thread a 32-value group of x, its words and factors into scratch. */
function quantizeBody(b: RowsBuilder, storeSums: boolean): void {
  const nIn = b.param('n_in');
  const { group } = b.let({ group: b.workgroupId().mul(QUANTIZE_THREADS).add(b.localId()) });
  b.if(group.lt(nIn.div(X_GROUP)), () => {
    const { xBase, quantWord } = b.let({
      xBase: group.mul(X_GROUP),
      quantWord: group.mul(X_QUANT_GROUP_WORDS),
    });
    const { scale, sums, stores } = quantizeXGroup(b, xBase);
    // 16-byte stores: x_high words 0-3 and 4-7, then x_low's.
    stores.forEach((words, k) => b.storeVector('x_quant', quantWord.add(4 * k), words));
    b.memory.x_factors.store(group, scale);
    if (!storeSums) return;
    const { sumWord } = b.let({ sumWord: nIn.div(X_GROUP).add(group.mul(4)) });
    b.storeVector('x_factors', sumWord, sums);
  });
}

/**
 * Dispatch 2: workgroups stride over groups of rows, each warp takes ROWS_PER_WARP consecutive rows
 * of its group together (a gated kernel: one row of W and W_up), and lane 0 stores each row's warp
 * sum (gated: silu of the gate's times the up's).
 */
function rowsBody(b: RowsBuilder, kernel: RowsGemvKernel, gated: boolean): void {
  const nOut = b.param('n_out');
  const warps = b.schedule('workgroupSize').div(WARP_SIZE);
  const perWarp = gated ? 1 : ROWS_PER_WARP;
  const { rowsPerGroup, lane, sumBase } = b.let({
    rowsPerGroup: perWarp === 1 ? warps : warps.mul(perWarp),
    lane: b.laneId(),
    sumBase: b.param('n_in').div(X_GROUP),
  });
  const { groups } = b.let({ groups: nOut.add(rowsPerGroup.sub(1)).div(rowsPerGroup) });
  b.for('group', { start: b.workgroupId(), end: groups, step: b.numWorkgroups() }, (_, group) => {
    const warpRow = perWarp === 1 ? b.warpId() : b.warpId().mul(perWarp);
    const { first } = b.let({ first: group.mul(rowsPerGroup).add(warpRow) });
    // A gated warp's rows are row `first` of W and of W_up.
    const warpRowAt = (index: number) => {
      const { slot } = b.let({ slot: index === 0 || gated ? first : first.add(index) });
      const { live, rowIndex: row, total } = b.let({ live: slot.lt(nOut), rowIndex: slot.min(nOut.sub(1)), total: f32(0) }); // prettier-ignore
      return { weights: gated && index === 1 ? 'w_up' : 'w', slot, live, row, total } as const;
    };
    const rows = [warpRowAt(0), warpRowAt(1)] as const;
    kernel.row({ b, rows, lane, sumBase });
    const stored = (live: Local<'bool'>, slot: Local<'u32'>, value: Expr<'f32'>) =>
      b.if(live.and(lane.eq(0)), () => b.memory.y.store(slot, value));
    if (gated) {
      const [gate, up] = rows;
      const gateSum = b.reduce('add', 'row_sum', gate.total);
      return stored(gate.live, gate.slot, siluTimes(gateSum, b.reduce('add', 'row_sum', up.total)));
    }
    for (const { slot, live, total } of rows) stored(live, slot, b.reduce('add', 'row_sum', total));
  });
}

/**
 * A lane's share of the row's 256-value blocks, 4 lanes a block: the block count, the lane's
 * quarter of its block (half = quarter / 2, side = quarter % 2) and its block within a step.
 */
export function blockLanes({ b, lane }: RowStep, blockSize: number) {
  const { blocks, quarter, laneBlock } = b.let({
    blocks: b.param('n_in').div(blockSize),
    quarter: lane.and(3),
    laneBlock: lane.shr(2),
  });
  return { blocks, quarter, laneBlock, ...b.let({ half: quarter.shr(1), side: quarter.and(1) }) };
}
