import type { Local } from '../expression-methods.js';
import { u32 } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { repack, unpack } from '../quant/repack.js';
import { packWords } from '../quant/words.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { blockLanes, rowsGemvKernel, X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import type { RowStep, RowsBuilder } from './gemv-rows.js';
import { four } from './locals.js';
import { blockValues, clampedSteps, laneXPointers, loadX, scalePicksOf } from './q6k-values.js';
import type { RowWords } from './q6k-values.js';
import { hints, itemAt, mapPair } from './tuples.js';

const { blockSize: BLOCK_VALUES, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Words a block of each repacked array (quant/LAYOUTS.md): ql 128 bytes, qh 64, scales 16. */
const [QL_WORDS, QH_WORDS, SCALE_WORDS] = [32, 16, 4];

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

/** Where a row's words of a step lie: its ql, qh, scale and d words. */
type RowPointers = Record<'ql' | 'qh' | 'scales' | 'd', Local<'u32'>>;

/** Declares a row's words of a step: loaded from W at `at`, or 0 without it. */
function loadRow(b: RowsBuilder, at?: RowPointers): RowWords {
  const zeros = () => four(() => b.let('kept', u32(0)));
  const vector = (words: Local<'u32'>) => b.loadVector('w', words, hints('w_word'));
  if (at === undefined)
    return { low: [zeros(), zeros()], high: zeros(), scales: [b.let('kept', u32(0)), b.let('kept', u32(0))], d: b.let('kept', u32(0)) }; // prettier-ignore
  return {
    low: [vector(at.ql), b.loadVector('w', at.ql.add(8), hints('w_word'))],
    high: vector(at.qh),
    scales: b.loadVector('w', at.scales, ['w_scales', 'w_scales']),
    d: b.let('d_word', b.memory.w.at(at.d)),
  };
}

function row(rowStep: RowStep): void {
  const { b, rows, sumBase } = rowStep;
  const { blocks, laneBlock, half, side } = blockLanes(rowStep, BLOCK_VALUES);
  // Rows of 32·⌈210·nb / 32⌉ bytes, in words; ql, qh, scales and d arrays one after another.
  const { rowWords, sideWords, sideBytes } = b.let({
    rowWords: blocks.mul(BLOCK_BYTES).add(31).div(32).mul(8),
    sideWords: side.mul(4),
    sideBytes: side.mul(8),
  });
  const [first, second] = mapPair(rows, (r) => b.let('row_start', r.row.mul(rowWords)));
  // Per lane, what every step shares: x pointers, then row 0's words of block 0 (row 1's lie
  // rowDelta words on), the scale picks and where d sits in its word (odd blocks: the high half).
  const x = laneXPointers(b, { half, side, sideWords, sumBase });
  const w = b.let({
    ql: first.add(half.mul(16).add(sideWords)),
    qh: first.add(blocks.mul(QL_WORDS).add(half.mul(8).add(sideWords))),
    scales: first.add(blocks.mul(QL_WORDS + QH_WORDS).add(half.mul(2))),
    d: first.add(blocks.mul(QL_WORDS + QH_WORDS + SCALE_WORDS)),
  });
  const { rowDelta } = b.let({ rowDelta: second.sub(first) });
  const scalePicks = scalePicksOf(b, sideBytes);
  const { dShift } = b.let({ dShift: laneBlock.and(1).mul(16) });
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0].live, () => {
    // One loop: each step's words from its block clamped to the row (the last step's lanes past
    // it add nothing): as many instructions as carrying each pointer and selecting it in the last
    // step, in fewer registers. One copy of the step keeps the WGSL small.
    clampedSteps(b, { blocks, laneBlock }, () => {
      // Row 1's words live across steps: a step past n_out loads none (and adds nothing).
      const kept = loadRow(b);
      return (inRow, at) => {
        const { at32 } = b.let({ at32: at.mul(32) });
        const pointers = b.let({
          quant: at.mul(8 * X_QUANT_GROUP_WORDS).add(x.quant),
          scale: at.mul(8).add(x.scale),
          sum: at32.add(x.sum),
          ql: at32.add(w.ql),
          qh: at.mul(QH_WORDS).add(w.qh),
          scales: at.mul(SCALE_WORDS).add(w.scales),
          d: at.shr(1).add(w.d),
        });
        // All of a step's loads before any use; row 1 past n_out loads nothing, or the last row's
        // requests would repeat, and its copies wait for its words.
        const words = [loadRow(b, pointers), kept] as const;
        const xWords = loadX(b, pointers);
        b.if(rows[1].live, () => {
          const second = b.let({
            ql: pointers.ql.add(rowDelta),
            qh: pointers.qh.add(rowDelta),
            scales: pointers.scales.add(rowDelta),
            d: pointers.d.add(rowDelta),
          });
          const loaded = loadRow(b, second);
          const copy = (into: readonly Local<'u32'>[], from: readonly Local<'u32'>[]) =>
            into.forEach((word, i) => b.assign(word, itemAt(from, i)));
          [0, 1].forEach((k) => copy(itemAt(kept.low, k), itemAt(loaded.low, k)));
          copy(kept.high, loaded.high);
          copy([...kept.scales, kept.d], [...loaded.scales, loaded.d]);
        });
        const xs = { ...xWords, offsets: xWords.offsets() };
        mapPair(rows, ({ total, live }, r) => {
          b.if(live.and(inRow), () => blockValues(b, words[r], xs, { scalePicks, dShift }, total));
        });
      };
    });
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
