import { WARP_SIZE, type Expr } from '../body.js';
import { add, and, convert, div, eq, f32, fma, ge, lt, mul, or } from '../expressions.js';
import { select, shl, shr, sub, u32, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { SECTOR_MASK, SECTOR_WORDS, gemvKernel } from './legacy-gemv-interface.js';
import type { GemvBuilder, GemvRows } from './legacy-gemv-interface.js';
import { vectorNames } from './locals.js';
import { randomQ6kBlocks } from './gemv-catalog.js';

const { blockSize: BLOCK, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Windows back a lane decodes: a ql chunk's qh, scales and d lie at most 53 words ahead. */
const LAG = 2;
type U32 = Expr<'u32'>;

// Bandwidth plan: one warp per row, in windows (see GEMV_INTERFACE). Every other 210-byte block
// starts 2 bytes into a word; a lane decodes the block-aligned 4-byte chunk starting in its word
// (byte 4w or 4w+2) when it is ql, gathering the chunk's second word, its qh chunk (64-128 bytes
// ahead), two scale chunks and d (up to 209 bytes ahead) by shuffle from its last three windows'
// words: nothing is loaded twice.

function setup(b: GemvBuilder, blocks: U32) {
  const { rowBytes } = b.let({ rowBytes: mul(blocks, BLOCK_BYTES) });
  // A row starts at most 30 bytes into its first sector.
  const spanWords = div(add(rowBytes, 30 + 3), 4);
  const { windows } = b.let({ windows: div(add(spanWords, WARP_SIZE - 1), WARP_SIZE) });
  return { rowBytes, windows };
}

function row({ rows, live, clamped, lane }: GemvRows<'row'>, { rowBytes, windows }: Setup) {
  const { rowStart } = rows.let({ rowStart: mul(clamped, rowBytes) });
  const { firstWord } = rows.let({ firstWord: div(rowStart, 4) });
  // held0: the window being decoded; held2: the one just loaded.
  const { endWord, sectorBase, total, held0, held1, held2 } = rows.let({
    endWord: div(add(add(rowStart, rowBytes), 3), 4),
    sectorBase: and(firstWord, SECTOR_MASK),
    total: f32(0),
    held0: u32(0),
    held1: u32(0),
    held2: u32(0),
  });
  rows.for('step', { start: 0, end: add(windows, LAG) }, (st, step) => {
    const { loadBase, fresh } = st.let({
      loadBase: add(sectorBase, mul(step, WARP_SIZE)),
      fresh: u32(0),
    });
    const loadIndex = add(loadBase, lane);
    const inRow = and(ge(loadIndex, firstWord), lt(loadIndex, endWord));
    st.if(and(live, inRow), (load) => load.assign(fresh, load.load('w', loadIndex)));
    st.assign(held0, held1);
    st.assign(held1, held2);
    st.assign(held2, fresh);
    // Decodes the window LAG back (wraps, and is masked, in the first LAG steps).
    const { base } = st.let({ base: sub(loadBase, LAG * WARP_SIZE) });
    let fetches = 0;
    // Word `index` of the three held windows, by shuffle.
    const fetch = (index: U32) => {
      const name = `f${fetches++}`;
      const rel = st.let(`${name}_rel`, sub(index, base));
      const shuffled = (k: number, held: U32) =>
        st.shuffle('idx', `${name}_${k}`, held, and(rel, WARP_SIZE - 1));
      const [w0, w1, w2] = [shuffled(0, held0), shuffled(1, held1), shuffled(2, held2)];
      const window = shr(rel, 5);
      return st.let(name, select(eq(window, 0), w0, select(eq(window, 1), w1, w2)));
    };
    // The block-aligned 4 bytes at even global byte `at`, from words `low` and `high`.
    const chunk = (at: U32, low: U32, high: U32) =>
      select(eq(and(at, 2), 0), low, or(shr(low, 16), shl(high, 16)));
    const { wordIndex: word } = st.let({ wordIndex: add(base, lane) });
    // The block of byte 4w + 2 owns the chunk that starts in this word (at 4w or 4w + 2).
    const { offset } = st.let({ offset: sub(add(mul(word, 4), 2), rowStart) });
    const { block } = st.let({ block: div(offset, BLOCK_BYTES) });
    const { inBlock, blockAt } = st.let({
      inBlock: and(sub(offset, mul(block, BLOCK_BYTES)), ~3 >>> 0),
      blockAt: add(rowStart, mul(block, BLOCK_BYTES)),
    });
    const at = st.let('chunk_at', add(blockAt, inBlock));
    const qlNext = fetch(add(word, 1));
    const { half, hi, l } = st.let({
      half: shr(inBlock, 6),
      hi: and(shr(inBlock, 5), 1),
      l: and(inBlock, 31),
    });
    const { qhAt } = st.let({ qhAt: add(blockAt, add(128, add(mul(half, 32), l))) });
    const qhLow = fetch(shr(qhAt, 2));
    const qhHigh = fetch(add(shr(qhAt, 2), 1));
    const { scaleAt } = st.let({ scaleAt: add(blockAt, add(192, mul(half, 8))) });
    const scale0 = fetch(shr(scaleAt, 2));
    const scale1 = fetch(add(shr(scaleAt, 2), 1));
    const scale2 = fetch(add(shr(scaleAt, 2), 2));
    const { dAt } = st.let({ dAt: add(blockAt, 208) });
    const dWord = fetch(shr(dAt, 2));
    const isQl = and(and(live, ge(step, LAG)), and(lt(offset, rowBytes), lt(inBlock, 128)));
    st.if(isQl, (quants) => {
      const { ql, qh, scalesLow, scalesHigh, d } = quants.let({
        ql: chunk(at, held0, qlNext),
        qh: chunk(qhAt, qhLow, qhHigh),
        scalesLow: chunk(scaleAt, scale0, scale1),
        scalesHigh: chunk(add(scaleAt, 4), scale1, scale2),
        d: unpackHalf(shr(dWord, mul(and(dAt, 2), 8)), 0),
      });
      // Scale byte s + 2·hi of each scale chunk, s = l / 16; int8, so bytes >= 128 are negative.
      const scaleShift = mul(add(shr(l, 4), mul(hi, 2)), 8);
      const at0 = add(add(mul(block, BLOCK), mul(half, 128)), add(l, mul(hi, 32)));
      const { xIndex } = quants.let({ xIndex: at0 });
      let acc: Expr<'f32'> = total;
      for (const nibble of [0, 1] as const) {
        const scales = nibble === 0 ? scalesLow : scalesHigh;
        const byte = quants.let(`scale${nibble}`, and(shr(scales, scaleShift), 255));
        const scale = sub(convert('f32', byte), mul(convert('f32', shr(byte, 7)), 256));
        const sum = quants.let(`sum${nibble}`, f32(0));
        const xs = quants.loadVector('x', add(xIndex, 64 * nibble), vectorNames(`x${nibble}_`));
        xs.forEach((x, j) => {
          const low = and(shr(ql, 8 * j + 4 * nibble), 15);
          const bits = and(shr(qh, add(8 * j + 4 * nibble, mul(hi, 2))), 3);
          quants.assign(sum, fma(sub(convert('f32', or(low, mul(bits, 16))), 32), x, sum));
        });
        acc = fma(mul(d, scale), sum, acc);
      }
      quants.assign(total, acc);
    });
  });
  return total;
}
type Setup = ReturnType<typeof setup>;

/** Catalog kernel `q6k-gemv` (`n_in` a multiple of 256). */
export const q6kGemv = gemvKernel(
  { id: 'q6k-gemv', semanticVersion: 1, type: 'q6_K', rows: 'row', setup, row },
  'in native GGUF Q6_K blocks',
  {
    offsetHeadroom: 4 * ((LAG + 1) * WARP_SIZE + SECTOR_WORDS), // three windows
    // Random blocks: quantizing 8M values is slow; random bytes reach every value and scale.
    generateWeights: (...shape) => packWords(randomQ6kBlocks(...shape)),
  },
);
