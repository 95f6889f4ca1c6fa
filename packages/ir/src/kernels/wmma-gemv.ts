// Catalog kernel `wmma-gemv`: Y[c][r] = Σ_k W[r][k]·X[c][k] for c < n_cols ≤ 16 on tensor cores.
import { WARP_SIZE } from '../body.js';
import { defineKernel } from '../builder.js';
import type { Local, Value } from '../expression-methods.js';
import { assignEach, four } from './locals.js';
import {
  WMMA_PARTIAL,
  loadWordPair,
  loadWords,
  storeWmmaTile,
  zeroAccumulators,
} from './wmma-tile.js';
import type { Four, Pair } from './tuples.js';

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
const TILE_ROWS = 16;
/** u32 words of a row a chunk covers: 32 halves, two mmas' K. */
const CHUNK_WORDS = 16;
/** Chunks a warp loads before its first mma: 2 KB of W (4 gain only at 1024 rows, twice the WGSL). */
const BATCH_CHUNKS = 2;
/** Name hints of an mma's four D values. */
const D_HINTS = four(() => 'd');

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
    grid: [`min(ceil_div(n_out, ${TILE_ROWS}), 65535)`, '1', '1'],
  },
} as const; // checked by defineKernel

/** The `wmma-gemv` spec. */
export const WMMA_GEMV_SPEC = defineKernel(declarations, (b) => {
  const [nCols, nOut, nIn] = [b.param('n_cols'), b.param('n_out'), b.param('n_in')];
  const warps = b.schedule('warps');
  const lane = b.laneId();
  const { warp, rowWords, t, g } = b.let({
    warp: b.warpId(),
    rowWords: nIn.shr(1),
    t: lane.and(3),
    g: lane.shr(2),
  });
  // 4t and 2t: the lane's word offset in a chunk and in a half chunk.
  const { quad, pair } = b.let({ quad: t.mul(4), pair: t.mul(2) });
  const lastCol = b.let('last_col', nCols.sub(1));
  // X words of the lane's columns g and g + 8 at its 4t offset; two: n_cols > 8, the second n8
  // tile of columns runs (workgroup-uniform).
  const { xLo, xHi, two } = b.let({
    xLo: g.min(lastCol).mul(rowWords).add(quad),
    xHi: g.add(8).min(lastCol).mul(rowWords).add(quad),
    two: nCols.gt(8),
  });
  const { chunks, tiles, roundWords } = b.let({
    chunks: nIn.shr(5),
    tiles: nOut.add(TILE_ROWS - 1).div(TILE_ROWS),
    roundWords: warps.mul(CHUNK_WORDS),
  });
  // Warp w takes chunks w, w + warps, …, BATCH_CHUNKS of them a batch; a chunk past the last
  // (the last batch's, where warps * BATCH_CHUNKS does not divide the chunks) loads nothing.
  const { warpWords, chunkWords, batchWords } = b.let({
    warpWords: warp.mul(CHUNK_WORDS),
    chunkWords: chunks.mul(CHUNK_WORDS),
    batchWords: roundWords.mul(BATCH_CHUNKS),
  });
  const perBatch = warps.mul(BATCH_CHUNKS);
  const batchesEnd = b.let(
    'batches_end',
    chunks.add(perBatch.sub(1)).div(perBatch).mul(batchWords),
  );
  const range = { start: b.workgroupId('x'), end: tiles, step: b.numWorkgroups('x') };
  b.for('tile', range, (_, tile) => {
    const firstRow = b.let('first_row', tile.mul(TILE_ROWS));
    const rowLo = b.let('row_lo', firstRow.add(g));
    const rowHi = b.let('row_hi', rowLo.add(8));
    const { wLo, wHi, liveLo, liveHi } = b.let({
      wLo: rowLo.mul(rowWords).add(quad),
      wHi: rowHi.mul(rowWords).add(quad),
      liveLo: rowLo.lt(nOut),
      liveHi: rowHi.lt(nOut),
    });
    const acc = zeroAccumulators(b);
    /** acc[h] += A·B for one mma. */
    const mmaInto = (h: 0 | 1, a: Four<Value<'u32'>>, words: Pair<Value<'u32'>>) => {
      const d = b.mma('m16n8k16', D_HINTS, { a, b: words, c: acc[h] });
      assignEach(b, acc[h], d);
    };
    // A chunk's two mmas take the lane's words 4t + 2j, 4t + 2j + 1 as logical k words t, t + 4.
    type Chunk = { readonly lo: Four<Local<'u32'>>; readonly hi: Four<Local<'u32'>> };
    const mmas = (h: 0 | 1, { lo, hi }: Chunk, x: Four<Value<'u32'>>) => {
      mmaInto(h, [lo[0], hi[0], lo[1], hi[1]], [x[0], x[1]]);
      mmaInto(h, [lo[2], hi[2], lo[3], hi[3]], [x[2], x[3]]);
    };
    // The loop steps over whole batches' words (workgroup-uniform); the warp's chunk is warpWords on.
    b.for('batch', { start: 0, end: batchesEnd, step: batchWords }, (_, batch) => {
      // Every W and X load of the batch, then its mmas (zero fragments, adding nothing, for a chunk
      // past the last or a row past n_out).
      const offset = batch.add(warpWords);
      const batchChunks = Array.from({ length: BATCH_CHUNKS }, (_, u) => {
        const off = b.let('off', u === 0 ? offset : offset.add(roundWords.mul(u)));
        const live = b.let('live', off.lt(chunkWords));
        const lo = loadWords(b, 'w', wLo.add(off), live.and(liveLo));
        const hi = loadWords(b, 'w', wHi.add(off), live.and(liveHi));
        return { off, live, lo, hi };
      });
      // Column tile 2's X (n_cols > 8) is loaded with the rest; its loads stay zero otherwise.
      const columns = (start: Local<'u32'>, guard: (live: Local<'bool'>) => Value<'bool'>) =>
        batchChunks.map((chunk) => ({
          chunk,
          x: loadWords(b, 'x', start.add(chunk.off), guard(chunk.live)),
        }));
      const [first, second] = [columns(xLo, (live) => live), columns(xHi, (live) => live.and(two))];
      first.forEach(({ chunk, x }) => mmas(0, chunk, x));
      b.if(two, () => second.forEach(({ chunk, x }) => mmas(1, chunk, x)));
    });
    // An n_in ≡ 16 (mod 32) leaves a 16-k half chunk, the last warp's: 8-byte loads of words 2t,
    // 2t + 1 (row and column starts carry the lane's 4t).
    b.if(nIn.and(16).ne(0), () => {
      const mine = warp.eq(warps.sub(1));
      const tailOff = b.let('tail_off', chunkWords.add(pair));
      const at = (start: Local<'u32'>) => start.add(tailOff).sub(quad);
      const lo = loadWordPair(b, 'w', at(wLo), mine.and(liveLo));
      const hi = loadWordPair(b, 'w', at(wHi), mine.and(liveHi));
      const half = (h: 0 | 1, x: Pair<Local<'u32'>>) => mmaInto(h, [lo[0], hi[0], lo[1], hi[1]], x);
      half(0, loadWordPair(b, 'x', at(xLo), mine));
      b.if(two, () => half(1, loadWordPair(b, 'x', at(xHi), mine)));
    });
    storeWmmaTile(b, warp, pair, acc, firstRow);
  });
});
