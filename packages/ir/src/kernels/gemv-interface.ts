import { WARP_SIZE, type VarExpr as Var } from '../body.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import { add, and, div, eq, f32, lt, min, mul, sub } from '../expressions.js';
import { QUANT_FORMATS, type QuantType } from '../quant/formats.js';
import type { KnobBounds } from '../spec.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { gemvCatalogKernel, type GemvCatalogOptions } from './gemv-catalog.js';
import { quantizeXTile, X_TILE } from './x-quantize.js';

/**
 * The buffers and params of every quantized gemv kernel (W as u32 words): engines launch them
 * alike.
 */
export const GEMV_BINDINGS = {
  buffers: [
    { group: 0, binding: 0, name: 'w', element: 'u32', access: 'read' },
    { group: 0, binding: 1, name: 'x', element: 'f32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  params: [
    { name: 'n_in', type: 'u32' },
    { name: 'n_out', type: 'u32' },
  ],
} as const;

/**
 * GEMV_BINDINGS and the shared memory of the integer-dot plan.
 *
 * Plan. A workgroup first quantizes an x tile (X_TILE values) into shared memory, once for all its
 * rows: x ≈ s·(256·h + l) with int8 h and l and one f32 scale s per 32 values (16 bits against
 * the group's largest |x|), plus exact f32 sums of each 8 values. Its warps then stream their rows:
 * weights meet x in 4-way int8 dot products (`dot4I8`: dp4a, dot4I8Packed), i32 sums per sub-block
 * scaled once in f32, so a weight costs a fraction of an instruction instead of a conversion and a
 * float FMA. Rows whose blocks are not 16-byte aligned (Q8_0, native Q6_K) or interleave headers
 * with quants (Q4_K) are staged: the warp copies a step's bytes, whole sectors in 128-byte
 * requests, into its own shared slice and each lane reads its block from there.
 * Loops are workgroup-uniform (a warp past the last row runs every step but loads and adds nothing),
 * so barriers and warp reductions are legal in WGSL.
 */
function gemvInterface(stagingWords: number) {
  const staging = `workgroupSize / ${WARP_SIZE} * ${stagingWords}`;
  return {
    ...GEMV_BINDINGS,
    shared: [
      { name: 'x_high', element: 'u32', length: `${X_TILE / 4}` },
      { name: 'x_low', element: 'u32', length: `${X_TILE / 4}` },
      { name: 'x_scale', element: 'f32', length: `${X_TILE / 32}` },
      { name: 'x_sum', element: 'f32', length: `${X_TILE / 8}` },
      { name: 'staging', element: 'u32', length: stagingWords === 0 ? '1' : staging },
    ],
  } as const; // checked by defineKernel
}
// Staging beyond 8 warps would not fit WGSL's 32 KiB of workgroup memory beside the x tile.
const GROUP_SIZES = { min: 32, max: 256, multipleOf: 32 };

export type GemvBuilder = BodyBuilder<DeclaredBy<ReturnType<typeof gemvInterface>>>;
/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
export const SECTOR_WORDS = 8;

/** What a kernel's step sees: the row, its blocks and where this warp's staging slice starts. */
export interface GemvStep<L> {
  readonly b: GemvBuilder;
  /** The lane's running f32 partial of the row. */
  readonly total: Var<'f32'>;
  /** The row (the last row for a warp past it, which loads and adds nothing: see `live`). */
  readonly row: Var<'u32'>;
  /** Whether the row exists; a warp past the last row still runs every step and barrier. */
  readonly live: Var<'bool'>;
  readonly lane: Var<'u32'>;
  readonly lanes: L;
  /** Blocks a row holds. */
  readonly blocks: Var<'u32'>;
  /** The step's first block, counted in the row. */
  readonly rowBlock: Var<'u32'>;
  /** The step's first block, counted in the x tile (x_high word 8·tileBlock·blockSize/32…). */
  readonly tileBlock: Var<'u32'>;
  /** Blocks of the tile from the step's first on (may exceed blocksPerStep). */
  readonly blocksLeft: Var<'u32'>;
  /** This warp's first staging word. */
  readonly stagingBase: Var<'u32'>;
}

/** A gemv kernel: `blocksPerStep` blocks of a row a step; `step` adds them into `total`. */
interface GemvKernel<L> {
  readonly id: string;
  readonly semanticVersion: number;
  readonly type: QuantType;
  readonly blocksPerStep: number;
  /** Shared words a warp stages a step into (0: none). */
  readonly stagingWords: number;
  readonly laneSetup?: (b: GemvBuilder, lane: Var<'u32'>) => L;
  readonly step: (step: GemvStep<L>) => void;
}

/** A gemv catalog kernel, W's rows `layout`; `ptxGroupSizes` bounds workgroupSize on PTX. */
export function gemvKernel<L>(
  kernel: GemvKernel<L>,
  layout: string,
  options: Omit<GemvCatalogOptions, 'spec' | 'type' | 'tolerance'> & {
    readonly ptxGroupSizes?: KnobBounds;
  },
): CatalogKernel {
  const { id, semanticVersion, type } = kernel;
  const { ptxGroupSizes = GROUP_SIZES, ...catalog } = options;
  const description = `y = dequant(W) x, W rows ${layout} (read as u32 words), x and y f32; x quantized per workgroup to 16 bits a value (two int8 halves, a scale per 32), weights met in int8 dot products; one warp per row`;
  const rowBounds = { min: 1, max: 16 };
  const spec = defineKernel(
    {
      ...{ id, semanticVersion, entryPoint: id.replaceAll('-', '_'), description },
      ...gemvInterface(kernel.stagingWords),
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup; each 32-lane warp streams its own rows',
          default: 256,
          bounds: { ptx: ptxGroupSizes, wgsl: GROUP_SIZES },
        },
        {
          name: 'rowsPerWarp',
          description: 'rows each warp streams one after another (more rows share one x tile)',
          default: 4,
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
  return gemvCatalogKernel({ spec, type, ...catalog, tolerance: 1e-6 });
}

/**
 * The gemv loop: per x tile, quantize it, then workgroups stride over groups of rows, each warp
 * takes `rowsPerWarp` consecutive rows of its group, and lane 0 stores (or, after the first tile,
 * adds to) each row's warp sum.
 */
function gemvBody<L>(b: GemvBuilder, kernel: GemvKernel<L>): void {
  const { blockSize } = QUANT_FORMATS[kernel.type];
  const [nIn, nOut] = [b.param('n_in'), b.param('n_out')];
  const perWarp = b.schedule('rowsPerWarp');
  const warps = div(b.schedule('workgroupSize'), WARP_SIZE);
  const { rowsPerGroup, blocks } = b.let({
    rowsPerGroup: mul(warps, perWarp),
    blocks: div(nIn, blockSize),
  });
  const { groups, tiles, lane } = b.let({
    groups: div(add(nOut, sub(rowsPerGroup, 1)), rowsPerGroup),
    tiles: div(add(nIn, X_TILE - 1), X_TILE),
    lane: b.laneId(),
  });
  const { stagingBase } = b.let({ stagingBase: mul(b.warpId(), Math.max(kernel.stagingWords, 1)) });
  // Without laneSetup, L and `lanes` are undefined.
  const lanes = kernel.laneSetup?.(b, lane) as L;
  b.for('tile', { start: 0, end: tiles }, (t, tile) => {
    const { tileStart } = t.let({ tileStart: mul(tile, X_TILE) });
    const { tileValues } = t.let({ tileValues: min(sub(nIn, tileStart), X_TILE) });
    quantizeXTile(t, tileStart, tileValues);
    t.barrier();
    const { tileBlocks, firstBlock } = t.let({
      tileBlocks: div(tileValues, blockSize),
      firstBlock: div(tileStart, blockSize),
    });
    const steps = div(add(tileBlocks, kernel.blocksPerStep - 1), kernel.blocksPerStep);
    const { tileSteps } = t.let({ tileSteps: steps });
    const groupRange = { start: t.workgroupId('x'), end: groups, step: t.numWorkgroups('x') };
    t.for('group', groupRange, (g, group) => {
      g.for('r', { start: 0, end: perWarp }, (rows, index) => {
        const first = add(mul(group, rowsPerGroup), mul(rows.warpId(), perWarp));
        const { slot } = rows.let({ slot: add(first, index) });
        const { live, row, total } = rows.let({
          live: lt(slot, nOut),
          row: min(slot, sub(nOut, 1)),
          total: f32(0),
        });
        rows.for('step', { start: 0, end: tileSteps }, (s, stepIndex) => {
          const { tileBlock } = s.let({ tileBlock: mul(stepIndex, kernel.blocksPerStep) });
          const { rowBlock, blocksLeft } = s.let({
            rowBlock: add(firstBlock, tileBlock),
            blocksLeft: sub(tileBlocks, tileBlock),
          });
          const context = { total, row, live, lane, lanes, blocks, stagingBase };
          kernel.step({ b: s, ...context, rowBlock, tileBlock, blocksLeft });
        });
        const sum = rows.reduce('add', 'row_sum', total);
        rows.if(and(live, eq(lane, 0)), (then) =>
          then.if(
            eq(tile, 0),
            (store) => store.store('y', slot, sum),
            (accumulate) => accumulate.store('y', slot, add(accumulate.load('y', slot), sum)),
          ),
        );
      });
    });
    t.barrier();
  });
}
