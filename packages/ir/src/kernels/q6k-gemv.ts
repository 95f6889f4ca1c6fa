import type { Local, Value } from '../expression-methods.js';
import { add } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { blockLanes, rowsGemvKernel, X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import type { RowStep, RowsBuilder } from './gemv-rows.js';
import { four } from './locals.js';
import { blockValues, clampedSteps, laneXPointers, loadX, scalePicksOf } from './q6k-values.js';
import type { RowWords } from './q6k-values.js';
import { itemAt, mapPair } from './tuples.js';

const { blockSize: BLOCK_VALUES, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
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

/** Word offsets in a block of the lane's ql (j even), qh and scale pieces. */
type Lanes = Record<'qlWord' | 'qhWord' | 'scalesWord', Local<'u32'>>;

/**
 * Issues a row's W loads of a step. A block starts at an even or odd word (`odd`), and every piece
 * at an even word offset in it, so a ql or qh piece's 5 words (from the one holding its first
 * byte) lie in the 3 aligned 8-byte pairs from the even word at or below it; its scales are 3 word
 * loads, and d one. Returns the block's shift and, for use inside the row's guard, the pieces
 * realigned: a word select (odd blocks skip the pair's first) and one funnel shift a word.
 */
function loadRow(b: RowsBuilder, blockByte: Local<'u32'>, lanes: Lanes) {
  const { blockWord } = b.let({ blockWord: blockByte.shr(2) });
  const { blockShift, blockOdd, blockEven } = b.let({
    blockShift: blockByte.and(2).shl(3),
    blockOdd: blockWord.and(1).ne(0),
    blockEven: blockWord.and(0xfffffffe),
  });
  const realign = (raw: readonly Local<'u32'>[]) => (i: number) =>
    b.let('aligned', itemAt(raw, i).funnelShiftRight(itemAt(raw, i + 1), blockShift));
  const piece = (offset: Value<'u32'>) => {
    const first = b.let('piece_at', blockEven.add(offset));
    const pairs = [0, 2, 4].flatMap((k) => b.loadVector('w', k === 0 ? first : first.add(k), ['w_pair', 'w_pair'])); // prettier-ignore
    // Realigned where used, after every load of the step is issued.
    return () => {
      const raw = Array.from({ length: 5 }, (_, i) => b.let('raw', blockOdd.select(itemAt(pairs, i + 1), itemAt(pairs, i)))); // prettier-ignore
      return four(realign(raw));
    };
  };
  const { scFirst } = b.let({ scFirst: blockWord.add(lanes.scalesWord) });
  const scRaw = [0, 1, 2].map((i) => b.let('sc_raw', b.memory.w.at(i === 0 ? scFirst : scFirst.add(i)))); // prettier-ignore
  const low = [piece(lanes.qlWord), piece(lanes.qlWord.add(8))] as const;
  const high = piece(lanes.qhWord);
  const d = b.let('d_word', b.memory.w.at(blockWord.add(D_WORD)));
  return {
    shift: blockShift,
    words: (): RowWords => ({ low: [low[0](), low[1]()], high: high(), scales: [realign(scRaw)(0), realign(scRaw)(1)], d }), // prettier-ignore
  };
}

function row(rowStep: RowStep): void {
  const { b, rows, sumBase } = rowStep;
  const { blocks, laneBlock, half, side } = blockLanes(rowStep, BLOCK_VALUES);
  const { rowBytes, sideWords, sideBytes } = b.let({
    rowBytes: blocks.mul(BLOCK_BYTES),
    sideWords: side.mul(4),
    sideBytes: side.mul(8),
  });
  const rowStarts = mapPair(rows, (r) => b.let('row_start', r.row.mul(rowBytes)));
  const lanes = b.let({
    qlWord: half.mul(16).add(sideWords),
    qhWord: add(QH_WORD, half.mul(8).add(sideWords)),
    scalesWord: add(SCALES_WORD, half.mul(2)),
  });
  const laneX = laneXPointers(b, { half, side, sideWords, sumBase });
  const scalePicks = scalePicksOf(b, sideBytes);
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0].live, () => {
    // One loop: each step's words from its block, which in the last step's lanes past the row is
    // the row's last block (one request with its lane group's; they add nothing). A second row
    // past n_out reads the last row (its index is clamped), the same sectors as the first row's
    // from L1, and adds nothing.
    clampedSteps(b, { blocks, laneBlock }, () => (inRow, at) => {
      const { atBytes } = b.let({ atBytes: at.mul(BLOCK_BYTES) });
      const loaded = mapPair(rowStarts, (start) => loadRow(b, b.let('block_byte', start.add(atBytes)), lanes)); // prettier-ignore
      const xAt = b.let({
        quant: at.mul(8 * X_QUANT_GROUP_WORDS).add(laneX.quant),
        scale: at.mul(8).add(laneX.scale),
        sum: at.mul(32).add(laneX.sum),
      });
      const { words, scales, offsets } = loadX(b, xAt);
      const x = { words, scales, offsets: offsets() };
      mapPair(rows, ({ total, live }, r) => {
        const { shift, words: rowWords } = loaded[r];
        b.if(live.and(inRow), () => blockValues(b, rowWords(), x, { scalePicks, dShift: shift }, total)); // prettier-ignore
      });
    });
  });
}

/** Catalog kernel `q6k-gemv` (`n_in` a multiple of 256). */
export const q6kGemv = rowsGemvKernel(
  { id: 'q6k-gemv', semanticVersion: 3, type: 'q6_K', row, capRegisters: false },
  'in native GGUF Q6_K blocks',
  {
    // Random blocks: quantizing 8M values is slow; random bytes reach every value and scale.
    generateWeights: (...shape) => packWords(randomQ6kBlocks(...shape)),
  },
);
