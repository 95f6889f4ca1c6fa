import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { GEMV_PAIR_INTERFACE, gemvPairBody } from './gemv-interface.js';
import { gemvCatalogKernel } from './gemv-catalog.js';
import {
  add,
  and,
  bitcast,
  convert,
  div,
  eq,
  f32,
  fma,
  ge,
  le,
  lt,
  min,
  mul,
  ne,
  select,
  shl,
  shr,
  sub,
  u32,
  unpackHalf,
} from '../expressions.js';
import { quantize } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { fillUniform } from './random.js';
import type { CatalogKernel } from './catalog-kernel.js';

const BLOCK = 32;
const BLOCK_BYTES = 34;
/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
const SECTOR_WORDS = 8;
const ROWS = ['a', 'b'] as const;

// Bandwidth plan. A warp streams two rows at once, rows that start at the same place in their
// sectors (16 / gcd(blocks, 16) apart), so a lane sits at the same offset in both and every x
// value it loads serves both. Per row: lane l loads word (window base + l) of a window of 32
// consecutive words, so each warp load is 128 contiguous bytes and every weight word is loaded once
// (a row that starts mid-word shares that boundary word with the previous row). Windows start on a
// sector boundary so no load touches a sector it only partly uses, except at the row's two ends.
// Blocks start at even byte offsets and d is 2 bytes, so d never straddles words, and a word that
// crosses into a new block holds only that block's d: each word's quants belong to one block.
// The d of a word's block sits at most 8 words back, in this window or the previous one, and
// reaches the lane through a warp shuffle of the two windows' words, never a second global load.
// Warp ops need workgroup-uniform control flow in WGSL, so every warp runs the same window count
// (from the params) and a warp past the last row still shuffles and reduces; it only skips its loads.
const spec = defineKernel(
  {
    id: 'q8_0-gemv',
    semanticVersion: 1,
    entryPoint: 'q8_0_gemv',
    description:
      'y = dequant(W) x, W rows in native GGUF Q8_0 blocks (read as u32 words), x and y f32; one warp per two rows',
    ...GEMV_PAIR_INTERFACE,
  },
  (b) =>
    gemvPairBody(b, {
      setup: (b) => {
        const blocks = b.let('blocks', div(b.param('n_in'), u32(BLOCK)));
        const rowBytes = b.let('row_bytes', mul(blocks, u32(BLOCK_BYTES)));
        // Row starts are multiples of gcd(row_bytes, 32) = 2 * min(lowest set bit of blocks, 16), so a
        // row begins at most 32 - gcd bytes into its first sector: that bounds every row's window count.
        const lowBit = b.let('low_bit', min(and(blocks, sub(u32(0), blocks)), u32(16)));
        const slack = sub(u32(32), mul(u32(2), lowBit));
        const spanWords = div(add(add(rowBytes, slack), u32(3)), u32(4));
        const windows = b.let('windows', div(add(spanWords, u32(WARP_SIZE - 1)), u32(WARP_SIZE)));
        return { rowBytes, windows, lowBit };
      },
      // Rows 32 / gcd(row_bytes, 32) = 16 / min(lowest set bit of blocks, 16) apart start at the
      // same place in their sectors.
      delta: ({ lowBit }) => div(u32(16), lowBit),
      rows: ({ rows, row, live, lane, nOut }, { rowBytes, windows }) => {
        // Clamped so address arithmetic of a warp past the last row stays in range; a clamped
        // row b (past the end) may sit elsewhere in its sector, but it loads nothing.
        const rowStart = {
          a: rows.let('row_start_a', mul(min(row.a, sub(nOut, u32(1))), rowBytes)),
          b: rows.let('row_start_b', mul(min(row.b, sub(nOut, u32(1))), rowBytes)),
        };
        const firstWord = {
          a: rows.let('first_word_a', div(rowStart.a, u32(4))),
          b: rows.let('first_word_b', div(rowStart.b, u32(4))),
        };
        const sectorBase = {
          a: rows.let('sector_base_a', and(firstWord.a, u32(0x100000000 - SECTOR_WORDS))),
          b: rows.let('sector_base_b', and(firstWord.b, u32(0x100000000 - SECTOR_WORDS))),
        };
        const total = { a: rows.let('total_a', f32(0)), b: rows.let('total_b', f32(0)) };
        const previous = { a: rows.let('previous_a', u32(0)), b: rows.let('previous_b', u32(0)) };
        rows.for('window', { start: u32(0), end: windows, step: u32(1) }, (win, window) => {
          // Offsets are row a's; row b's are the same for every live row b.
          const base = win.let('window_base', add(sectorBase.a, mul(window, u32(WARP_SIZE))));
          const index = win.let('word_index', add(base, lane));
          // Byte offset of the word in the row; wraps to a huge value before the row's start.
          const offset = win.let('offset', sub(mul(index, u32(4)), rowStart.a));
          // Words from the one holding the row's first byte up to the one holding its last.
          const inRow = lt(add(offset, u32(3)), add(rowBytes, u32(3)));
          const block = win.let('block', div(offset, u32(BLOCK_BYTES)));
          const blockStart = win.let('block_start', mul(block, u32(BLOCK_BYTES)));
          const inBlock = win.let('in_block', sub(offset, blockStart));
          const scaleWord = win.let('scale_word', div(add(rowStart.a, blockStart), u32(4)));
          // The sign of scale_word - base picks this window's word or the previous one's.
          const source = win.let('source', and(sub(scaleWord, base), u32(WARP_SIZE - 1)));
          const scaleShift = mul(and(add(rowStart.a, blockStart), u32(2)), u32(8));
          const words = ROWS.map((k) => {
            const word = win.let(`word_${k}`, u32(0));
            const at = add(add(sectorBase[k], mul(window, u32(WARP_SIZE))), lane);
            win.if(and(live[k], inRow), (load) => load.assign(word, load.load('w', at)));
            // Both shuffles run in every lane (uniform control flow).
            const current = win.shuffle('idx', `scale_current_${k}`, word, source);
            const earlier = win.shuffle('idx', `scale_earlier_${k}`, previous[k], source);
            win.assign(previous[k], word);
            return { word, current, earlier };
          });
          // The word's quants pair with a run of 2 or 4 consecutive x from x_start (d bytes pair with
          // none), and consecutive lanes' runs are consecutive. A lane loads the 16-byte aligned x
          // chunk holding x_start; a run starting 8 bytes into it ends in the next lane's chunk,
          // fetched by shuffle (lane 31 loads it itself): every x request fills whole sectors, and
          // serves both rows.
          const hasQuants = win.let('has_quants', and(live.a, lt(offset, rowBytes)));
          const hasLow = win.let('has_low', ge(inBlock, u32(2)));
          const xIndex = win.let('x_index', add(mul(block, u32(BLOCK)), inBlock));
          const xStart = win.let('x_start', select(hasLow, sub(xIndex, u32(2)), xIndex));
          const chunk = win.let('x_chunk', and(xStart, u32(0x100000000 - 4)));
          const odd = win.let('x_odd', ne(and(xStart, u32(2)), u32(0)));
          const xs = [0, 1, 2, 3].map((k) => win.let(`xc${k}`, f32(0)));
          win.if(hasQuants, (load) => {
            const loaded = load.loadVector('x', chunk, ['xl0', 'xl1', 'xl2', 'xl3']);
            xs.forEach((held, k) => load.assign(held, loaded[k] as Expr));
          });
          const fromNext = [0, 1].map((k) =>
            win.let(`x_tail${k}`, win.shuffle('down', `x_next${k}`, xs[k] as Expr, u32(1))),
          );
          const spills = and(odd, le(inBlock, u32(BLOCK_BYTES - 4)));
          win.if(and(and(hasQuants, spills), eq(lane, u32(WARP_SIZE - 1))), (tail) => {
            const next = tail.loadVector('x', add(chunk, u32(4)), ['xn0', 'xn1', 'xn2', 'xn3']);
            fromNext.forEach((held, k) => tail.assign(held, next[k] as Expr));
          });
          // Row b is past the end whenever row a is; a dead row b's sum is never stored.
          win.if(hasQuants, (quants) => {
            // The run x_start, x_start + 1, ...: chunk elements 0-3, or 2-3 and the next chunk's 0-1.
            const [c0, c1, c2, c3] = xs as [Expr, Expr, Expr, Expr];
            const [n0, n1] = fromNext as [Expr, Expr];
            const run = [
              select(odd, c2, c0),
              select(odd, c3, c1),
              select(odd, n0, c2),
              select(odd, n1, c3),
            ];
            const high = [
              quants.let('x_high0', select(hasLow, run[2] as Expr, run[0] as Expr)),
              quants.let('x_high1', select(hasLow, run[3] as Expr, run[1] as Expr)),
            ];
            ROWS.forEach((k, index) => {
              const { word, current, earlier } = words[index] as (typeof words)[number];
              const scaleBits = select(lt(scaleWord, base), earlier, current);
              const scale = quants.let(`scale_${k}`, unpackHalf(shr(scaleBits, scaleShift), 0));
              const sum = quants.let(`sum_${k}`, f32(0));
              // Byte j as a signed int8: shifted to the top, then an arithmetic shift back down.
              const quant = (j: number) => {
                const top = j === 3 ? word : shl(word, u32(24 - 8 * j));
                return convert('f32', shr(bitcast('i32', top), u32(24)));
              };
              // Bytes 0-1 are quants unless they are this block's d, bytes 2-3 unless they are
              // the next block's d; the run starts at the first quant byte.
              quants.if(hasLow, (low) => {
                low.assign(sum, fma(quant(1), run[1] as Expr, mul(quant(0), run[0] as Expr)));
              });
              quants.if(le(inBlock, u32(BLOCK_BYTES - 4)), (highPair) => {
                const [x2, x3] = high as [Expr, Expr];
                highPair.assign(sum, fma(quant(3), x3, fma(quant(2), x2, sum)));
              });
              quants.assign(total[k], fma(scale, sum, total[k]));
            });
          });
        });
        return total;
      },
    }),
);

/**
 * Catalog kernel `q8_0-gemv`: y = W x with W's `n_out` rows in native GGUF Q8_0 blocks (32 values
 * in 34 bytes) bound as u32 words, x and y f32. A warp streams two rows at once; `n_in` must be a
 * multiple of 32.
 */
export const q8_0Gemv: CatalogKernel = gemvCatalogKernel({
  spec,
  type: 'q8_0',
  // Word indices and byte offsets are u32: the matrix plus one window must stay below 2^32 bytes.
  offsetHeadroom: 4 * (WARP_SIZE + SECTOR_WORDS),
  generateWeights(nOut, nIn, rng, magnitude) {
    const values = new Float32Array(nOut * nIn);
    fillUniform(values, rng, magnitude);
    return packWords(quantize('q8_0', values, nOut, nIn));
  },
});
