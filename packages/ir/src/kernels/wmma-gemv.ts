// Catalog kernel `wmma-gemv`: Y[c][r] = Σ_k W[r][k]·X[c][k] for c < n_cols ≤ 16 on tensor cores.
import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import { add, and, div, eq, f32, gt, lt, min, mul, ne, shr, sub } from '../expressions.js';
import { WMMA_PARTIAL, loadWords, storeWmmaTile } from './wmma-tile.js';

// Bandwidth plan. Decode with a few columns is W-bandwidth bound: the kernel loads each weight byte
// once, in whole sectors, and lets one m16n8k16 mma (512 weight bytes) serve 8 columns of X.
// A workgroup takes 16 rows of W (a tile; grid-stride over tiles) and its `warps` warps split K:
// warp w takes the 32-k chunks w, w + warps, … (so a round of the warps reads 64·warps contiguous
// bytes of each row), accumulates D fragments, and the warps' fragments are summed through shared
// memory at the end. Per chunk each lane (g = lane >> 2, t = lane % 4) makes three 16-byte loads:
// W words 4t..4t+3 of the chunk in rows g and g + 8 (the 16 rows' 64-byte chunk slices, 2 whole
// sectors each) and X words 4t..4t+3 of the chunk in column g (X is small and stays in cache),
// plus one more for column g + 8 when n_cols > 8. Σ_k is order-free, so k is permuted alike in A
// and B (Marlin-style): mma j ∈ {0, 1} of a chunk takes the lane's words 4t + 2j and 4t + 2j + 1 as
// the fragment words the ISA places at logical k words t and t + 4 (A: a[0], a[1] = rows g, g + 8
// at word t, a[2], a[3] at word t + 4; B: b[0], b[1]). So a chunk is 2 mmas (4 with n_cols > 8)
// for 3 (4) vector loads. Latency: a warp issues the loads of BATCH_CHUNKS chunks (2 KB of W)
// before its first mma, and 8 warps a workgroup put 16 warps and 32 KB in flight on each SM at
// n_out 4096 (two workgroups an SM), over the ~22 KB an H200 SM needs (bandwidth × DRAM latency).
// Loads are guarded (a chunk past the last, a row past n_out loads nothing). An n_in ≡ 16
// (mod 32) leaves a 16-k half chunk: 8-byte loads of words 2t, 2t + 1 (logical words t, t + 4),
// one sector a row, made by the last warp alone.
// Columns of D depend only on their column of B, and rows only on their row of A: lanes past
// n_cols read column n_cols − 1 again (cached) and their D columns are dropped; rows past n_out
// load nothing (zero fragments) and store nothing. Loops and mmas are workgroup-uniform, so the
// same spec runs in WGSL, where the mma exchanges fragments through workgroup memory.

/** Warps per workgroup (split K); 8 keeps the workgroup at 256 threads, WebGPU's default limit. */
const WARPS = { min: 1, max: 8 };
/** Rows of W a workgroup takes: the mma's M. */
export const WMMA_TILE_ROWS = 16;
/** u32 words of a row a chunk covers: 32 halves, two mmas' K. */
const CHUNK_WORDS = 16;
/** Chunks a warp loads before its first mma: 2 KB of W (4 gain only at 1024 rows, twice the WGSL). */
const BATCH_CHUNKS = 2;

const declarations = {
  id: 'wmma-gemv',
  semanticVersion: 2,
  entryPoint: 'wmma_gemv',
  description:
    'Y[c][r] = sum_k W[r][k] * X[c][k] for c < n_cols (1..16): W f16 [n_out][n_in], X f16 ' +
    '[n_cols][n_in] (two halves a u32 word), Y f32 [n_cols][n_out]; m16n8k16 mma on 16-row tiles, ' +
    'K split across the warps of a workgroup',
  buffers: [
    { group: 0, binding: 0, name: 'w', element: 'u32', access: 'read' },
    { group: 0, binding: 1, name: 'x', element: 'u32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  params: [
    { name: 'n_cols', type: 'u32' },
    { name: 'n_out', type: 'u32' },
    { name: 'n_in', type: 'u32' },
  ],
  shared: [WMMA_PARTIAL],
  schedule: [
    {
      name: 'warps',
      description:
        'warps per workgroup, splitting K (interleaved 32-k chunks) over one 16-row tile',
      default: 8,
      bounds: { ptx: WARPS, wgsl: WARPS },
    },
  ],
  launch: {
    workgroupSize: `warps * ${WARP_SIZE}`,
    // WebGPU caps a grid dimension at 65535 workgroups; more tiles run as a grid-stride loop.
    grid: [`min(ceil_div(n_out, ${WMMA_TILE_ROWS}), 65535)`, '1', '1'],
  },
} as const; // checked by defineKernel

type WmmaBuilder = BodyBuilder<DeclaredBy<typeof declarations>>;
type Four<T> = [T, T, T, T];

/** The lane's fixed state: its fragment coordinates and where its rows and columns start. */
interface Lanes {
  /** A local name not used before in this body: `prefix` and a counter. */
  readonly fresh: (prefix: string) => string;
  readonly warp: Var<'u32'>;
  readonly rowWords: Var<'u32'>;
  /** X word of the lane's column g (g + 8), at the lane's 4t offset. */
  readonly xLo: Var<'u32'>;
  readonly xHi: Var<'u32'>;
  /** 4t and 2t: the lane's word offset in a chunk and in a half chunk. */
  readonly quad: Var<'u32'>;
  readonly pair: Var<'u32'>;
  /** Whether n_cols > 8: the second n8 tile of columns runs (workgroup-uniform). */
  readonly two: Var<'bool'>;
  /** Words of a row a round of the warps covers: a warp's next chunk is this far on. */
  readonly roundWords: Var<'u32'>;
  /** Words of a row the whole chunks cover: a chunk starting at or past it does not exist. */
  readonly chunkWords: Var<'u32'>;
}

/** The tile's per-lane state: where rows g and g + 8 start, whether they exist, the accumulators. */
interface Tile {
  readonly wLo: Var<'u32'>;
  readonly wHi: Var<'u32'>;
  readonly liveLo: Var<'bool'>;
  readonly liveHi: Var<'bool'>;
  readonly acc: readonly Var<'f32'>[];
}

/** acc[first..first+4) += A·B for one mma, updating the accumulators in place. */
function mmaInto(
  b: WmmaBuilder,
  lanes: Lanes,
  acc: readonly Var<'f32'>[],
  first: number,
  a: Four<Expr<'u32'>>,
  words: [Expr<'u32'>, Expr<'u32'>],
): void {
  const c = acc.slice(first, first + 4) as Four<Var<'f32'>>;
  const prefix = lanes.fresh('d');
  const names = Array.from({ length: 4 }, (_, i) => `${prefix}_${first + i}`) as Four<string>;
  const d = b.mma('m16n8k16', names, { a, b: words, c });
  c.forEach((local, i) => b.assign(local, d[i] as Var<'f32'>));
}

/**
 * BATCH_CHUNKS of the warp's chunks (the first at word `offset` of each row, the next a round of
 * the warps later) into the tile's accumulators: every W and X load of the batch, then its mmas
 * (zero fragments, adding nothing, for a chunk past the last or a row past n_out).
 */
function batchStep(b: WmmaBuilder, lanes: Lanes, tile: Tile, offset: Expr<'u32'>): void {
  const chunks = Array.from({ length: BATCH_CHUNKS }, (_, u) => {
    const off = b.let(lanes.fresh('off'), u === 0 ? offset : add(offset, mul(lanes.roundWords, u)));
    const chunk = b.let(lanes.fresh('live'), lt(off, lanes.chunkWords));
    const rowGuard = (live: Var<'bool'>) => and(chunk, live);
    const at = (base: Var<'u32'>) => add(base, off);
    return {
      off,
      chunk,
      lo: loadWords(b, lanes.fresh, 'w', at(tile.wLo), 4, rowGuard(tile.liveLo)),
      hi: loadWords(b, lanes.fresh, 'w', at(tile.wHi), 4, rowGuard(tile.liveHi)),
    };
  });
  // Column tile 2's X (n_cols > 8) is loaded with the rest; its loads stay zero otherwise.
  const x = (base: Var<'u32'>, live: Expr<'bool'> | undefined) =>
    chunks.map(({ off, chunk }) =>
      loadWords(
        b,
        lanes.fresh,
        'x',
        add(base, off),
        4,
        live === undefined ? chunk : and(chunk, live),
      ),
    );
  const [xLo, xHi] = [x(lanes.xLo, undefined), x(lanes.xHi, lanes.two)];
  const a = (
    lo: readonly Var<'u32'>[],
    hi: readonly Var<'u32'>[],
    j: number,
  ): Four<Expr<'u32'>> => [
    lo[2 * j] as Var<'u32'>,
    hi[2 * j] as Var<'u32'>,
    lo[2 * j + 1] as Var<'u32'>,
    hi[2 * j + 1] as Var<'u32'>,
  ];
  const columns = (bb: WmmaBuilder, words: readonly (readonly Var<'u32'>[])[], first: number) =>
    chunks.forEach(({ lo, hi }, u) => {
      const xu = words[u] as readonly Var<'u32'>[];
      for (let j = 0; j < 2; j++)
        mmaInto(bb, lanes, tile.acc, first, a(lo, hi, j), [
          xu[2 * j] as Var<'u32'>,
          xu[2 * j + 1] as Var<'u32'>,
        ]);
    });
  columns(b, xLo, 0);
  b.if(lanes.two, (second) => columns(second, xHi, 4));
}

/** The 16-k half chunk at word `offset` of each row, loaded by this warp where `mine` holds. */
function halfStep(
  b: WmmaBuilder,
  lanes: Lanes,
  tile: Tile,
  offset: Expr<'u32'>,
  mine: Expr<'bool'>,
): void {
  const { tailOff } = b.let({ tailOff: add(offset, lanes.pair) });
  // Row and column starts carry the lane's 4t; the half chunk wants 2t.
  const at = (base: Var<'u32'>) => sub(add(base, tailOff), lanes.quad);
  const lo = loadWords(b, lanes.fresh, 'w', at(tile.wLo), 2, and(mine, tile.liveLo));
  const hi = loadWords(b, lanes.fresh, 'w', at(tile.wHi), 2, and(mine, tile.liveHi));
  const a: Four<Expr<'u32'>> = [lo[0]!, hi[0]!, lo[1]!, hi[1]!];
  const columns = (bb: WmmaBuilder, base: Var<'u32'>, first: number) => {
    const x = loadWords(bb, lanes.fresh, 'x', at(base), 2, mine);
    mmaInto(bb, lanes, tile.acc, first, a, [x[0]!, x[1]!]);
  };
  columns(b, lanes.xLo, 0);
  b.if(lanes.two, (second) => columns(second, lanes.xHi, 4));
}

function body(b: WmmaBuilder): void {
  let unique = 0;
  const fresh = (prefix: string): string => `${prefix}${unique++}`;
  const [nCols, nOut, nIn] = [b.param('n_cols'), b.param('n_out'), b.param('n_in')];
  const warps = b.schedule('warps');
  const lane = b.laneId();
  const { warp, rowWords, t, g } = b.let({
    warp: b.warpId(),
    rowWords: shr(nIn, 1),
    t: and(lane, 3),
    g: shr(lane, 2),
  });
  const { quad, pair } = b.let({ quad: mul(t, 4), pair: mul(t, 2) });
  const { lastCol } = b.let({ lastCol: sub(nCols, 1) });
  const { xLo, xHi, two } = b.let({
    xLo: add(mul(min(g, lastCol), rowWords), quad),
    xHi: add(mul(min(add(g, 8), lastCol), rowWords), quad),
    two: gt(nCols, 8),
  });
  const { chunks, tiles, roundWords } = b.let({
    chunks: shr(nIn, 5),
    tiles: div(add(nOut, WMMA_TILE_ROWS - 1), WMMA_TILE_ROWS),
    roundWords: mul(warps, CHUNK_WORDS),
  });
  // Warp w takes chunks w, w + warps, …, BATCH_CHUNKS of them a batch; a chunk past the last
  // (the last batch's, where warps * BATCH_CHUNKS does not divide the chunks) loads nothing.
  const { warpWords, chunkWords, batchWords } = b.let({
    warpWords: mul(warp, CHUNK_WORDS),
    chunkWords: mul(chunks, CHUNK_WORDS),
    batchWords: mul(roundWords, BATCH_CHUNKS),
  });
  const lanes: Lanes = { fresh, warp, rowWords, xLo, xHi, quad, pair, two, roundWords, chunkWords };
  const { batchesEnd } = b.let({
    batchesEnd: mul(
      div(add(chunks, sub(mul(warps, BATCH_CHUNKS), 1)), mul(warps, BATCH_CHUNKS)),
      batchWords,
    ),
  });
  const range = { start: b.workgroupId('x'), end: tiles, step: b.numWorkgroups('x') };
  b.for('tile', range, (tb, tileIndex) => {
    const { firstRow } = tb.let({ firstRow: mul(tileIndex, WMMA_TILE_ROWS) });
    const { rowLo } = tb.let({ rowLo: add(firstRow, g) });
    const { rowHi } = tb.let({ rowHi: add(rowLo, 8) });
    const { wLo, wHi, liveLo, liveHi } = tb.let({
      wLo: add(mul(rowLo, rowWords), quad),
      wHi: add(mul(rowHi, rowWords), quad),
      liveLo: lt(rowLo, nOut),
      liveHi: lt(rowHi, nOut),
    });
    const acc = Array.from({ length: 8 }, (_, i) => tb.let(`acc${i}`, f32(0)));
    const tile: Tile = { wLo, wHi, liveLo, liveHi, acc };
    // The loop steps over whole batches' words (workgroup-uniform); the warp's chunk is warpWords on.
    tb.for('batch', { start: 0, end: batchesEnd, step: batchWords }, (loop, batch) => {
      batchStep(loop, lanes, tile, add(batch, warpWords));
    });
    tb.if(ne(and(nIn, 16), 0), (tail) =>
      halfStep(tail, lanes, tile, chunkWords, eq(warp, sub(warps, 1))),
    );
    storeWmmaTile(tb, lanes.warp, lanes.pair, tile.acc, firstRow);
  });
}

/** The `wmma-gemv` spec. */
export const WMMA_GEMV_SPEC = defineKernel(declarations, body);
