import { WARP_SIZE, type Expr, type VarExpr } from '../body.js';
import { defineKernel, type BodyBuilder } from '../builder.js';
import { GEMV_INTERFACE, gemvBody } from './gemv-interface.js';
import { gemvCatalogKernel, randomQ6kBlocks } from './gemv-catalog.js';
import {
  add,
  and,
  convert,
  div,
  eq,
  f32,
  fma,
  ge,
  lt,
  min,
  mul,
  or,
  select,
  shl,
  shr,
  sub,
  u32,
  unpackHalf,
} from '../expressions.js';
import { packWords } from '../quant/words.js';
import type { CatalogKernel } from './catalog-kernel.js';

const BLOCK = 256;
const BLOCK_BYTES = 210;
/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
const SECTOR_WORDS = 8;
/** Windows a lane holds: a ql chunk's qh, scales and d lie at most 53 words ahead, two windows. */
const LAG = 2;

// Bandwidth plan. One warp per row: lane l loads word (window base + l) of a window of 32
// consecutive words, so each warp load is 128 contiguous bytes and every weight word is loaded once
// (a row that starts mid-word shares that boundary word with the previous row). Windows start on a
// sector boundary. Blocks are 210 bytes, so every other block starts 2 bytes into a word; a lane
// decodes the 4-byte block-aligned chunk that starts in its word (bytes 4w or 4w+2) when it is
// ql, and gathers the chunk's second word, its qh chunk (64-128 bytes ahead), its two scale chunks
// and d (up to 209 bytes ahead) by warp shuffle. Those lie at most two windows ahead, so each lane
// keeps its last three window words and decodes the window loaded two steps earlier: nothing is
// loaded twice. Warp ops need workgroup-uniform control flow in WGSL, so every warp runs the same
// step count (from the params) and a warp past the last row still shuffles and reduces; it only
// skips its loads.
const spec = defineKernel(
  {
    id: 'q6k-gemv',
    semanticVersion: 1,
    entryPoint: 'q6k_gemv',
    description:
      'y = dequant(W) x, W rows in native GGUF Q6_K blocks (read as u32 words), x and y f32; one warp per row',
    ...GEMV_INTERFACE,
  },
  (b) =>
    gemvBody(b, {
      setup: (b) => {
        const blocks = b.let('blocks', div(b.param('n_in'), u32(BLOCK)));
        const rowBytes = b.let('row_bytes', mul(blocks, u32(BLOCK_BYTES)));
        // A row starts at most 30 bytes into its first sector.
        const spanWords = div(add(rowBytes, u32(30 + 3)), u32(4));
        const windows = b.let('windows', div(add(spanWords, u32(WARP_SIZE - 1)), u32(WARP_SIZE)));
        return { rowBytes, windows };
      },
      row: ({ rows, row, live, lane, nOut }, { rowBytes, windows }) => {
        // Clamped so address arithmetic of a warp past the last row stays in range.
        const rowStart = rows.let('row_start', mul(min(row, sub(nOut, u32(1))), rowBytes));
        const firstWord = rows.let('first_word', div(rowStart, u32(4)));
        const endWord = rows.let('end_word', div(add(add(rowStart, rowBytes), u32(3)), u32(4)));
        const sectorBase = rows.let('sector_base', and(firstWord, u32(0x100000000 - SECTOR_WORDS)));
        const total = rows.let('total', f32(0));
        // held[0]: the window being decoded; held[LAG]: the one just loaded.
        const held = [0, 1, 2].map((k) => rows.let(`held${k}`, u32(0)));
        const stepRange = { start: u32(0), end: add(windows, u32(LAG)), step: u32(1) };
        rows.for('step', stepRange, (st, step) => {
          const loadBase = st.let('load_base', add(sectorBase, mul(step, u32(WARP_SIZE))));
          const loadIndex = add(loadBase, lane);
          const fresh = st.let('fresh', u32(0));
          const inRow = and(ge(loadIndex, firstWord), lt(loadIndex, endWord));
          st.if(and(live, inRow), (load) => load.assign(fresh, load.load('w', loadIndex)));
          for (let k = 0; k < LAG; k++) st.assign(held[k] as VarExpr, held[k + 1] as VarExpr);
          st.assign(held[LAG] as VarExpr, fresh);
          // Decoded window: LAG windows back (wraps, and is masked, in the first LAG steps).
          const base = st.let('base', sub(loadBase, u32(LAG * WARP_SIZE)));
          decodeWindow(st, { live, step, base, lane, rowStart, rowBytes, held, total });
        });
        return total;
      },
    }),
);

interface Window {
  readonly live: Expr;
  readonly step: Expr;
  readonly base: Expr;
  readonly lane: Expr;
  readonly rowStart: Expr;
  readonly rowBytes: Expr;
  readonly held: readonly VarExpr[];
  readonly total: VarExpr;
}

/** Adds the values of the ql chunks that start in window `base` to `total`. */
function decodeWindow(st: BodyBuilder, w: Window): void {
  const { base, held } = w;
  let fetches = 0;
  // Global word `index` (within the three held windows) by shuffle; every lane runs all three.
  const fetch = (index: Expr): Expr => {
    const name = `f${fetches++}`;
    const rel = st.let(`${name}_rel`, sub(index, base));
    const source = and(rel, u32(WARP_SIZE - 1));
    const words = held.map((word, k) => st.shuffle('idx', `${name}_${k}`, word, source));
    const window = shr(rel, u32(5));
    return st.let(
      name,
      select(
        eq(window, u32(0)),
        words[0] as Expr,
        select(eq(window, u32(1)), words[1] as Expr, words[2] as Expr),
      ),
    );
  };
  // The block-aligned 4 bytes at even global byte `at`, from words `low` and `high`.
  const chunk = (at: Expr, low: Expr, high: Expr): Expr =>
    select(eq(and(at, u32(2)), u32(0)), low, or(shr(low, u32(16)), shl(high, u32(16))));
  const word = st.let('word_index', add(base, w.lane));
  // The block of byte 4w + 2 owns the chunk that starts in this word (at 4w or 4w + 2).
  const offset = st.let('offset', sub(add(mul(word, u32(4)), u32(2)), w.rowStart));
  const block = st.let('block', div(offset, u32(BLOCK_BYTES)));
  const inBlock = st.let('in_block', and(sub(offset, mul(block, u32(BLOCK_BYTES))), u32(~3 >>> 0)));
  const blockAt = st.let('block_at', add(w.rowStart, mul(block, u32(BLOCK_BYTES))));
  const at = st.let('chunk_at', add(blockAt, inBlock));
  const own = held[0] as Expr;
  const qlNext = fetch(add(word, u32(1)));
  const half = st.let('half', shr(inBlock, u32(6)));
  const hi = st.let('hi', and(shr(inBlock, u32(5)), u32(1)));
  const l = st.let('l', and(inBlock, u32(31)));
  const qhAt = st.let('qh_at', add(blockAt, add(u32(128), add(mul(half, u32(32)), l))));
  const qhLow = fetch(shr(qhAt, u32(2)));
  const qhHigh = fetch(add(shr(qhAt, u32(2)), u32(1)));
  const scaleAt = st.let('scale_at', add(blockAt, add(u32(192), mul(half, u32(8)))));
  const scale0 = fetch(shr(scaleAt, u32(2)));
  const scale1 = fetch(add(shr(scaleAt, u32(2)), u32(1)));
  const scale2 = fetch(add(shr(scaleAt, u32(2)), u32(2)));
  const dAt = st.let('d_at', add(blockAt, u32(208)));
  const dWord = fetch(shr(dAt, u32(2)));
  const isQl = and(
    and(w.live, ge(w.step, u32(LAG))),
    and(lt(offset, w.rowBytes), lt(inBlock, u32(128))),
  );
  st.if(isQl, (quants) => {
    const ql = quants.let('ql', chunk(at, own, qlNext));
    const qh = quants.let('qh', chunk(qhAt, qhLow, qhHigh));
    const scalesLow = quants.let('scales_low', chunk(scaleAt, scale0, scale1));
    const scalesHigh = quants.let('scales_high', chunk(add(scaleAt, u32(4)), scale1, scale2));
    const d = quants.let('d', unpackHalf(shr(dWord, mul(and(dAt, u32(2)), u32(8))), 0));
    // Scale byte s + 2·hi of each scale chunk, s = l / 16; int8, so bytes >= 128 are negative.
    const scaleShift = mul(add(shr(l, u32(4)), mul(hi, u32(2))), u32(8));
    const xIndex = quants.let(
      'x_index',
      add(add(mul(block, u32(BLOCK)), mul(half, u32(128))), add(l, mul(hi, u32(32)))),
    );
    let acc: Expr = w.total;
    for (const nibble of [0, 1] as const) {
      const scales = nibble === 0 ? scalesLow : scalesHigh;
      const byte = quants.let(`scale${nibble}`, and(shr(scales, scaleShift), u32(255)));
      const scale = sub(convert('f32', byte), mul(convert('f32', shr(byte, u32(7))), f32(256)));
      const sum = quants.let(`sum${nibble}`, f32(0));
      // The word's 4 bytes pair with 4 consecutive x: one 16-byte load (x_index % 4 = 0).
      const xs = quants.loadVector(
        'x',
        add(xIndex, u32(64 * nibble)),
        [0, 1, 2, 3].map((j) => `x${nibble}_${j}`),
      );
      for (let j = 0; j < 4; j++) {
        const low = and(shr(ql, u32(8 * j + 4 * nibble)), u32(15));
        const bits = and(shr(qh, add(u32(8 * j + 4 * nibble), mul(hi, u32(2)))), u32(3));
        const q = sub(convert('f32', or(low, mul(bits, u32(16)))), f32(32));
        quants.assign(sum, fma(q, xs[j] as Expr, sum));
      }
      acc = fma(mul(d, scale), sum, acc);
    }
    quants.assign(w.total, acc);
  });
}

/**
 * Catalog kernel `q6k-gemv`: y = W x with W's `n_out` rows in native GGUF Q6_K blocks (256 values
 * in 210 bytes) bound as u32 words, x and y f32. One warp per row; `n_in` must be a multiple of
 * 256.
 */
export const q6kGemv: CatalogKernel = gemvCatalogKernel({
  spec,
  type: 'q6_K',
  // Byte offsets are u32: the matrix plus three windows must stay below 2^32 bytes.
  offsetHeadroom: 4 * ((LAG + 1) * WARP_SIZE + SECTOR_WORDS),
  // Random blocks: quantizing 8M values is slow, and random bytes reach every 6-bit value and
  // signed scale.
  generateWeights: (nOut, nIn, rng, magnitude) =>
    packWords(randomQ6kBlocks(nOut, nIn, rng, magnitude)),
});
