import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { GEMV_INTERFACE } from './gemv-interface.js';
import { ValidationError } from '../errors.js';
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
  neg,
  or,
  select,
  shr,
  sub,
  u32,
  unpackHalf,
} from '../expressions.js';
import { dequantize, quantizedBytes } from '../quant/formats.js';
import { writeF16 } from '../quant/scalar.js';
import { packWords, unpackWords } from '../quant/words.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';

const BLOCK = 256;
const BLOCK_BYTES = 144;
const BLOCK_WORDS = BLOCK_BYTES / 4;
/** Words of d/dmin (word 0) and scales[12] (words 1-3) before a block's 32 qs words. */
const HEADER_WORDS = 4;
/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
const SECTOR_WORDS = 8;

// Bandwidth plan. One warp per row: lane l loads word (window base + l) of a window of 32
// consecutive words, so each warp load is 128 contiguous bytes and every weight word is loaded once.
// Rows are whole 36-word blocks, so a row starts 0 or 4 words into a sector; windows start on the
// sector boundary, and lanes before the row's first word skip their load.
// A qs word at in-block word k in [4, 36) needs its block's header (word 0: d, dmin; words 1-3:
// scales), up to 35 words back. Header words in this window come by warp shuffle of this window's
// words; older ones are in `carry`: header word h of the latest block whose word h precedes the
// window, broadcast from the lane that loaded it. So the header is never loaded a second time.
// A window (32 words) is shorter than a block (36), so it holds at most one block's word h and
// `carry` is exactly the header a lane's block needs when its word h is before the window.
// Warp ops need workgroup-uniform control flow in WGSL, so every warp runs the same window count
// (from the params) and a warp past the last row still shuffles and reduces; it only skips its loads.
const spec = defineKernel(
  {
    id: 'q4k-gemv',
    semanticVersion: 1,
    entryPoint: 'q4k_gemv',
    description:
      'y = dequant(W) x, W rows in native GGUF Q4_K blocks (read as u32 words), x and y f32; one warp per row',
    ...GEMV_INTERFACE,
  },
  (b) => {
    const nOut = b.param('n_out');
    const rowsPerWarp = b.schedule('rowsPerWarp');
    const rowsPerGroup = b.let(
      'rows_per_group',
      mul(div(b.schedule('workgroupSize'), u32(WARP_SIZE)), rowsPerWarp),
    );
    const blocks = b.let('blocks', div(b.param('n_in'), u32(BLOCK)));
    const rowWords = b.let('row_words', mul(blocks, u32(BLOCK_WORDS)));
    // With an odd block count every other row starts 4 words into its first sector.
    const slack = mul(and(blocks, u32(1)), u32(HEADER_WORDS));
    const spanWords = add(rowWords, slack);
    const windows = b.let('windows', div(add(spanWords, u32(WARP_SIZE - 1)), u32(WARP_SIZE)));
    const groups = b.let('groups', div(add(nOut, sub(rowsPerGroup, u32(1))), rowsPerGroup));
    const lane = b.let('lane', b.laneId());
    const groupRange = { start: b.workgroupId('x'), end: groups, step: b.numWorkgroups('x') };
    b.for('group', groupRange, (g, group) => {
      g.for('r', { start: u32(0), end: rowsPerWarp, step: u32(1) }, (rows, r) => {
        const first = add(mul(group, rowsPerGroup), mul(rows.warpId(), rowsPerWarp));
        const row = rows.let('row', add(first, r));
        const live = rows.let('live', lt(row, nOut));
        // Clamped so address arithmetic of a warp past the last row stays in range.
        const firstWord = rows.let('first_word', mul(min(row, sub(nOut, u32(1))), rowWords));
        const endWord = rows.let('end_word', add(firstWord, rowWords));
        const sectorBase = rows.let('sector_base', and(firstWord, u32(0x100000000 - SECTOR_WORDS)));
        const total = rows.let('total', f32(0));
        const carry = [0, 1, 2, 3].map((h) => rows.let(`carry${h}`, u32(0)));
        rows.for('window', { start: u32(0), end: windows, step: u32(1) }, (win, window) => {
          const base = win.let('window_base', add(sectorBase, mul(window, u32(WARP_SIZE))));
          const index = win.let('word_index', add(base, lane));
          const word = win.let('word', u32(0));
          const inRow = and(ge(index, firstWord), lt(index, endWord));
          win.if(and(live, inRow), (load) => load.assign(word, load.load('w', index)));
          // Word offset in the row; wraps to a huge value before the row's start.
          const offset = win.let('offset', sub(index, firstWord));
          const block = win.let('block', div(offset, u32(BLOCK_WORDS)));
          const blockWord = win.let('block_word', add(firstWord, mul(block, u32(BLOCK_WORDS))));
          // Header words of the lane's block: this window's lane, or the carry when before it.
          // Every lane runs every shuffle (uniform control flow); lanes not on qs words discard them.
          const header = carry.map((held, h) => {
            const at = add(blockWord, u32(h));
            const source = and(sub(at, base), u32(WARP_SIZE - 1));
            const fetched = win.shuffle('idx', `header${h}`, word, source);
            return win.let(`head${h}`, select(lt(at, base), held, fetched));
          });
          // The carry moves to the last block touching the window when its word h is in the window.
          const lastBlock = div(sub(add(base, u32(WARP_SIZE - 1)), firstWord), u32(BLOCK_WORDS));
          const lastBlockWord = win.let(
            'last_block_word',
            add(firstWord, mul(lastBlock, u32(BLOCK_WORDS))),
          );
          carry.forEach((held, h) => {
            const at = add(lastBlockWord, u32(h));
            const source = and(sub(at, base), u32(WARP_SIZE - 1));
            const fetched = win.shuffle('idx', `next_carry${h}`, word, source);
            win.assign(
              held,
              select(and(ge(at, base), lt(at, add(base, u32(WARP_SIZE)))), fetched, held),
            );
          });
          const inBlock = sub(offset, sub(blockWord, firstWord));
          const isQuants = and(lt(offset, rowWords), ge(inBlock, u32(HEADER_WORDS)));
          win.if(and(live, isQuants), (quants) => {
            const [head0, head1, head2, head3] = header as [Expr, Expr, Expr, Expr];
            const qsWord = quants.let('qs_word', sub(inBlock, u32(HEADER_WORDS)));
            // Chunk c = qsWord / 8 of 32 qs bytes: low nibbles are sub-block 2c, high ones 2c+1.
            const chunk = quants.let('chunk', shr(qsWord, u32(3)));
            // Sub-blocks 2c and 2c+1 use bytes 2(c%2) and 2(c%2)+1 of scale words 1-3.
            const shift = mul(and(chunk, u32(1)), u32(16));
            const s1 = quants.let('s1', shr(head1, shift));
            const s2 = quants.let('s2', shr(head2, shift));
            const s3 = quants.let('s3', shr(head3, shift));
            // Two 6-bit scales (mins) packed in bytes 0 and 1: plain for sub-blocks < 4, split else.
            const low = lt(chunk, u32(2));
            const split = (nibbles: Expr, tops: Expr) =>
              or(and(nibbles, u32(0x0f0f)), and(shr(tops, u32(2)), u32(0x3030)));
            const scales = quants.let('scales', select(low, and(s1, u32(0x3f3f)), split(s3, s1)));
            const mins = quants.let(
              'mins',
              select(low, and(s2, u32(0x3f3f)), split(shr(s3, u32(4)), s2)),
            );
            const d = quants.let('d', unpackHalf(head0, 0));
            const dmin = quants.let('dmin', unpackHalf(head0, 1));
            // x index of byte 0's low nibble: value 256 b + 64 c + l, l = 4 (qsWord % 8).
            const xIndex = quants.let(
              'x_index',
              add(
                add(mul(block, u32(BLOCK)), mul(chunk, u32(64))),
                mul(and(qsWord, u32(7)), u32(4)),
              ),
            );
            let acc: Expr = total;
            for (const half of [0, 1] as const) {
              const sumQ = quants.let(`sum_q${half}`, f32(0));
              const sumX = quants.let(`sum_x${half}`, f32(0));
              // The word's 4 bytes pair with 4 consecutive x: one 16-byte load (x_index % 4 = 0).
              const xs = quants.loadVector(
                'x',
                add(xIndex, u32(32 * half)),
                [0, 1, 2, 3].map((byte) => `x${half}_${byte}`),
              );
              for (let byte = 0; byte < 4; byte++) {
                const x = xs[byte] as Expr;
                const nibble = and(shr(word, u32(8 * byte + 4 * half)), u32(15));
                quants.assign(sumQ, fma(convert('f32', nibble), x, sumQ));
                quants.assign(sumX, add(sumX, x));
              }
              const sc = convert('f32', and(shr(scales, u32(8 * half)), u32(63)));
              const m = convert('f32', and(shr(mins, u32(8 * half)), u32(63)));
              acc = fma(mul(d, sc), sumQ, fma(neg(mul(dmin, m)), sumX, acc));
            }
            quants.assign(total, acc);
          });
        });
        const rowSum = rows.reduce('add', 'row_sum', total);
        rows.if(and(live, eq(lane, u32(0))), (store) => store.store('y', row, rowSum));
      });
    });
  },
);

const size = (shape: Shape, name: string): number => shape[name] ?? 0;
const weightBytes = (shape: Shape): number =>
  quantizedBytes('q4_K', size(shape, 'n_out'), size(shape, 'n_in'));

function checkShape(shape: Shape): void {
  const nIn = size(shape, 'n_in');
  const nOut = size(shape, 'n_out');
  const problem = (path: string, message: string): never => {
    throw new ValidationError([{ path, message }]);
  };
  if (!Number.isSafeInteger(nIn) || nIn < BLOCK || nIn % BLOCK !== 0)
    problem('n_in', `${nIn} is not a multiple of ${BLOCK}, the q4_K block size`);
  if (!Number.isSafeInteger(nOut) || nOut < 1) problem('n_out', `${nOut} is not at least 1`);
  // Word indices are u32: the matrix plus one window must stay below 2^32 words' byte offsets.
  if (weightBytes(shape) > 2 ** 32 - 4 * (WARP_SIZE + SECTOR_WORDS))
    problem('n_out', `${nOut} rows of ${nIn} q4_K values exceed 32-bit byte offsets`);
}

export const q4kGemv: CatalogKernel = {
  spec,
  shapeNames: ['n_in', 'n_out'],
  defaultShape: { n_in: 512, n_out: 64 },
  params: (shape) => ({ n_in: size(shape, 'n_in'), n_out: size(shape, 'n_out') }),
  bufferLengths: (shape) => ({
    w: weightBytes(shape) / 4,
    x: size(shape, 'n_in'),
    y: size(shape, 'n_out'),
  }),
  outputs: ['y'],
  checkShape,
  weights: { buffer: 'w', type: 'q4_K', bytes: weightBytes },
  // Random blocks rather than quantized floats: ggml's Q4_K search quantizes ~0.2M values/s, too
  // slow for 8M-value cases, and random bytes reach every 6-bit scale, min and nibble.
  generateInput({ buffer, shape, rng, magnitude }) {
    if (buffer !== 'w') return undefined;
    const words = new Uint32Array(weightBytes(shape) / 4);
    const header = new Uint8Array(4);
    for (let start = 0; start < words.length; start += BLOCK_WORDS) {
      // d * 63 * 15 and dmin * 63 stay below the magnitude, so |w| <= magnitude.
      writeF16(header, 0, (rng.uniform(0.25, 0.99) * magnitude) / (63 * 15));
      writeF16(header, 2, (rng.uniform(0, 0.99) * magnitude) / 63);
      words[start] = packWords(header)[0] ?? 0;
      for (let k = 1; k < BLOCK_WORDS; k++) words[start + k] = rng.nextU32();
    }
    return words;
  },
  reference(inputs, params) {
    const nIn = params['n_in'] ?? 0;
    const nOut = params['n_out'] ?? 0;
    const bytes = unpackWords(inputs['w'] ?? [], quantizedBytes('q4_K', nOut, nIn));
    const weights = dequantize('q4_K', bytes, nOut, nIn);
    const x = inputs['x'] ?? [];
    const y = new Float64Array(nOut);
    for (let r = 0; r < nOut; r++) {
      let dot = 0;
      for (let c = 0; c < nIn; c++) dot += (weights[r * nIn + c] ?? 0) * (x[c] ?? 0);
      y[r] = dot;
    }
    return { y };
  },
  tolerance: 1e-10,
};
