import { type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import {
  add,
  and,
  div,
  funnelShiftRight,
  lt,
  min,
  mul,
  ne,
  select,
  shl,
  shr,
  sub,
} from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { SECTOR_WORDS } from './gemv-interface.js';
import {
  rowsGemvKernel,
  X_QUANT_GROUP_WORDS,
  type RowStep,
  type RowsBuilder,
} from './gemv-rows.js';
import {
  blockValues,
  laneXPointers,
  loadX,
  scalePicksOf,
  xOffsets,
  type RowWords,
  type ScalePicks,
  type XPointers,
} from './q6k-values.js';

const { blockSize: BLOCK_VALUES, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Lanes a block: a lane takes 64 of its values, so a step is 8 blocks of the row. */
const BLOCK_LANES = 4;
const STEP_BLOCKS = 32 / BLOCK_LANES;
/** x_quant words of a block (8 groups of 16). */
const X_BLOCK_WORDS = 8 * X_QUANT_GROUP_WORDS;
/** Words of a block from its first word: ql 0-31, qh 32-47, scales 48-51, d the low half of 52. */
const [QH_WORD, SCALES_WORD, D_WORD] = [32, 48, 52];

// Bandwidth plan: q6k-soa-gemv's, on GGUF's own 210-byte blocks. A warp streams two rows, 8 blocks
// (1680 bytes) of each a step; lane l takes block l / 4, half n = (l / 2) % 2 and l0 = 16·(l % 2)
// of it, the same values as in the repacked layout: ql[64n + l0 ..], ql[64n + 32 + l0 ..],
// qh[32n + l0 ..] (16 bytes each), scales sc[8n ..] (8 bytes) and d. A block starts 0 or 2 bytes
// into a word (210 = 4·52 + 2) and at an even or odd word, so each 16-byte piece comes as the 3
// aligned 8-byte pairs holding it, realigned by a word select and one funnel shift a word (the
// same for all of a block's pieces); every word a warp asks for lies in the blocks it streams, so
// DRAM reads each sector once. All of a step's loads of both rows, then its x loads from scratch
// (L1), are issued before any is used. The last step's lanes past the row load its last block
// again and add nothing.

/**
 * Issues a row's W loads of a step. A block starts at an even or odd word (`odd`), and every piece
 * at an even word offset in it, so a ql or qh piece's 5 words (from the one holding its first
 * byte) lie in the 3 aligned 8-byte pairs from the even word at or below it; its scales are 3 word
 * loads, and d one. Returns the block's shift and, for a builder inside the row's guard, the pieces
 * realigned: a word select (odd blocks skip the pair's first) and one funnel shift a word.
 */
function loadRow(s: RowsBuilder, tag: string, blockByte: Var<'u32'>, lanes: Lanes) {
  const word = s.let(`block_word${tag}`, shr(blockByte, 2));
  const shift = s.let(`block_shift${tag}`, shl(and(blockByte, 2), 3));
  const odd = s.let(`block_odd${tag}`, ne(and(word, 1), 0));
  const even = s.let(`block_even${tag}`, and(word, 0xfffffffe));
  const realigned = (name: string, raw: readonly Var<'u32'>[], words: number) => (at: RowsBuilder) =>
    raw.slice(0, words).map((low, i) => at.let(`${name}${tag}_${i}`, funnelShiftRight(low, raw[i + 1]!, shift))); // prettier-ignore
  const piece = (name: string, offset: Expr<'u32'>) => {
    const first = s.let(`${name}${tag}_at`, add(even, offset));
    const pairs: Var<'u32'>[] = [0, 2, 4].flatMap(
      (k) =>
      s.loadVector('w', k === 0 ? first : add(first, k), [`${name}${tag}_pair${k}`, `${name}${tag}_pair${k + 1}`]), // prettier-ignore
    );
    // Realigned where used, after every load of the step is issued.
    return (at: RowsBuilder) => {
      const raw = Array.from({ length: 5 }, (_, i) =>
        at.let(`${name}${tag}_raw${i}`, select(odd, pairs[i + 1]!, pairs[i]!)),
      );
      return realigned(name, raw, 4)(at);
    };
  };
  const scaleFirst = s.let(`sc${tag}_at`, add(word, lanes.scalesWord));
  const scaleRaw = [0, 1, 2].map((i) =>
    s.let(`sc${tag}_raw${i}`, s.load('w', i === 0 ? scaleFirst : add(scaleFirst, i))),
  );
  const pieces = {
    low: [piece('qla', lanes.qlWord), piece('qlb', add(lanes.qlWord, 8))],
    high: piece('qh', lanes.qhWord),
    scales: realigned('sc', scaleRaw, 2),
  };
  const d = s.let(`d_word${tag}`, s.load('w', add(word, D_WORD)));
  return {
    shift,
    words: (at: RowsBuilder): RowWords => ({
      low: pieces.low.map((realigned) => realigned(at)),
      high: pieces.high(at),
      scales: pieces.scales(at),
      d,
    }),
  };
}

/** Per lane and warp, what every step shares. */
interface Lanes {
  readonly blocks: Var<'u32'>;
  readonly laneBlock: Var<'u32'>;
  /** Word offsets in a block of the lane's ql (j even), qh and scale pieces. */
  readonly qlWord: Var<'u32'>;
  readonly qhWord: Var<'u32'>;
  readonly scalesWord: Var<'u32'>;
  /** x_quant word, x_factors scale and sum indices of block 0's values of the lane. */
  readonly x: XPointers;
  readonly scalePicks: ScalePicks['scalePicks'];
}

function row({ b, rows, lane, sumBase }: RowStep): void {
  const nIn = b.param('n_in');
  const { blocks, quarter, laneBlock } = b.let({
    blocks: div(nIn, BLOCK_VALUES),
    quarter: and(lane, BLOCK_LANES - 1),
    laneBlock: shr(lane, 2),
  });
  const { half, side } = b.let({ half: shr(quarter, 1), side: and(quarter, 1) });
  const { rowBytes, sideWords, sideBytes } = b.let({
    rowBytes: mul(blocks, BLOCK_BYTES),
    sideWords: mul(side, 4),
    sideBytes: mul(side, 8),
  });
  const rowStarts = rows.map(({ row: index }, r) => b.let(`row_start${r}`, mul(index, rowBytes)));
  const lanes: Lanes = {
    blocks,
    laneBlock,
    qlWord: b.let('lane_ql', add(mul(half, 16), sideWords)),
    qhWord: b.let('lane_qh', add(QH_WORD, add(mul(half, 8), sideWords))),
    scalesWord: b.let('lane_scales', add(SCALES_WORD, mul(half, 2))),
    x: laneXPointers(b, { half, side, sideWords, sumBase }),
    scalePicks: scalePicksOf(b, sideBytes),
  };
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0]!.live, (live) => rowSteps(live, rows, rowStarts, lanes));
}

/**
 * The rows' steps, one loop: each step's words from its block, which in the last step's lanes
 * past the row is the row's last block (one request with its lane group's; they add nothing). A
 * second row past n_out reads the last row (its index is clamped), the same sectors as the first
 * row's from L1, and adds nothing.
 */
function rowSteps(
  b: RowsBuilder,
  rows: RowStep['rows'],
  rowStarts: readonly Var<'u32'>[],
  lanes: Lanes,
): void {
  const { blocks, x } = lanes;
  const { block, lastBlock, steps } = b.let({
    block: lanes.laneBlock,
    lastBlock: sub(blocks, 1),
    steps: div(add(blocks, STEP_BLOCKS - 1), STEP_BLOCKS),
  });
  b.for('step', { start: 0, end: steps }, (s) => {
    const { inRow, at } = s.let({ inRow: lt(block, blocks), at: min(block, lastBlock) });
    const { atBytes } = s.let({ atBytes: mul(at, BLOCK_BYTES) });
    const loaded = rowStarts.map((start, r) =>
      loadRow(s, `${r}`, s.let(`block_byte${r}`, add(start, atBytes)), lanes),
    );
    const { words, scales, sums } = loadX(
      s,
      s.let({
        quant: add(mul(at, X_BLOCK_WORDS), x.quant),
        scale: add(mul(at, 8), x.scale),
        sum: add(mul(at, 32), x.sum),
      }),
    );
    const offsets = xOffsets(s, sums);
    rows.forEach(({ total, live }, r) => {
      const { shift, words: rowWords } = loaded[r]!;
      s.if(and(live, inRow), (inside) => {
        const xWords = { words, scales, offsets };
        const picks = { scalePicks: lanes.scalePicks, dShift: shift };
        blockValues(inside, `${r}`, rowWords(inside), xWords, picks, total);
      });
    });
    s.assign(block, add(block, STEP_BLOCKS));
  });
}

/** Catalog kernel `q6k-gemv` (`n_in` a multiple of 256). */
export const q6kGemv = rowsGemvKernel(
  { id: 'q6k-gemv', semanticVersion: 3, type: 'q6_K', row, capRegisters: false },
  'in native GGUF Q6_K blocks',
  {
    offsetHeadroom: 4 * SECTOR_WORDS,
    // Random blocks: quantizing 8M values is slow; random bytes reach every value and scale.
    generateWeights: (...shape) => packWords(randomQ6kBlocks(...shape)),
  },
);
