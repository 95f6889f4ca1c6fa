import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, and, convert, div, f32, fma, ge, lt, mul, neg, or } from '../expressions.js';
import { select, shr, sub, u32, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { SECTOR_MASK, SECTOR_WORDS, gemvKernel } from './legacy-gemv-interface.js';
import type { GemvBuilder, GemvRows } from './legacy-gemv-interface.js';
import { ROWS, forRows, four, perRow, vectorNames, type PerRow } from './locals.js';
import { randomQ4kWords } from './gemv-catalog.js';

const { blockSize: BLOCK, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q4_K;
const BLOCK_WORDS = BLOCK_BYTES / 4;
/** Header words (0: d and dmin, 1-3: scales) before a block's 32 qs words. */
const HEADER_WORDS = 4;

// Bandwidth plan: two rows a warp, in windows (see GEMV_INTERFACE). Rows are whole 36-word blocks,
// so a row starts 0 or 4 words into a sector; rows `delta` apart (1 with an even block count, 2
// with an odd one) start alike. A qs word (in-block word 4-35) needs its block's header, up to 35
// words back: by shuffle of this window's words, else from `carry`, header word h of the latest
// block whose word h precedes the window, broadcast from the lane that loaded it; no header is
// loaded twice. A window (32 words) holds at most one block's word h, so `carry` is exactly the
// header a lane's block needs when its word h is before the window.

function setup(b: GemvBuilder, blocks: Var<'u32'>) {
  const { rowWords } = b.let({ rowWords: mul(blocks, BLOCK_WORDS) });
  // Odd block counts start every other row 4 words into a sector.
  const slack = mul(and(blocks, 1), HEADER_WORDS);
  const { windows } = b.let({ windows: div(add(add(rowWords, slack), WARP_SIZE - 1), WARP_SIZE) });
  return { rowWords, windows, delta: add(and(blocks, 1), 1) };
}

function row({ rows, live, clamped, lane }: GemvRows<'pair'>, { rowWords, windows }: Setup) {
  const { firstWord } = perRow(rows, { firstWord: (k) => mul(clamped[k], rowWords) });
  const { sectorBase, total } = perRow(rows, {
    sectorBase: (k) => and(firstWord[k], SECTOR_MASK),
    total: () => f32(0),
  });
  const carry = forRows((k) => four((h) => rows.let(`carry${h}_${k}`, u32(0))));
  rows.for('window', { start: 0, end: windows }, (win, window) => {
    const { windowBase: base } = win.let({ windowBase: add(sectorBase.a, mul(window, WARP_SIZE)) });
    // The word's offset in the row (huge before the row's start).
    const { offset } = win.let({ offset: sub(add(base, lane), firstWord.a) });
    const inRow = lt(offset, rowWords);
    const { block } = win.let({ block: div(offset, BLOCK_WORDS) });
    const { blockOffset } = win.let({ blockOffset: mul(block, BLOCK_WORDS) });
    // Absolute words keep the comparisons free of wrap-around. The last block touching the window
    // has its header words there become the carry.
    const last = div(sub(add(base, WARP_SIZE - 1), firstWord.a), BLOCK_WORDS);
    const { blockWord, lastBlockWord } = win.let({
      blockWord: add(firstWord.a, blockOffset),
      lastBlockWord: add(firstWord.a, mul(last, BLOCK_WORDS)),
    });
    const { word: words } = perRow(win, { word: () => u32(0) });
    const source = (at: Expr<'u32'>) => and(sub(at, base), WARP_SIZE - 1);
    const headers = forRows((k) => {
      const index = add(add(sectorBase[k], mul(window, WARP_SIZE)), lane);
      win.if(and(live[k], inRow), (load) => load.assign(words[k], load.load('w', index)));
      // The lane's block header: this window's word, or the carry when before it.
      const header = four((h) => {
        const at = add(blockWord, h);
        const fetched = win.shuffle('idx', `header${h}_${k}`, words[k], source(at));
        return win.let(`head${h}_${k}`, select(lt(at, base), carry[k][h], fetched));
      });
      carry[k].forEach((held, h) => {
        const at = add(lastBlockWord, h);
        const fetched = win.shuffle('idx', `next_carry${h}_${k}`, words[k], source(at));
        const inWindow = and(ge(at, base), lt(at, add(base, WARP_SIZE)));
        win.assign(held, select(inWindow, fetched, held));
      });
      return header;
    });
    const inBlock = sub(offset, blockOffset);
    win.if(and(live.a, and(inRow, ge(inBlock, HEADER_WORDS))), (quants) => {
      const { qsWord } = quants.let({ qsWord: sub(inBlock, HEADER_WORDS) });
      // Chunk c = qsWord / 8 of 32 qs bytes: low nibbles are sub-block 2c, high ones 2c+1.
      const { chunk } = quants.let({ chunk: shr(qsWord, 3) });
      // Sub-blocks 2c and 2c+1 use bytes 2(c%2) and 2(c%2)+1 of scale words 1-3.
      const shift = mul(and(chunk, 1), 16);
      const low = lt(chunk, 2);
      // x index of byte 0's low nibble: value 256 b + 64 c + l, l = 4 (qsWord % 8).
      const l = mul(and(qsWord, 7), 4);
      const { xIndex } = quants.let({ xIndex: add(add(mul(block, BLOCK), mul(chunk, 64)), l) });
      // Two 6-bit scales (mins) in bytes 0-1: plain for sub-blocks < 4, else nibbles n, tops t.
      const split = (n: Expr<'u32'>, t: Expr<'u32'>) => or(and(n, 0x0f0f), and(shr(t, 2), 0x3030));
      const factors = forRows((k) => {
        const [head0, head1, head2, head3] = headers[k];
        const s1 = quants.let(`s1_${k}`, shr(head1, shift));
        const s2 = quants.let(`s2_${k}`, shr(head2, shift));
        const s3 = quants.let(`s3_${k}`, shr(head3, shift));
        const scales = quants.let(`scales_${k}`, select(low, and(s1, 0x3f3f), split(s3, s1)));
        const mins = quants.let(`mins_${k}`, select(low, and(s2, 0x3f3f), split(shr(s3, 4), s2)));
        const d = quants.let(`d_${k}`, unpackHalf(head0, 0));
        return { scales, mins, d, dmin: quants.let(`dmin_${k}`, unpackHalf(head0, 1)) };
      });
      const acc: PerRow<Expr<'f32'>> = { ...total };
      for (const half of [0, 1] as const) {
        const xs = quants.loadVector('x', add(xIndex, 32 * half), vectorNames(`x${half}_`));
        const sumX = quants.let(`sum_x${half}`, f32(0));
        const sumQ = forRows((k) => quants.let(`sum_q${half}_${k}`, f32(0)));
        xs.forEach((x, byte) => {
          for (const k of ROWS) {
            const nibble = and(shr(words[k], 8 * byte + 4 * half), 15);
            quants.assign(sumQ[k], fma(convert('f32', nibble), x, sumQ[k]));
          }
          quants.assign(sumX, add(sumX, x));
        });
        for (const k of ROWS) {
          const { scales, mins, d, dmin } = factors[k];
          const sc = convert('f32', and(shr(scales, 8 * half), 63));
          const m = convert('f32', and(shr(mins, 8 * half), 63));
          acc[k] = fma(mul(d, sc), sumQ[k], fma(neg(mul(dmin, m)), sumX, acc[k]));
        }
      }
      for (const k of ROWS) quants.assign(total[k], acc[k]);
    });
  });
  return total;
}
type Setup = ReturnType<typeof setup>;

/** Catalog kernel `q4k-gemv` (`n_in` a multiple of 256). */
export const q4kGemv = gemvKernel(
  { id: 'q4k-gemv', semanticVersion: 1, type: 'q4_K', rows: 'pair', setup, row },
  'in native GGUF Q4_K blocks',
  { offsetHeadroom: 4 * (WARP_SIZE + SECTOR_WORDS), generateWeights: randomQ4kWords }, // one window
);
