// Catalog kernel `q4k-soa-wmma`: Y[c][r] = Σ_k W[r][k]·X[c][k], W repacked Q4_K, on tensor cores.
import { WARP_SIZE } from '../body.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import type { Local, Value } from '../expression-methods.js';
import { bitSelect, f32, u32 } from '../expressions.js';
import { assignEach, four } from './locals.js';
import { q4kScalesMins } from './q4k-scales.js';
import {
  WMMA_PARTIAL,
  assignWords,
  loadWordPair,
  loadWords,
  storeWmmaTile,
  zeroAccumulators,
} from './wmma-tile.js';
import type { Four, Pair } from './tuples.js';

// Plan. As in wmma-gemv a workgroup takes 16 rows (a tile) and its warps split K, here by pairs
// of 256-value blocks (warp w takes pairs w, w + warps, …, in workgroup-uniform rounds; a block
// past the last loads nothing and counts as zero). Per pair a lane (g = lane >> 2, t = lane % 4)
// loads meta words 2t, 2t + 1 of rows g and g + 8 (a pair's 32 meta bytes are one sector a row)
// and 8 idx shuffles hand each lane its rows' 16 meta bytes of a block; per 32-byte qs span c
// (sub-blocks 2c, 2c + 1) it loads qs words 2t, 2t + 1 of both rows (8-byte loads: the 4 lanes
// of a row read one whole sector). Latency: all of a pair's meta and qs loads (36 words a lane,
// 4.6 KB a warp) are issued before the first mma, and the runtime span loop picks a span's words
// from them by selects; column g's X comes one span ahead (a span copies it, then loads the next
// span's into its registers), column g + 8's where it is used. 8 warps a workgroup at 128
// registers: 16 warps an SM at n_out 4096.
// The mma takes raw nibbles, not dequantized weights: a nibble q OR 0x6400 is the f16 1024 + q, so
// each qs word gives four A words with 2 integer ops each (bytes 0 and 2, 1 and 3; low and high
// nibbles), and the lane's X halves are paired alike (k, k + 2) by bit selects. Every mma then
// covers one sub-block in both rows: D = Σ (1024 + q)·x, and a second mma with A = 1.0 gives the
// sub-block's S = Σ x per column. With α = d·scale and β = 1024·α + dmin·min of the row,
// Σ w·x = α·D − β·S: two fmas per D element finish the dequantization after the mma, so the
// weights never leave registers and the 6-bit scales are decoded once per row and sub-block.
// Rows past n_out load nothing (zero meta and qs words) and store nothing; lanes past
// n_cols read column n_cols − 1 and their columns are dropped.

/** Warps per workgroup (split K); 8 keeps the workgroup at 256 threads, WebGPU's default limit. */
const WARPS = { min: 1, max: 8 };
const TILE_ROWS = 16;
/** Two f16 1.0: the A fragment that makes the mma sum X over k. */
const ONES = 0x3c003c00;
/** Two f16 1024: OR-ed onto two nibbles at bits 0 and 16 they become 1024 + q. */
const MAGIC = 0x64006400;
/** Name hints of the D values of a span's first mma (k half 0) and of the chained second. */
const FIRST_K = four(() => 'first_k');
const DOT = four(() => 'dot');

const declarations = {
  id: 'q4k-soa-wmma',
  semanticVersion: 2,
  entryPoint: 'q4k_soa_wmma',
  description:
    'Y[c][r] = sum_k W[r][k] * X[c][k] for c < n_cols (1..16): W [n_out][n_in] Q4_K repacked ' +
    'structure-of-arrays (LAYOUTS.md), X f16 [n_cols][n_in] (two halves a u32 word), Y f32 ' +
    '[n_cols][n_out]; m16n8k16 mma on raw nibbles, scales and mins applied to the D fragments',
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
        'warps per workgroup, splitting K (interleaved Q4_K blocks) over one 16-row tile',
      default: 8,
      bounds: { ptx: WARPS, wgsl: WARPS },
    },
  ],
  launch: {
    workgroupSize: `warps * ${WARP_SIZE}`,
    // Two workgroups of 8 warps an SM: a round's 32 qs words a lane fit (ptxas takes 134 uncapped).
    maxRegisters: '128',
    grid: [`min(ceil_div(n_out, ${TILE_ROWS}), 65535)`, '1', '1'],
  },
} as const; // checked by defineKernel

type QBuilder = BodyBuilder<DeclaredBy<typeof declarations>>;

/** A row's 8 scales and 8 mins of a block as bytes, four sub-blocks a word: [0-3, 4-7] of each. */
function unpackScales(b: QBuilder, [, m1, m2, m3]: Four<Local<'u32'>>) {
  const unpacked = q4kScalesMins([m1, m2, m3], 4);
  const scales = [b.let('scales03', unpacked.scales), b.let('scales47', unpacked.highScales)] as const; // prettier-ignore
  const mins = [b.let('mins03', unpacked.mins), b.let('mins47', unpacked.highMins)] as const;
  return { scales, mins };
}

/** f16 pairs (k, k + 2) and (k + 1, k + 3) of four consecutive halves in words w0, w1. */
const pairX = (b: QBuilder, w0: Local<'u32'>, w1: Local<'u32'>): Pair<Local<'u32'>> => [
  b.let('x_even', bitSelect(0xffff, w0, w1.shl(16))),
  b.let('x_odd', bitSelect(0xffff, w0.shr(16), w1)),
];

/** The `q4k-soa-wmma` spec. */
export const Q4K_SOA_WMMA_SPEC = defineKernel(declarations, (b) => {
  const [nCols, nOut, nIn] = [b.param('n_cols'), b.param('n_out'), b.param('n_in')];
  const warps = b.schedule('warps');
  const lane = b.laneId();
  const { warp, rowWords, t, g, blocks } = b.let({
    warp: b.warpId(),
    rowWords: nIn.shr(1),
    t: lane.and(3),
    g: lane.shr(2),
    blocks: nIn.shr(8),
  });
  // Repacked rows are 32·⌈144·nb/32⌉ bytes: 36·nb words, 4 more for odd nb.
  const { strideWords, metaStart, t2, lastCol, lastSpan } = b.let({
    strideWords: blocks.mul(36).add(blocks.and(1).mul(4)),
    metaStart: blocks.mul(32),
    t2: t.mul(2),
    lastCol: nCols.sub(1),
    lastSpan: blocks.mul(128).sub(32),
  });
  // X words of columns g and g + 8 at the lane's 4t offset in a block's first span.
  const { xLo, xHi, two } = b.let({
    xLo: g.min(lastCol).mul(rowWords).add(t.mul(4)),
    xHi: g.add(8).min(lastCol).mul(rowWords).add(t.mul(4)),
    two: nCols.gt(8),
  });
  // 0 and two f16 1.0, named once: mma operands are registers, so a literal costs a mov each use.
  const { zero, ones } = b.let({ zero: f32(0), ones: u32(ONES) });
  const { tiles, rounds } = b.let({
    tiles: nOut.add(TILE_ROWS - 1).div(TILE_ROWS),
    // Rounds of block pairs: the 32 meta bytes of a pair are one sector of each row.
    rounds: blocks.add(1).shr(1).add(warps.sub(1)).div(warps),
  });
  const metaLane = b.let('meta_lane', metaStart.add(t2));

  /** Loads column g's X words of the span at X word `at` into `into` (4 at each 16-value half). */
  const loadSpanX = (at: Value<'u32'>, into: Pair<Four<Local<'u32'>>>) => {
    const start = b.let('x_start', xLo.add(at));
    assignWords(b, into[0], loadWords(b, 'x', start));
    assignWords(b, into[1], loadWords(b, 'x', start.add(16)));
  };

  /** Two chained mmas from zero: D of A words (both k halves) against B pairs. */
  const mmaPair = (a: Pair<Four<Value<'u32'>>>, x: Pair<Pair<Local<'u32'>>>) => {
    const c = [zero, zero, zero, zero] as const;
    const first = b.mma('m16n8k16', FIRST_K, { a: a[0], b: x[0], c });
    return b.mma('m16n8k16', DOT, { a: a[1], b: x[1], c: first });
  };

  const range = { start: b.workgroupId('x'), end: tiles, step: b.numWorkgroups('x') };
  b.for('tile', range, (_, tile) => {
    const firstRow = b.let('first_row', tile.mul(TILE_ROWS));
    const { rowLo, rowHi } = b.let({ rowLo: firstRow.add(g), rowHi: firstRow.add(g.add(8)) });
    const { startLo, startHi, liveLo, liveHi } = b.let({
      startLo: rowLo.mul(strideWords),
      startHi: rowHi.mul(strideWords),
      liveLo: rowLo.lt(nOut),
      liveHi: rowHi.lt(nOut),
    });
    const acc = zeroAccumulators(b);
    b.for('round', { start: 0, end: rounds }, (_, round) => {
      const pair = b.let('pair', round.mul(warps).add(warp));
      const first = b.let('first', pair.mul(2));
      // Lane t loads meta words 2t, 2t + 1 of the pair (block first + t / 2) in both rows: one whole
      // sector a row, whose second half is the row's zero padding when the block count is odd (d = 0
      // there). The row's 4 lanes then hand its two blocks' 16 bytes round by shuffles.
      const mine = b.let('mine', first.lt(blocks));
      const metaAt = b.let('meta_at', metaLane.add(first.mul(4)));
      const parts = [
        loadWordPair(b, 'w', startLo.add(metaAt), mine.and(liveLo)),
        loadWordPair(b, 'w', startHi.add(metaAt), mine.and(liveHi)),
      ] as const;
      // Then both blocks' qs, 4 spans of 2 words in each row: every load of the round is in flight
      // before its first use (zero for an absent block or row). qs[block][span][row][word].
      const blockQs = (j: 0 | 1) => {
        const exists = b.let('exists', first.add(j).lt(blocks));
        const words = b.let('qs', first.add(j).mul(32).add(t2));
        const load = (start: Local<'u32'>, live: Local<'bool'>, c: number) =>
          loadWordPair(b, 'w', start.add(words.add(c * 8)), exists.and(live));
        return four((c) => [load(startLo, liveLo, c), load(startHi, liveHi, c)] as const);
      };
      const qs = [blockQs(0), blockQs(1)] as const;
      // Column g's X of the next span, loaded one span ahead (here the pair's first); a span past
      // the last block's reads the last span again (its block's zero meta makes it count nothing).
      const pairXAt = b.let('pair_x', first.mul(128));
      const x = [four(() => b.let('x_next', u32(0))), four(() => b.let('x_next', u32(0)))] as const;
      loadSpanX(pairXAt.min(lastSpan), x);
      // A runtime loop over the pair's 2 blocks, for the same reason as the spans'.
      b.for('half', { start: 0, end: 2 }, (_, j) => {
        const shuffled = ([w0, w1]: Pair<Local<'u32'>>) =>
          four((word) => {
            const lane = g.mul(4).add(j.mul(2).add(word >> 1));
            return b.shuffle('idx', 'meta_word', (word & 1) === 0 ? w0 : w1, lane);
          });
        const meta = [shuffled(parts[0]), shuffled(parts[1])] as const;
        const blockX = b.let('block_x', pairXAt.add(j.mul(128)));
        // Whether this is the pair's second block (workgroup-uniform).
        const second = b.let('second', j.ne(0));
        // X word `words` after this block's first (past its last span: the next block's), clamped.
        const xOfSpan = (words: Value<'u32'>) => blockX.add(words).min(lastSpan);
        // d and −dmin of both rows: zero for absent rows and blocks, whose meta words are zero.
        const dOf = ([m0]: Four<Local<'u32'>>) =>
          [b.let('d', m0.unpackHalf(0)), b.let('neg_dmin', m0.unpackHalf(1).neg())] as const;
        const d = [dOf(meta[0]), dOf(meta[1])] as const;
        const rowScales = [unpackScales(b, meta[0]), unpackScales(b, meta[1])] as const;
        // A runtime loop over the block's 4 qs spans (sub-blocks 2c and 2c + 1) keeps both shaders
        // small (16 mmas a pass); a span's words are picked from the round's registers by selects.
        b.for('span', { start: 0, end: u32(4) }, (_, c) => {
          // An odd span's sub-blocks are bytes 2 and 3 of the scale and min words: spanShift 16.
          const { low, odd, spanShift } = b.let({
            low: c.lt(2),
            odd: c.and(1).ne(0),
            spanShift: c.and(1).mul(16),
          });
          const pick = ({ scales, mins }: ReturnType<typeof unpackScales>) =>
            [
              b.let('span_scales', low.select(scales[0], scales[1])),
              b.let('span_mins', low.select(mins[0], mins[1])),
            ] as const;
          const spanScales = [pick(rowScales[0]), pick(rowScales[1])] as const;
          // Column g's X of this span (loaded during the last span's mmas), then the next span's, in
          // flight during this one's; column g + 8's (n_cols > 8) is loaded where it is used.
          const now = [
            four((k) => b.let('x_now', x[0][k])),
            four((k) => b.let('x_now', x[1][k])),
          ] as const;
          const spanAt = b.let('span_x', xOfSpan(c.mul(32)));
          loadSpanX(xOfSpan(c.add(1).mul(32)), x);
          // The lane's qs word k of row g (g + 8) in this span of this block.
          const qsWord = (row: 0 | 1, k: 0 | 1) => {
            const pickSpan = (spans: Four<Pair<Pair<Local<'u32'>>>>) =>
              low.select(
                odd.select(spans[1][row][k], spans[0][row][k]),
                odd.select(spans[3][row][k], spans[2][row][k]),
              );
            return b.let('q', second.select(pickSpan(qs[1]), pickSpan(qs[0])));
          };
          const [lo, hi] = [
            [qsWord(0, 0), qsWord(0, 1)],
            [qsWord(1, 0), qsWord(1, 1)],
          ] as const;
          for (const high of [0, 1] as const) {
            const shift = high === 0 ? spanShift : b.let('shift', spanShift.add(8));
            // A words: nibbles of bytes (0, 2) and (1, 3) of each qs word, as 1024 + q; MAGIC has
            // no bit under the nibble mask, so one lop3 makes (word & mask) | MAGIC.
            const nib = (word: Local<'u32'>, byte: 0 | 8) => {
              const at = 4 * high + byte;
              return b.let('nib', bitSelect(0x000f000f, at === 0 ? word : word.shr(at), MAGIC));
            };
            const aOf = (k: 0 | 1) =>
              [nib(lo[k], 0), nib(hi[k], 0), nib(lo[k], 8), nib(hi[k], 8)] as const;
            const a = [aOf(0), aOf(1)] as const;
            // α = d·scale and −β = −(1024·α + dmin·min) of a row's sub-block (dmin stored negated).
            const scaleMin = (
              [scale, min]: Pair<Local<'u32'>>,
              [dRow, dmin]: Pair<Local<'f32'>>,
            ) => {
              const byte = (word: Local<'u32'>) => word.shr(shift).and(0xff).to('f32');
              const alpha = b.let('alpha', dRow.mul(byte(scale)));
              return [alpha, b.let('beta', alpha.fma(-1024, dmin.mul(byte(min))))] as const;
            };
            const [alphaLo, betaLo] = scaleMin(spanScales[0], d[0]);
            const [alphaHi, betaHi] = scaleMin(spanScales[1], d[1]);
            const alpha = [alphaLo, alphaLo, alphaHi, alphaHi] as const;
            const beta = [betaLo, betaLo, betaHi, betaHi] as const;
            // dot[i] is row g + 8·(i >> 1), column 2t + (i & 1); sums[i & 1] that column's Σ x.
            const columns = (h: 0 | 1, xw: Four<Local<'u32'>>) => {
              const xPairs = [pairX(b, xw[0], xw[1]), pairX(b, xw[2], xw[3])] as const;
              const dot = mmaPair(a, xPairs);
              const [s0, s1] = mmaPair([four(() => ones), four(() => ones)], xPairs);
              const sums = [s0, s1, s0, s1] as const;
              const updated = four((i) => alpha[i].fma(dot[i], beta[i].fma(sums[i], acc[h][i])));
              assignEach(b, acc[h], updated);
            };
            columns(0, now[high]);
            b.if(two, () => columns(1, loadWords(b, 'x', xHi.add(spanAt.add(16 * high)))));
          }
        });
      });
    });
    storeWmmaTile(b, warp, t2, acc, firstRow);
  });
});
