import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { GEMV_INTERFACE } from './gemv-interface.js';
import { ValidationError } from '../errors.js';
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
  select,
  shl,
  shr,
  sub,
  u32,
  unpackHalf,
} from '../expressions.js';
import { dequantize, quantize, quantizedBytes } from '../quant/formats.js';
import { packWords, unpackWords } from '../quant/words.js';
import { fillUniform } from '../testing/random.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';

const BLOCK = 32;
const BLOCK_BYTES = 34;
/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
const SECTOR_WORDS = 8;

// Bandwidth plan. One warp per row: lane l loads word (window base + l) of a window of 32
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
      'y = dequant(W) x, W rows in native GGUF Q8_0 blocks (read as u32 words), x and y f32; one warp per row',
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
    const rowBytes = b.let('row_bytes', mul(blocks, u32(BLOCK_BYTES)));
    // Row starts are multiples of gcd(row_bytes, 32) = 2 * min(lowest set bit of blocks, 16), so a
    // row begins at most 32 - gcd bytes into its first sector: that bounds every row's window count.
    const lowBit = and(blocks, sub(u32(0), blocks));
    const slack = sub(u32(32), mul(u32(2), min(lowBit, u32(16))));
    const spanWords = div(add(add(rowBytes, slack), u32(3)), u32(4));
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
        const rowStart = rows.let('row_start', mul(min(row, sub(nOut, u32(1))), rowBytes));
        const firstWord = rows.let('first_word', div(rowStart, u32(4)));
        const endWord = rows.let('end_word', div(add(add(rowStart, rowBytes), u32(3)), u32(4)));
        const sectorBase = rows.let('sector_base', and(firstWord, u32(0x100000000 - SECTOR_WORDS)));
        const total = rows.let('total', f32(0));
        const previous = rows.let('previous', u32(0));
        rows.for('window', { start: u32(0), end: windows, step: u32(1) }, (win, window) => {
          const base = win.let('window_base', add(sectorBase, mul(window, u32(WARP_SIZE))));
          const index = win.let('word_index', add(base, lane));
          const word = win.let('word', u32(0));
          const inRow = and(ge(index, firstWord), lt(index, endWord));
          win.if(and(live, inRow), (load) => load.assign(word, load.load('w', index)));
          // Byte offset of the word in the row; wraps to a huge value before the row's start.
          const offset = win.let('offset', sub(mul(index, u32(4)), rowStart));
          const block = win.let('block', div(offset, u32(BLOCK_BYTES)));
          const blockStart = win.let('block_start', mul(block, u32(BLOCK_BYTES)));
          const inBlock = win.let('in_block', sub(offset, blockStart));
          const scaleByte = win.let('scale_byte', add(rowStart, blockStart));
          const scaleWord = win.let('scale_word', div(scaleByte, u32(4)));
          // Both shuffles run in every lane (uniform control flow); the sign of scale_word - base
          // picks this window's word or the previous one's.
          const source = win.let('source', and(sub(scaleWord, base), u32(WARP_SIZE - 1)));
          const current = win.shuffle('idx', 'scale_current', word, source);
          const earlier = win.shuffle('idx', 'scale_earlier', previous, source);
          win.assign(previous, word);
          win.if(and(live, lt(offset, rowBytes)), (quants) => {
            const scaleBits = select(lt(scaleWord, base), earlier, current);
            const scale = quants.let(
              'scale',
              unpackHalf(shr(scaleBits, mul(and(scaleByte, u32(2)), u32(8))), 0),
            );
            // x index of the word's byte 2; bytes 0-1 are quants unless they are this block's d,
            // bytes 2-3 unless they are the next block's d.
            const xIndex = quants.let('x_index', add(mul(block, u32(BLOCK)), inBlock));
            const sum = quants.let('sum', f32(0));
            // Byte k as a signed int8: shifted to the top, then an arithmetic shift back down.
            const quant = (k: number) => {
              const top = k === 3 ? word : shl(word, u32(24 - 8 * k));
              return convert('f32', shr(bitcast('i32', top), u32(24)));
            };
            // Blocks are 34 bytes, so x_index is even but only every other block's is a multiple
            // of 4: each byte pair's two x come in one 8-byte load.
            quants.if(ge(inBlock, u32(2)), (low) => {
              const [x0, x1] = low.loadVector('x', sub(xIndex, u32(2)), ['x0', 'x1']) as [
                Expr,
                Expr,
              ];
              low.assign(sum, fma(quant(1), x1, mul(quant(0), x0)));
            });
            quants.if(le(inBlock, u32(BLOCK_BYTES - 4)), (high) => {
              const [x2, x3] = high.loadVector('x', xIndex, ['x2', 'x3']) as [Expr, Expr];
              high.assign(sum, fma(quant(3), x3, fma(quant(2), x2, sum)));
            });
            quants.assign(total, fma(scale, sum, total));
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
  quantizedBytes('q8_0', size(shape, 'n_out'), size(shape, 'n_in'));

function checkShape(shape: Shape): void {
  const nIn = size(shape, 'n_in');
  const nOut = size(shape, 'n_out');
  const problem = (path: string, message: string): never => {
    throw new ValidationError([{ path, message }]);
  };
  if (!Number.isSafeInteger(nIn) || nIn < BLOCK || nIn % BLOCK !== 0)
    problem('n_in', `${nIn} is not a multiple of ${BLOCK}, the q8_0 block size`);
  if (!Number.isSafeInteger(nOut) || nOut < 1) problem('n_out', `${nOut} is not at least 1`);
  // Word indices and byte offsets are u32: the matrix plus one window must stay below 2^32 bytes.
  if (weightBytes(shape) > 2 ** 32 - 4 * (WARP_SIZE + SECTOR_WORDS))
    problem('n_out', `${nOut} rows of ${nIn} q8_0 values exceed 32-bit byte offsets`);
}

export const q8_0Gemv: CatalogKernel = {
  spec,
  shapeNames: ['n_in', 'n_out'],
  defaultShape: { n_in: 512, n_out: 64 },
  params: (shape) => ({ n_in: size(shape, 'n_in'), n_out: size(shape, 'n_out') }),
  bufferLengths: (shape) => ({
    w: Math.ceil(weightBytes(shape) / 4),
    x: size(shape, 'n_in'),
    y: size(shape, 'n_out'),
  }),
  outputs: ['y'],
  checkShape,
  weights: { buffer: 'w', type: 'q8_0', bytes: weightBytes },
  generateInput({ buffer, shape, rng, magnitude }) {
    if (buffer !== 'w') return undefined;
    const values = new Float32Array(size(shape, 'n_out') * size(shape, 'n_in'));
    fillUniform(values, rng, magnitude);
    return packWords(quantize('q8_0', values, size(shape, 'n_out'), size(shape, 'n_in')));
  },
  reference(inputs, params) {
    const nIn = params['n_in'] ?? 0;
    const nOut = params['n_out'] ?? 0;
    const bytes = unpackWords(inputs['w'] ?? [], quantizedBytes('q8_0', nOut, nIn));
    const weights = dequantize('q8_0', bytes, nOut, nIn);
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
