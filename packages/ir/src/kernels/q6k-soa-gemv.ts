import type { Local as Var } from '../expression-methods.js';
import { add, and, div, lt, min, mul, shr, sub, u32 } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { repack, unpack } from '../quant/repack.js';
import { packWords } from '../quant/words.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { SECTOR_WORDS } from './gemv-interface.js';
import {
  rowsGemvKernel,
  X_QUANT_GROUP_WORDS,
  type RowStep,
  type RowsBuilder,
} from './gemv-rows.js';
import { vectorNames } from './locals.js';
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
/** Words a block of each repacked array (quant/LAYOUTS.md): ql 128 bytes, qh 64, scales 16. */
const [QL_WORDS, QH_WORDS, SCALE_WORDS] = [32, 16, 4];
/** Lanes a block: a lane takes 64 of its values, so a step is 8 blocks of the row. */
const BLOCK_LANES = 4;
const STEP_BLOCKS = 32 / BLOCK_LANES;
/** x_quant words of a block (8 groups of 16). */
const X_BLOCK_WORDS = 8 * X_QUANT_GROUP_WORDS;

// Bandwidth plan (layout in quant/LAYOUTS.md): a warp streams two rows, 8 blocks (1680 bytes) of
// each a step. Lane l takes block l / 4, half n = (l / 2) % 2 and l0 = 16·(l % 2) of it: 16-byte
// loads of ql[64n + l0 ..], ql[64n + 32 + l0 ..] and qh[32n + l0 ..] (values 128n + 32j + l0 + 0..15,
// j = 0..3: every ql and qh byte once, each warp load whole sectors), 8 bytes of scales (its 4
// sub-blocks' int8 scales sc[8n + 2j + l0 / 16]) and the word holding its block's f16 d. All of a
// step's loads, then its 13 x loads from scratch (L1), are issued before any is used. Lane values
// of j are half of x group 8·block + 4n + j. Each value byte q = low + 16·high (0..63, two
// instructions a word from ql and qh parts masked once a word) meets x_high and x_low in 8 dot4I8
// a sub-block; Σ (q − 32)·x is then its x scale times that exact i32 sum, less 32 times the f32
// sum of its 16 x values (two sums of 8, shared by both rows), times the sub-block's scale (a
// dot4I8 picks the int8 out of its word) and d. Integer instructions are the issue-bound pipe
// (half rate), so the f32 side takes what it can. The last step's lanes past the row load its
// last block again and add nothing; a second row past n_out loads nothing.

/** Per lane and warp, what every step shares: its first words, strides counted in blocks. */
interface Lanes {
  readonly blocks: Var<'u32'>;
  readonly laneBlock: Var<'u32'>;
  /** x_quant word, x_factors scale and sum indices of block 0's values of the lane. */
  readonly x: XPointers;
  /** Row 0's ql, qh, scale and d words of block 0, and the words from row 0 to row 1. */
  readonly w: { readonly ql: Var<'u32'>; readonly qh: Var<'u32'>; readonly scales: Var<'u32'>; readonly d: Var<'u32'> }; // prettier-ignore
  readonly rowDelta: Var<'u32'>;
  readonly scalePicks: ScalePicks['scalePicks'];
  /** Where the block's d sits in its word (odd blocks: the high half). */
  readonly dShift: Var<'u32'>;
}

function row({ b, rows, lane, sumBase }: RowStep): void {
  const nIn = b.param('n_in');
  const { blocks, quarter, laneBlock } = b.let({
    blocks: div(nIn, BLOCK_VALUES),
    quarter: and(lane, BLOCK_LANES - 1),
    laneBlock: shr(lane, 2),
  });
  const { half, side } = b.let({ half: shr(quarter, 1), side: and(quarter, 1) });
  // Rows of 32·⌈210·nb / 32⌉ bytes, in words; ql, qh, scales and d arrays one after another.
  const { rowWords, sideWords, sideBytes } = b.let({
    rowWords: mul(div(add(mul(blocks, BLOCK_BYTES), 31), 32), 8),
    sideWords: mul(side, 4),
    sideBytes: mul(side, 8),
  });
  const [first, second] = rows.map(({ row: index }, r) => b.let(`row_start${r}`, mul(index, rowWords))) as [Var<'u32'>, Var<'u32'>]; // prettier-ignore
  const lanes: Lanes = {
    blocks,
    laneBlock,
    x: laneXPointers(b, { half, side, sideWords, sumBase }),
    w: {
      ql: b.let('lane_ql', add(first, add(mul(half, 16), sideWords))),
      qh: b.let('lane_qh', add(first, add(mul(blocks, QL_WORDS), add(mul(half, 8), sideWords)))),
      scales: b.let('lane_scales', add(first, add(mul(blocks, QL_WORDS + QH_WORDS), mul(half, 2)))),
      d: b.let('lane_d', add(first, mul(blocks, QL_WORDS + QH_WORDS + SCALE_WORDS))),
    },
    rowDelta: b.let('row_delta', sub(second, first)),
    scalePicks: scalePicksOf(b, sideBytes),
    dShift: b.let('d_shift', mul(and(laneBlock, 1), 16)),
  };
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0]!.live, (live) => rowSteps(live, rows, lanes));
}

/**
 * The rows' steps, one loop: each step's words from its block, which in the last step's lanes
 * past the row is the row's last block (one request with its lane group's; they add nothing).
 * One copy of the step keeps the WGSL small.
 */
function rowSteps(b: RowsBuilder, rows: RowStep['rows'], lanes: Lanes): void {
  const { blocks, x, w, rowDelta } = lanes;
  const { block, lastBlock, steps } = b.let({
    block: lanes.laneBlock,
    lastBlock: sub(blocks, 1),
    steps: div(add(blocks, STEP_BLOCKS - 1), STEP_BLOCKS),
  });
  // Row 1's words live across steps: a step past n_out loads none (and adds nothing).
  const kept = loadRow(b, '1');
  // Each step's words from its block clamped to the row: as many instructions as carrying each
  // pointer and selecting it in the last step, in fewer registers.
  b.for('step', { start: 0, end: steps }, (s) => {
    const { inRow, at } = s.let({ inRow: lt(block, blocks), at: min(block, lastBlock) });
    const { at32 } = s.let({ at32: mul(at, 32) });
    const pointers = s.let({
      quant: add(mul(at, X_BLOCK_WORDS), x.quant),
      scale: add(mul(at, 8), x.scale),
      sum: add(at32, x.sum),
      ql: add(at32, w.ql),
      qh: add(mul(at, QH_WORDS), w.qh),
      scales: add(mul(at, SCALE_WORDS), w.scales),
      d: add(shr(at, 1), w.d),
    });
    step(s, { pointers, rowDelta, rows, lanes, inRow, kept });
    s.assign(block, add(block, STEP_BLOCKS));
  });
}

/** Declares a row's words of a step: loaded from W at `at`, or 0 without it. */
function loadRow(b: RowsBuilder, tag: string, at?: RowPointers): RowWords {
  const vector = (array: 'ql' | 'qh', words: number, names: readonly string[]) =>
    at === undefined
      ? names.map((name) => b.let(name, 0, 'u32'))
      : b.loadVector('w', words === 0 ? at[array] : add(at[array], words), names as [string, string, string, string]); // prettier-ignore
  return {
    low: [0, 8].map((words) => vector('ql', words, vectorNames(`ql${tag}_${words}_`))),
    high: vector('qh', 0, vectorNames(`qh${tag}_`)),
    scales:
      at === undefined
        ? [0, 1].map((i) => b.let(`scales${tag}_${i}`, 0, 'u32'))
        : b.loadVector('w', at.scales, [`scales${tag}_0`, `scales${tag}_1`]),
    d: b.let(`d_word${tag}`, at === undefined ? u32(0) : b.load('w', at.d)),
  };
}

/** Row 0's ql, qh, scale and d words of a step (row 1's lie rowDelta words on). */
interface RowPointers {
  readonly ql: Var<'u32'>;
  readonly qh: Var<'u32'>;
  readonly scales: Var<'u32'>;
  readonly d: Var<'u32'>;
}

/**
 * A step's loads, all issued before any is used, then each row's values into its total. Row 0 is
 * live (the caller checks); row 1 past n_out loads nothing, or the last row's requests would
 * repeat.
 */
function step(
  s: RowsBuilder,
  {
    pointers,
    rowDelta,
    rows,
    lanes,
    inRow,
    kept,
  }: {
    readonly pointers: RowPointers & { readonly quant: Var<'u32'>; readonly scale: Var<'u32'>; readonly sum: Var<'u32'> }; // prettier-ignore
    readonly rowDelta: Var<'u32'>;
    readonly rows: RowStep['rows'];
    readonly lanes: Lanes;
    readonly inRow: Var<'bool'>;
    readonly kept: RowWords;
  },
): void {
  const first = loadRow(s, '0', pointers);
  const { words, scales, sums } = loadX(s, pointers);
  // Row 1's copies wait for its words: after every load of the step is issued.
  s.if(rows[1]!.live, (live) => {
    const at = {
      ql: live.let('ql_second', add(pointers.ql, rowDelta)),
      qh: live.let('qh_second', add(pointers.qh, rowDelta)),
      scales: live.let('scales_second', add(pointers.scales, rowDelta)),
      d: live.let('d_second', add(pointers.d, rowDelta)),
    };
    const loaded = loadRow(live, '1_loaded', at);
    const pairs = [
      ...kept.low.flatMap((words, k) =>
        words.map((word, i) => [word, loaded.low[k]![i]!] as const),
      ),
      ...kept.high.map((word, i) => [word, loaded.high[i]!] as const),
      ...kept.scales.map((word, i) => [word, loaded.scales[i]!] as const),
      [kept.d, loaded.d] as const,
    ];
    for (const [into, value] of pairs) live.assign(into, value);
  });
  const w = [first, kept];
  const offsets = xOffsets(s, sums);
  rows.forEach(({ total, live }, r) => {
    const xWords = { words, scales, offsets };
    s.if(and(live, inRow), (inside) => blockValues(inside, `${r}`, w[r]!, xWords, lanes, total));
  });
}

/**
 * Catalog kernel `q6k-soa-gemv`: q6k-gemv's product on rows repacked by `repack` (so every load is
 * aligned; `weights.fromNative` converts GGUF rows); `n_in` must be a multiple of 256.
 */
export const q6kSoaGemv = rowsGemvKernel(
  { id: 'q6k-soa-gemv', semanticVersion: 3, type: 'q6_K', row },
  'of Q6_K blocks repacked structure-of-arrays',
  {
    offsetHeadroom: 4 * SECTOR_WORDS,
    // Rows of 32·⌈210·nb/32⌉ bytes (LAYOUTS.md); plain arithmetic, safe on bad shapes.
    layoutBytes: (nOut, nIn) =>
      nOut * 32 * Math.ceil((BLOCK_BYTES * Math.floor(nIn / BLOCK_VALUES)) / 32),
    toNative: (...rows) => unpack('q6_K', ...rows),
    fromNative: (...rows) => repack('q6_K', ...rows),
    // Random native blocks (see q6k-gemv), repacked.
    generateWeights: (nOut, nIn, ...rest) =>
      packWords(repack('q6_K', randomQ6kBlocks(nOut, nIn, ...rest), nOut, nIn)),
  },
);
