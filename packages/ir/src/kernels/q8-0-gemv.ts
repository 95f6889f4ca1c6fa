import { WARP_SIZE, type VarExpr as Var } from '../body.js';
import { add, and, bitcast, convert, div, eq, f32, fma, ge } from '../expressions.js';
import { le, lt, min, mul, ne, select, shl, shr, sub, u32, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS, quantize } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { fillUniform } from './random.js';
import { SECTOR_MASK, SECTOR_WORDS, gemvKernel } from './gemv-interface.js';
import type { GemvBuilder, GemvRows } from './gemv-interface.js';
import { ROWS, assignEach, forRows, perRow, vectorNames } from './locals.js';

const { blockSize: BLOCK, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q8_0;

// Bandwidth plan: two rows a warp, in windows (see GEMV_INTERFACE). Blocks start at even byte
// offsets and d is 2 bytes, so d never straddles words, and a word crossing into a new block holds
// only that block's d: each word's quants belong to one block, whose d lies at most 8 words back,
// in this window or the previous one, and comes by shuffle of the two windows' words.

function setup(b: GemvBuilder, blocks: Var<'u32'>) {
  const { rowBytes, lowBit } = b.let({
    rowBytes: mul(blocks, BLOCK_BYTES),
    lowBit: min(and(blocks, sub(0, blocks)), 16),
  });
  // A row starts at most 32 - gcd(row_bytes, 32) = 32 - 2·low_bit bytes into its first sector.
  const spanWords = div(add(add(rowBytes, sub(32, mul(2, lowBit))), 3), 4);
  const { windows } = b.let({ windows: div(add(spanWords, WARP_SIZE - 1), WARP_SIZE) });
  // Rows 32 / gcd(row_bytes, 32) = 16 / low_bit apart start alike in their sectors (a clamped dead
  // row b may not; it loads nothing).
  return { rowBytes, windows, delta: div(16, lowBit) };
}

function row({ rows, live, clamped, lane }: GemvRows<'pair'>, { rowBytes, windows }: Setup) {
  const { rowStart } = perRow(rows, { rowStart: (k) => mul(clamped[k], rowBytes) });
  const { firstWord } = perRow(rows, { firstWord: (k) => div(rowStart[k], 4) });
  const { sectorBase, total, previous } = perRow(rows, {
    sectorBase: (k) => and(firstWord[k], SECTOR_MASK),
    total: () => f32(0),
    previous: () => u32(0),
  });
  rows.for('window', { start: 0, end: windows }, (win, window) => {
    const { windowBase: base } = win.let({ windowBase: add(sectorBase.a, mul(window, WARP_SIZE)) });
    const { wordIndex } = win.let({ wordIndex: add(base, lane) });
    // The word's byte offset in the row (huge before the row's start).
    const { offset } = win.let({ offset: sub(mul(wordIndex, 4), rowStart.a) });
    // Words holding the row's first to last byte.
    const inRow = lt(add(offset, 3), add(rowBytes, 3));
    const { block } = win.let({ block: div(offset, BLOCK_BYTES) });
    const { blockStart } = win.let({ blockStart: mul(block, BLOCK_BYTES) });
    const { inBlock } = win.let({ inBlock: sub(offset, blockStart) });
    const { scaleWord } = win.let({ scaleWord: div(add(rowStart.a, blockStart), 4) });
    // The sign of scale_word - base picks this window's word or the previous one's.
    const { source } = win.let({ source: and(sub(scaleWord, base), WARP_SIZE - 1) });
    const words = forRows((k) => {
      const word = win.let(`word_${k}`, u32(0));
      const at = add(add(sectorBase[k], mul(window, WARP_SIZE)), lane);
      win.if(and(live[k], inRow), (load) => load.assign(word, load.load('w', at)));
      const current = win.shuffle('idx', `scale_current_${k}`, word, source);
      const earlier = win.shuffle('idx', `scale_earlier_${k}`, previous[k], source);
      win.assign(previous[k], word);
      return { word, scale: select(lt(scaleWord, base), earlier, current) };
    });
    // The word's quants pair with 2 or 4 consecutive x from x_start (d bytes with none): the x chunk
    // holding x_start, and for a run 8 bytes into it the next lane's (lane 31 loads it itself).
    const { hasQuants, hasLow, xIndex } = win.let({
      hasQuants: and(live.a, lt(offset, rowBytes)),
      hasLow: ge(inBlock, 2),
      xIndex: add(mul(block, BLOCK), inBlock),
    });
    const { xStart } = win.let({ xStart: select(hasLow, sub(xIndex, 2), xIndex) });
    const { xChunk, xOdd } = win.let({
      xChunk: and(xStart, 0x100000000 - 4),
      xOdd: ne(and(xStart, 2), 0),
    });
    const { xc0, xc1, xc2, xc3 } = win.let({ xc0: f32(0), xc1: f32(0), xc2: f32(0), xc3: f32(0) });
    win.if(hasQuants, (load) =>
      assignEach(load, [xc0, xc1, xc2, xc3], load.loadVector('x', xChunk, vectorNames('xl'))),
    );
    const tail = (x: Var<'f32'>, k: number) =>
      win.let(`x_tail${k}`, win.shuffle('down', `x_next${k}`, x, 1));
    const [n0, n1] = [tail(xc0, 0), tail(xc1, 1)];
    const spills = and(xOdd, le(inBlock, BLOCK_BYTES - 4));
    win.if(and(and(hasQuants, spills), eq(lane, WARP_SIZE - 1)), (load) =>
      assignEach(load, [n0, n1], load.loadVector('x', add(xChunk, 4), vectorNames('xn'))),
    );
    win.if(hasQuants, (quants) => {
      // The run x_start, x_start + 1, ...: chunk elements 0-3, or 2-3 and the next chunk's 0-1.
      const pick = (even: Var<'f32'>, shifted: Var<'f32'>) => select(xOdd, shifted, even);
      const run = [pick(xc0, xc2), pick(xc1, xc3), pick(xc2, n0), pick(xc3, n1)] as const;
      const { xHigh0, xHigh1 } = quants.let({
        xHigh0: select(hasLow, run[2], run[0]),
        xHigh1: select(hasLow, run[3], run[1]),
      });
      const scaleShift = mul(and(add(rowStart.a, blockStart), 2), 8);
      for (const k of ROWS) {
        const { word, scale: bits } = words[k];
        const scale = quants.let(`scale_${k}`, unpackHalf(shr(bits, scaleShift), 0));
        const sum = quants.let(`sum_${k}`, f32(0));
        // Byte j as int8: shifted to the top, then arithmetic-shifted back down.
        const quant = (j: number) =>
          convert('f32', shr(bitcast('i32', j === 3 ? word : shl(word, 24 - 8 * j)), 24));
        // Bytes 0-1 are quants unless they are this block's d, bytes 2-3 unless the next block's.
        quants.if(hasLow, (low) => low.assign(sum, fma(quant(1), run[1], mul(quant(0), run[0]))));
        quants.if(le(inBlock, BLOCK_BYTES - 4), (high) =>
          high.assign(sum, fma(quant(3), xHigh1, fma(quant(2), xHigh0, sum))),
        );
        quants.assign(total[k], fma(scale, sum, total[k]));
      }
    });
  });
  return total;
}
type Setup = ReturnType<typeof setup>;

/** Catalog kernel `q8_0-gemv` (`n_in` a multiple of 32). */
export const q8_0Gemv = gemvKernel(
  { id: 'q8_0-gemv', semanticVersion: 1, type: 'q8_0', rows: 'pair', setup, row },
  'in native GGUF Q8_0 blocks',
  {
    offsetHeadroom: 4 * (WARP_SIZE + SECTOR_WORDS), // one window
    generateWeights: (nOut, nIn, rng, magnitude) => {
      const values = fillUniform(new Float32Array(nOut * nIn), rng, magnitude);
      return packWords(quantize('q8_0', values, nOut, nIn));
    },
  },
);
