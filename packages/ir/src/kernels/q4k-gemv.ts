import { type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import {
  add,
  and,
  bitcast,
  bitSelect,
  convert,
  div,
  dot4I8,
  fma,
  lt,
  mul,
  neg,
  select,
  shr,
  sub,
  unpackHalf,
} from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { randomQ4kWords } from './gemv-catalog.js';
import { SECTOR_WORDS } from './gemv-interface.js';
import {
  rowsGemvKernel,
  X_QUANT_GROUP_WORDS,
  type RowStep,
  type RowsBuilder,
} from './gemv-rows.js';
import { vectorNames } from './locals.js';

const { blockBytes: BLOCK_BYTES, blockSize: BLOCK_VALUES } = QUANT_FORMATS.q4_K;
const BLOCK_WORDS = BLOCK_BYTES / 4;
/** Header words (0: d and dmin, 1-3: scales and mins) before a block's 32 qs words. */
const HEADER_WORDS = 4;
/** Lanes a block: lane c of them takes qs chunks c and c + 4, so a step is 8 blocks of the row. */
const BLOCK_LANES = 4;
const STEP_BLOCKS = 32 / BLOCK_LANES;
/** x_quant words of a block (8 groups of 16) and the 4 groups between a lane's two chunks. */
const X_BLOCK_WORDS = 8 * X_QUANT_GROUP_WORDS;

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

/** The x pointers a lane carries from step to step, then each row's W pointers; a step's strides. */
const X_STRIDES = {
  quant: STEP_BLOCKS * X_BLOCK_WORDS,
  scale: STEP_BLOCKS * 8,
  sum: STEP_BLOCKS * 32,
};
const W_STRIDE = STEP_BLOCKS * BLOCK_WORDS;
type XPointers<T> = { readonly [K in keyof typeof X_STRIDES]: T };
const X_NAMES = Object.keys(X_STRIDES) as (keyof typeof X_STRIDES)[];

/** Where a step reads: x pointers, and per row the header and first qs chunk words of W. */
interface StepPointers {
  readonly x: XPointers<Var<'u32'>>;
  readonly rows: readonly { readonly header: Var<'u32'>; readonly qs: Var<'u32'> }[];
}

function row({ b, rows, lane, sumBase }: RowStep): void {
  const nIn = b.param('n_in');
  const { blocks, quarter, laneBlock } = b.let({
    blocks: div(nIn, BLOCK_VALUES),
    quarter: and(lane, BLOCK_LANES - 1),
    laneBlock: shr(lane, 2),
  });
  const { pair, half } = b.let({
    pair: shr(quarter, 1),
    half: and(quarter, 1),
  });
  // Scale and min bytes 2k, 2k + 1 (k < 2) sit in words 1-2 at bit 16k, 6 bits each; those of 2k + 4
  // and 2k + 5 are the nibbles of word 3 at bit 16k under the top bits of 2k's.
  const { shift, chunkWord } = b.let({
    shift: mul(pair, 16),
    chunkWord: add(HEADER_WORDS, mul(quarter, 4)),
  });
  const rowBlocks = rows.map(({ row: index }, r) => b.let(`row_block${r}`, mul(index, blocks)));
  // A block's pointers: x_quant word of the lane's first chunk's x, x_factors index of its first
  // scale and first sum of 8; per row, W words of the block's header and of the lane's first chunk.
  const pointersAt = (at: RowsBuilder, prefix: string, block: Expr<'u32'>): StepPointers => ({
    x: Object.fromEntries(
      X_NAMES.map((name) => {
        const value = {
          quant: add(mul(block, X_BLOCK_WORDS), add(mul(pair, 2 * X_QUANT_GROUP_WORDS), mul(half, 4))),
          scale: add(mul(block, 8), mul(pair, 2)),
          sum: add(sumBase, add(mul(block, 32), add(mul(pair, 8), mul(half, 2)))),
        }[name];
        return [name, at.let(`${prefix}_${name}`, value)];
      }),
    ) as XPointers<Var<'u32'>>,
    rows: rowBlocks.map((rowBlock, r) => {
      const header = at.let(`${prefix}_header${r}`, mul(add(rowBlock, block), BLOCK_WORDS));
      return { header, qs: at.let(`${prefix}_qs${r}`, add(header, chunkWord)) };
    }),
  }); // prettier-ignore
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0]!.live, (live) => rowSteps(live, { rows, blocks, laneBlock, shift, pointersAt }));
}

/**
 * The row's steps, one loop: in the last, lanes past the row's blocks read the last block (one
 * request with its lane group's) and add nothing. One copy of the step keeps the WGSL small enough
 * for lavapipe to compile quickly; the selects cost 5 instructions a step.
 */
function rowSteps(
  b: RowsBuilder,
  {
    rows,
    blocks,
    laneBlock,
    shift,
    pointersAt,
  }: {
    readonly rows: RowStep['rows'];
    readonly blocks: Var<'u32'>;
    readonly laneBlock: Var<'u32'>;
    readonly shift: Var<'u32'>;
    readonly pointersAt: (at: RowsBuilder, prefix: string, block: Expr<'u32'>) => StepPointers;
  },
): void {
  const next = pointersAt(b, 'next', laneBlock);
  const last = pointersAt(b, 'last', sub(blocks, 1));
  const { block } = b.let({ block: laneBlock });
  const { steps } = b.let({ steps: div(add(blocks, STEP_BLOCKS - 1), STEP_BLOCKS) });
  b.for('step', { start: 0, end: steps }, (s) => {
    const { inRow } = s.let({ inRow: lt(block, blocks) });
    const pick = (name: string, now: Var<'u32'>, end: Var<'u32'>) =>
      s.let(`${name}_at`, select(inRow, now, end));
    const at: StepPointers = {
      x: Object.fromEntries(X_NAMES.map((name) => [name, pick(name, next.x[name], last.x[name])])) as XPointers<Var<'u32'>>, // prettier-ignore
      rows: next.rows.map((pointers, r) => ({
        header: pick(`header${r}`, pointers.header, last.rows[r]!.header),
        qs: pick(`qs${r}`, pointers.qs, last.rows[r]!.qs),
      })),
    };
    step(s, '', at, rows, shift, inRow);
    for (const name of X_NAMES) s.assign(next.x[name], add(next.x[name], X_STRIDES[name]));
    for (const pointers of next.rows)
      for (const pointer of [pointers.header, pointers.qs])
        s.assign(pointer, add(pointer, W_STRIDE));
    s.assign(block, add(block, STEP_BLOCKS));
  });
}

/** A step's loads, all issued before any is used, then each row's chunks into its total. */
function step(
  s: RowsBuilder,
  tag: string,
  at: StepPointers,
  rows: RowStep['rows'],
  shift: Var<'u32'>,
  inRow: Var<'bool'> | undefined,
): void {
  const offset = (base: Var<'u32'>, words: number) => (words === 0 ? base : add(base, words));
  // Row 0 is live (the caller checks); a later row past n_out reads the last row (its pointer is
  // clamped), the same sectors as row 0's from L1, and adds nothing.
  const w = at.rows.map((pointers, r) => {
    const weights = rows[r]!.weights;
    return {
      head: s.loadVector(weights, pointers.header, vectorNames(`head${r}${tag}_`)),
      qs: [0, 16].map((words) => s.loadVector(weights, offset(pointers.qs, words), vectorNames(`qs${r}${words}${tag}_`))), // prettier-ignore
    };
  });
  // x of chunk j (4 groups on for j = 1), sub-block 2k + sub: x_high words, then x_low words.
  const x = [0, 1].map((j) =>
    [0, 1].map((sub) =>
      [0, 8].map((part) => {
        const words = j * 4 * X_QUANT_GROUP_WORDS + sub * X_QUANT_GROUP_WORDS + part;
        return s.loadVector('x_quant', offset(at.x.quant, words), vectorNames(`x${j}${sub}${part === 0 ? 'h' : 'l'}${tag}_`)); // prettier-ignore
      }),
    ),
  );
  const scales = [0, 4].map(
    (words) =>
    s.loadVector('x_factors', offset(at.x.scale, words), [`x_scale${words}a${tag}`, `x_scale${words}b${tag}`]), // prettier-ignore
  );
  const sums = [0, 16].map((j) =>
    [0, 4].map(
      (sub) =>
      s.loadVector('x_factors', offset(at.x.sum, j + sub), [`x_sum${j + sub}a${tag}`, `x_sum${j + sub}b${tag}`]), // prettier-ignore
    ),
  );
  rows.forEach(({ total, live }, r) => {
    const data = { ...w[r]!, x, scales, sums };
    const addRow = (inside: RowsBuilder) => blockChunks(inside, `${r}${tag}`, data, shift, total);
    s.if(inRow === undefined ? live : and(live, inRow), addRow);
  });
}

interface ChunkData {
  readonly head: readonly Var<'u32'>[];
  /** The lane's qs chunks c and c + 4, 4 words each. */
  readonly qs: readonly (readonly Var<'u32'>[])[];
  /** x[chunk][sub-block][0: x_high, 1: x_low] words. */
  readonly x: readonly (readonly (readonly (readonly Var<'u32'>[])[])[])[];
  /** x scales of each chunk's two sub-blocks, and their sums of 8 (two a sub-block). */
  readonly scales: readonly (readonly Var<'f32'>[])[];
  readonly sums: readonly (readonly (readonly Var<'f32'>[])[])[];
}

/** Adds the lane's two qs chunks of one row (16 values of each of 4 sub-blocks) into total. */
function blockChunks(
  b: RowsBuilder,
  tag: string,
  { head, qs, x, scales, sums }: ChunkData,
  shift: Var<'u32'>,
  total: Var<'f32'>,
): void {
  const [h0, h1, h2, h3] = head as [Var<'u32'>, Var<'u32'>, Var<'u32'>, Var<'u32'>];
  const name = (base: string) => `${base}${tag}`;
  const d = b.let(name('d'), unpackHalf(h0, 0));
  const dmin = b.let(name('dmin'), neg(unpackHalf(h0, 1)));
  const [s1, s2, s3] = [h1, h2, h3].map((word, i) => b.let(name(`s${i + 1}_`), shr(word, shift)));
  const tops = (word: Expr<'u32'>) => and(shr(word, 2), 0x3030);
  // Byte 0 holds the chunk's first sub-block's 6-bit scale (min), byte 1 the second's; scales are
  // i32: they multiply dot sums.
  const chunkFactors = [
    {
      scales: b.let(name('scales_low'), bitcast('i32', and(s1!, 0x3f3f))),
      mins: b.let(name('mins_low'), and(s2!, 0x3f3f)),
    },
    {
      scales: b.let(name('scales_high'), bitcast('i32', bitSelect(0x0f0f, s3!, tops(s1!)))),
      mins: b.let(name('mins_high'), bitSelect(0x0f0f, shr(s3!, 4), tops(s2!))),
    },
  ];
  const terms = chunkFactors.map(({ scales: scaleBytes, mins }, j) => {
    const dots = [0, 1].map((sub) => {
      const [xh, xl] = x[j]![sub]! as [readonly Var<'u32'>[], readonly Var<'u32'>[]];
      let high: Expr<'i32'> | undefined;
      let low: Expr<'i32'> | undefined;
      qs[j]!.forEach((word, i) => {
        const q = b.let(
          name(`q${j}${sub}_${i}_`),
          and(sub === 0 ? word : shr(word, 4), 0x0f0f0f0f),
        );
        high = b.let(name(`dot_h${j}${sub}_${i}_`), dot4I8(q, xh[i]!, high ?? 0));
        low = b.let(name(`dot_l${j}${sub}_${i}_`), dot4I8(q, xl[i]!, low ?? 0));
      });
      return add(mul(high!, 256), low!);
    });
    const weighted = (scale: Expr<'i32'>, dot: Expr<'i32'>) => convert('f32', mul(scale, dot));
    const [scaleA, scaleB] = scales[j] as [Var<'f32'>, Var<'f32'>];
    const [sumA, sumB] = sums[j] as [readonly Var<'f32'>[], readonly Var<'f32'>[]];
    return {
      quants: fma(
        weighted(shr(scaleBytes, 8), dots[1]!),
        scaleB,
        mul(weighted(and(scaleBytes, 255), dots[0]!), scaleA),
      ),
      offsets: fma(
        convert('f32', shr(mins, 8)),
        add(sumB[0]!, sumB[1]!),
        mul(convert('f32', and(mins, 255)), add(sumA[0]!, sumA[1]!)),
      ),
    };
  });
  // A chunk at a time into total: the fma nesting WGSL devices and the interpreter round alike.
  for (const { quants, offsets } of terms)
    b.assign(total, fma(d, quants, fma(dmin, offsets, total)));
}

/** Catalog kernel `q4k-gemv` (`n_in` a multiple of 256). */
export const q4kGemv = rowsGemvKernel(
  { id: 'q4k-gemv', semanticVersion: 3, type: 'q4_K', row },
  'in native GGUF Q4_K blocks',
  { offsetHeadroom: 4 * SECTOR_WORDS, generateWeights: randomQ4kWords },
);

/** Catalog kernel `q4k-swiglu-gemv`: y = silu(W x) · (W_up x), both Q4_K (`n_in` a multiple of 256). */
export const q4kSwigluGemv = rowsGemvKernel(
  { id: 'q4k-swiglu-gemv', semanticVersion: 1, type: 'q4_K', row },
  'in native GGUF Q4_K blocks',
  { offsetHeadroom: 4 * SECTOR_WORDS, generateWeights: randomQ4kWords, gated: true },
);
