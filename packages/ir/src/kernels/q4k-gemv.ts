import type { Local, Value } from '../expression-methods.js';
import { add, convert, fma, i32 } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { randomQ4kWords } from './gemv-catalog.js';
import { blockLanes, rowsGemvKernel, X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import type { RowStep } from './gemv-rows.js';
import { four } from './locals.js';
import { q4kScalesMins } from './q4k-scales.js';
import { hints, mapPair } from './tuples.js';
import type { Four, Pair } from './tuples.js';

// Bandwidth plan: a warp streams a row, 8 blocks (1152 bytes) a step. Blocks are 144 bytes,
// 16-byte aligned, so lane l loads its block's header (16 bytes, the block's 4 lanes asking for the
// same sector) and qs chunks c and c + 4 (c = l % 4, 16 bytes each) straight from W; all of a step's
// loads, then its 12 x loads from scratch (L1), are issued before any is used, and every index is a
// pointer carried from step to step. Chunk c = 2k + h holds values 16h..16h + 15 of sub-block 2k
// in its low nibbles and of 2k + 1 in its high nibbles (chunk c + 4: sub-blocks 2k + 4, 2k + 5,
// whose 6-bit scales share bit positions with 2k's). Nibbles meet x_high and x_low words in 32
// dot4I8; each sub-block's i32 sum times its scale is scaled in f32 by its x scale and d, less dmin
// · min · (its x values' sum). The last step's lanes past the row load its last block again and
// add nothing.

const { blockBytes, blockSize } = QUANT_FORMATS.q4_K;
const BLOCK_WORDS = blockBytes / 4;
/** Header words (0: d and dmin, 1-3: scales and mins) before a block's 32 qs words. */
const HEADER_WORDS = 4;
/** 4 lanes a block, so a step is 8 blocks of the row. */
const STEP_BLOCKS = 8;
/** x_quant words of a block: 8 groups of 16. */
const X_BLOCK_WORDS = 8 * X_QUANT_GROUP_WORDS;
/** How far each pointer moves a step: x_quant word, x scale, x sum of 8, W word. */
const STRIDES = { quant: STEP_BLOCKS * X_BLOCK_WORDS, scale: STEP_BLOCKS * 8, sum: STEP_BLOCKS * 32 }; // prettier-ignore
const W_STRIDE = STEP_BLOCKS * BLOCK_WORDS;

/** Where a step reads: x_quant word, x scale and sum indices, and per row W's header and qs words. */
type Pointers = Record<'quant' | 'scale' | 'sum', Local<'u32'>> & { readonly rows: Pair<Record<'header' | 'qs', Local<'u32'>>> }; // prettier-ignore

function row(rowStep: RowStep): void {
  const { b, rows, sumBase } = rowStep;
  // Lane l takes block l / 4 of a step, qs chunks c = l % 4 (`quarter`) and c + 4; c = 2k + h.
  const { blocks, quarter, laneBlock, half: pair, side: half } = blockLanes(rowStep, blockSize);
  // Scale and min bytes 2k, 2k + 1 (k < 2) sit in words 1-2 at bit 16k, 6 bits each; those of 2k + 4
  // and 2k + 5 are the nibbles of word 3 at bit 16k under the top bits of 2k's.
  const { shift, chunkWord } = b.let({
    shift: pair.mul(16),
    chunkWord: add(HEADER_WORDS, quarter.mul(4)),
  });
  const rowBlocks = mapPair(rows, (r) => b.let('row_block', r.row.mul(blocks)));
  // Block `block`'s pointers: x of the lane's first chunk, its first scale and sum of 8; per row,
  // the block's header and the lane's first chunk.
  const pointersAt = (block: Value<'u32'>): Pointers => {
    const quant = b.let('quant_ptr', block.mul(X_BLOCK_WORDS).add(pair.mul(2 * X_QUANT_GROUP_WORDS).add(half.mul(4)))); // prettier-ignore
    const scale = b.let('scale_ptr', block.mul(8).add(pair.mul(2)));
    const sum = b.let('sum_ptr', sumBase.add(block.mul(32).add(pair.mul(8).add(half.mul(2)))));
    const pointers = mapPair(rowBlocks, (rowBlock) => {
      const header = b.let('header_ptr', rowBlock.add(block).mul(BLOCK_WORDS));
      return { header, qs: b.let('qs_ptr', header.add(chunkWord)) };
    });
    return { quant, scale, sum, rows: pointers };
  };
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0].live, () => {
    // One loop: in the last step, lanes past the row's blocks read the last block (one request
    // with their lane group's) and add nothing. One copy of the step keeps the WGSL small enough
    // for lavapipe to compile quickly; the selects cost 5 instructions a step.
    const next = pointersAt(laneBlock);
    const last = pointersAt(blocks.sub(1));
    const { block } = b.let({ block: laneBlock });
    const { steps } = b.let({ steps: blocks.add(STEP_BLOCKS - 1).div(STEP_BLOCKS) });
    b.for('step', { start: 0, end: steps }, () => {
      const { inRow } = b.let({ inRow: block.lt(blocks) });
      const pick = (hint: string, now: Local<'u32'>, end: Local<'u32'>) => b.let(hint, inRow.select(now, end)); // prettier-ignore
      const rowAt = (r: 0 | 1) => ({
        header: pick('header_at', next.rows[r].header, last.rows[r].header),
        qs: pick('qs_at', next.rows[r].qs, last.rows[r].qs),
      });
      const at = {
        quant: pick('quant_at', next.quant, last.quant),
        scale: pick('scale_at', next.scale, last.scale),
        sum: pick('sum_at', next.sum, last.sum),
        rows: [rowAt(0), rowAt(1)] as const,
      };
      // All of the step's loads, issued before any is used, then each row's chunks into its total.
      const offset = (base: Local<'u32'>, words: number) => (words === 0 ? base : base.add(words));
      // Row 0 is live (the caller checks); a later row past n_out reads the last row (its pointer is
      // clamped), the same sectors as row 0's from L1, and adds nothing.
      const w = mapPair(rows, ({ weights }, r) => {
        const { header, qs } = at.rows[r];
        const chunk = (words: number) => b.loadVector(weights, offset(qs, words), hints('qs'));
        return {
          head: b.loadVector(weights, header, hints('head')),
          qs: [chunk(0), chunk(16)] as const,
        };
      });
      // x of chunk j (4 groups on for j = 1), sub-block 2k + sub: x_high words, then x_low words.
      const xWords = (j: number, sub: number) => {
        const words = (j * 4 + sub) * X_QUANT_GROUP_WORDS;
        const high = b.loadVector('x_quant', offset(at.quant, words), hints('x_hi'));
        return {
          high,
          low: b.loadVector('x_quant', offset(at.quant, words + 8), hints('x_lo')),
        };
      };
      const x = [xWords(0, 0), xWords(0, 1), xWords(1, 0), xWords(1, 1)] as const;
      const pairAt = (base: Local<'u32'>, words: number, hint: string) =>
        b.loadVector('x_factors', offset(base, words), [hint, hint]);
      const scales = [pairAt(at.scale, 0, 'x_scale'), pairAt(at.scale, 4, 'x_scale')] as const;
      const sums = four((i) => pairAt(at.sum, (i >> 1) * 16 + (i & 1) * 4, 'x_sum8'));
      mapPair(rows, ({ total, live }, r) => {
        const { head, qs } = w[r];
        b.if(live.and(inRow), () => blockChunks(b, { head, qs, x, scales, sums }, shift, total));
      });
      for (const name of ['quant', 'scale', 'sum'] as const) b.assign(next[name], next[name].add(STRIDES[name])); // prettier-ignore
      for (const { header, qs } of next.rows) for (const w of [header, qs]) b.assign(w, w.add(W_STRIDE)); // prettier-ignore
      b.assign(block, block.add(STEP_BLOCKS));
    });
  });
}

type Words = Four<Local<'u32'>>;
/**
 * What a row's chunks meet: its header words, the lane's qs chunks c and c + 4, the x words of
 * sub-blocks 2k, 2k + 1 of chunk c then of chunk c + 4, each chunk's two x scales and each
 * sub-block's two sums of 8.
 */
interface ChunkData {
  readonly head: Words;
  readonly qs: Pair<Words>;
  readonly x: Four<Record<'high' | 'low', Words>>;
  readonly scales: Pair<Pair<Local<'f32'>>>;
  readonly sums: Four<Pair<Local<'f32'>>>;
}

/** Adds the lane's two qs chunks of one row (16 values of each of 4 sub-blocks) into total. */
function blockChunks(b: RowStep['b'], data: ChunkData, shift: Local<'u32'>, total: Local<'f32'>) {
  const { head: [h0, h1, h2, h3], qs, x, scales, sums } = data; // prettier-ignore
  const d = b.let('d', h0.unpackHalf(0));
  const dmin = b.let('dmin', h0.unpackHalf(1).neg());
  const { s1, s2, s3 } = b.let({ s1: h1.shr(shift), s2: h2.shr(shift), s3: h3.shr(shift) });
  // Byte 0 holds the chunk's first sub-block's 6-bit scale (min), byte 1 the second's; scales are
  // i32: they multiply dot sums.
  const unpacked = q4kScalesMins([s1, s2, s3]);
  const chunkFactors = [
    { scales: b.let('scales_low', unpacked.scales.bitcast('i32')), mins: b.let('mins_low', unpacked.mins) }, // prettier-ignore
    { scales: b.let('scales_high', unpacked.highScales.bitcast('i32')), mins: b.let('mins_high', unpacked.highMins) }, // prettier-ignore
  ] as const;
  // Σ q·(256·x_high + x_low) over a sub-block's 16 values of chunk j (its high nibbles: `upper`).
  const dot = (chunk: Words, { high, low }: ChunkData['x'][0], upper: boolean) => {
    let [dotHigh, dotLow]: [Value<'i32'>, Value<'i32'>] = [i32(0), i32(0)];
    four((i) => {
      const q = b.let('q', (upper ? chunk[i].shr(4) : chunk[i]).and(0x0f0f0f0f));
      dotHigh = b.let('dot_h', q.dot4I8(high[i], dotHigh));
      dotLow = b.let('dot_l', q.dot4I8(low[i], dotLow));
    });
    return dotHigh.mul(256).add(dotLow);
  };
  const terms = mapPair(chunkFactors, ({ scales: bytes, mins }, j) => {
    const [xA, xB] = j === 0 ? [x[0], x[1]] : [x[2], x[3]];
    const [dotA, dotB] = [dot(qs[j], xA, false), dot(qs[j], xB, true)];
    const [scaleA, scaleB] = scales[j];
    const [sumA, sumB] = j === 0 ? [sums[0], sums[1]] : [sums[2], sums[3]];
    const weighted = (scale: Value<'i32'>, sum: Value<'i32'>) => convert('f32', scale.mul(sum));
    return {
      quants: fma(weighted(bytes.shr(8), dotB), scaleB, weighted(bytes.and(255), dotA).mul(scaleA)),
      offsets: fma(mins.shr(8).to('f32'), sumB[0].add(sumB[1]), mins.and(255).to('f32').mul(sumA[0].add(sumA[1]))), // prettier-ignore
    };
  });
  // A chunk at a time into total: the fma nesting WGSL devices and the interpreter round alike.
  for (const { quants, offsets } of terms)
    b.assign(total, fma(d, quants, fma(dmin, offsets, total)));
}

const Q4K_WEIGHTS = { generateWeights: randomQ4kWords };
const LAYOUT = 'in native GGUF Q4_K blocks';
/** Catalog kernel `q4k-gemv` (`n_in` a multiple of 256). */
export const q4kGemv = rowsGemvKernel({ id: 'q4k-gemv', semanticVersion: 3, type: 'q4_K', row }, LAYOUT, Q4K_WEIGHTS); // prettier-ignore
/** Catalog kernel `q4k-swiglu-gemv`: y = silu(W x) · (W_up x), both Q4_K (`n_in` a multiple of 256). */
export const q4kSwigluGemv = rowsGemvKernel({ id: 'q4k-swiglu-gemv', semanticVersion: 1, type: 'q4_K', row }, LAYOUT, { ...Q4K_WEIGHTS, gated: true }); // prettier-ignore
