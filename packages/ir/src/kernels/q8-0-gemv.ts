import { WARP_SIZE } from '../body.js';
import type { Local, Value } from '../expression-methods.js';
import { fma, i32 } from '../expressions.js';
import { QUANT_FORMATS, quantize } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { rowsGemvKernel, X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import type { RowStep } from './gemv-rows.js';
import { fillUniform } from './random.js';
import { hints, itemAt, mapPair } from './tuples.js';

// Bandwidth plan: a warp streams two rows, 32 blocks (1088 bytes) of each a step, one block a lane.
// A block is 34 bytes, so it starts 2·l bytes (mod 16) into the 16-byte vector holding it: lane l
// loads the three aligned vectors covering it (its window; 1088 is 68 vectors, so its offset in
// the window is the same every step) and shifts the window by whole words with selects, then by a
// half word with a funnel shift, to get d and 8 quant words. A load instruction touches 32 sectors
// (8 wavefronts), 24 a row-step against 8.5 for the bytes alone; 4-byte loads at a 34-byte lane
// stride would take 81. Its group's x (16 x_high, x_low words, 64 bytes: 4 vector loads) and scale
// serve both rows. All of a step's loads are issued before any is used, every index a pointer
// carried from step to step. The quants meet x in 16 dot4I8; the block adds d·s·(256·Σq·h + Σq·l).
// The last step's lanes past the row load its last block again and add nothing. The matrix's last
// vector may be partial (its byte count need not be a multiple of 16): a window reaching it reads
// its words from copies loaded once, never past the buffer.

/** Blocks a warp takes a step: one a lane, 1088 bytes, a whole number of 16-byte vectors. */
const STEP_BLOCKS = WARP_SIZE;
const { blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q8_0;
const STEP_WORDS = (STEP_BLOCKS * BLOCK_BYTES) / 4;

// A block is one 32-value x group, so the row's block count is n_in / 32, the scaffold's sumBase.
function row({ b, rows, lane, sumBase: blocks }: RowStep): void {
  const { words } = b.let({ words: b.param('n_out').mul(blocks).mul(BLOCK_BYTES).add(3).shr(2) });
  // The matrix's last whole vector (its first word), which up to 3 words follow.
  const { lastVector } = b.let({ lastVector: words.shr(2).shl(2).sub(4) });
  const { lastBlock } = b.let({ lastBlock: blocks.sub(1) });
  const vectorOf = (byte: Value<'u32'>) => byte.shr(4).shl(2);
  // Where a lane's block of each row lies in its window, the same every step: the window's next
  // and last-block first words, the whole words to shift by (1, 2) and whether d is its word's
  // high half (its quants then start on the next word).
  const phases = mapPair(rows, (r) => {
    const { rowByte } = b.let({ rowByte: r.row.mul(blocks).mul(BLOCK_BYTES) });
    const { firstByte } = b.let({ firstByte: rowByte.add(lane.mul(BLOCK_BYTES)) });
    const { offset } = b.let({ offset: firstByte.and(15) });
    return b.let({
      nextWindow: vectorOf(firstByte),
      lastWindow: vectorOf(rowByte.add(lastBlock.mul(BLOCK_BYTES))),
      byOne: offset.and(4).ne(0),
      byTwo: offset.and(8).ne(0),
      dHigh: offset.and(2).ne(0),
      dShift: offset.and(2).mul(8),
    });
  });
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0].live, () => {
    // One loop: in the last step, lanes past the row's blocks read the last block (one request
    // with their lane's) and add nothing. One copy of the step keeps the WGSL small.
    const { block } = b.let({ block: b.laneId() });
    const { xNext, xLast } = b.let({
      xNext: block.mul(X_QUANT_GROUP_WORDS),
      xLast: lastBlock.mul(X_QUANT_GROUP_WORDS),
    });
    const { steps } = b.let({ steps: blocks.add(STEP_BLOCKS - 1).div(STEP_BLOCKS) });
    b.for('step', { start: 0, end: steps }, () => {
      const { inRow } = b.let({ inRow: block.lt(blocks) });
      const { xGroup, xWord } = b.let({
        xGroup: inRow.select(block, lastBlock),
        xWord: inRow.select(xNext, xLast),
      });
      const windows = mapPair(phases, (p) => b.let('window', inRow.select(p.nextWindow, p.lastWindow))); // prettier-ignore
      // The third vector of a window at the matrix's end is clamped to the last whole one (its
      // words then come from scalar loads).
      const thirds = mapPair(windows, (window) => b.let('third', window.add(8).min(lastVector)));
      // A lane's window: the three 16-byte vectors holding its block wherever it starts. Row 0 is
      // live; a later row past n_out reads the last row (its pointer is clamped), the same sectors
      // as row 0's from L1, and adds nothing.
      const w = mapPair(windows, (window, r) =>
        [window, window.add(4), thirds[r]].flatMap((at) => b.loadVector('w', at, hints('w_word'))),
      );
      // Its group's x (16 x_high, x_low words: 4 vector loads) and scale serve both rows.
      const xWords = (part: number) =>
        [0, 4].flatMap((k) => b.loadVector('x_quant', xWord.add(part + k), hints('x_word')));
      const [high, low] = [xWords(0), xWords(8)];
      const scale = b.let('x_scale', b.memory.x_factors.at(xGroup));
      mapPair(rows, ({ total, live }, r) => {
        b.if(live.and(inRow), () => {
          const tail = [8, 9, 10].map((i) => b.let('tail', itemAt(w[r], i)));
          // Only the matrix's last block can reach past its last whole vector.
          b.if(
            windows[r].add(8).gt(lastVector),
            () =>
            tail.forEach((word, i) => b.assign(word, b.memory.w.at(lastVector.add(4 + i).min(words.sub(1))))), // prettier-ignore
          );
          const window = w[r].map((word, i) => (i >= 8 && i <= 10 ? itemAt(tail, i - 8) : word));
          blockDot(b, { window, high, low, scale }, phases[r], total);
        });
      });
      for (const p of phases) b.assign(p.nextWindow, p.nextWindow.add(STEP_WORDS));
      b.assign(xNext, xNext.add(STEP_BLOCKS * X_QUANT_GROUP_WORDS));
      b.assign(block, block.add(STEP_BLOCKS));
    });
  });
}

type BlockWords = Record<'window' | 'high' | 'low', readonly Local<'u32'>[]> & { readonly scale: Local<'f32'> }; // prettier-ignore
type Phase = Record<'byOne' | 'byTwo' | 'dHigh', Local<'bool'>> & { readonly dShift: Local<'u32'> };
/** Adds one row's block (the lane's window of it) times its group of x into total. */
function blockDot(b: RowStep['b'], block: BlockWords, phase: Phase, total: Local<'f32'>): void {
  const [{ window, high, low, scale }, { byOne, byTwo, dHigh, dShift }] = [block, phase];
  // Word i of the block from the one holding d: window word i + 2·byTwo + byOne.
  const one = Array.from({ length: 11 }, (_, i) => b.let('one', byOne.select(itemAt(window, i + 1), itemAt(window, i)))); // prettier-ignore
  const shifted = Array.from({ length: 9 }, (_, i) => b.let('shifted', byTwo.select(itemAt(one, i + 2), itemAt(one, i)))); // prettier-ignore
  const d = b.let('d', itemAt(shifted, 0).shr(dShift).unpackHalf(0));
  let [sumHigh, sumLow]: [Value<'i32'>, Value<'i32'>] = [i32(0), i32(0)];
  for (let j = 0; j < 8; j++) {
    // Quants 4j..4j + 3: the next word when d is its word's high half, else straddling two.
    const aligned = itemAt(shifted, j + 1);
    const quant = b.let('quant', dHigh.select(aligned, itemAt(shifted, j).funnelShiftRight(aligned, 16))); // prettier-ignore
    sumHigh = b.let('sum_high', quant.dot4I8(itemAt(high, j), sumHigh));
    sumLow = b.let('sum_low', quant.dot4I8(itemAt(low, j), sumLow));
  }
  b.assign(total, fma(d.mul(scale), sumHigh.mul(256).add(sumLow).to('f32'), total));
}

/** Catalog kernel `q8_0-gemv` (`n_in` a multiple of 32). */
export const q8_0Gemv = rowsGemvKernel(
  { id: 'q8_0-gemv', semanticVersion: 3, type: 'q8_0', row, xSums: false },
  'in native GGUF Q8_0 blocks',
  {
    generateWeights: (nOut, nIn, rng, magnitude) => {
      const values = fillUniform(new Float32Array(nOut * nIn), rng, magnitude);
      return packWords(quantize('q8_0', values, nOut, nIn));
    },
  },
);
