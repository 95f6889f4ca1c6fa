import type { Local, Value } from '../expression-methods.js';
import { bitSelect, fma, i32, u32 } from '../expressions.js';
import { X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import type { RowsBuilder } from './gemv-rows.js';
import { four } from './locals.js';
import { hints } from './tuples.js';
import type { Four, Pair } from './tuples.js';

// Q6_K's value math shared by the native and the repacked row-streaming mat-vecs: a lane's 64
// values of a block (16 of each group j of its half), met with quantized x in int8 dot products.

/** A value byte: the ql nibble at bits 0-3 (these), the 2-bit qh part at bits 4-5, bits 6-7 zero. */
const NIBBLES = 0x0f0f0f0f;
/** The qh parts of j = 0, 2 (bits 0-1, 4-5 of each byte) and of j = 1, 3 (bits 2-3, 6-7). */
const [EVEN_PARTS, ODD_PARTS] = [0x33333333, 0xcccccccc];

type Words = Four<Local<'u32'>>;
/** One row's words of a step: ql (j even, j odd), qh, scale words and the d word. */
export interface RowWords {
  readonly low: Pair<Words>;
  readonly high: Words;
  readonly scales: Pair<Local<'u32'>>;
  readonly d: Local<'u32'>;
}

type LaneFields = Record<'half' | 'side' | 'sideWords' | 'sumBase', Local<'u32'>>;
type Picks = { readonly scalePicks: Pair<Local<'u32'>>; readonly dShift: Local<'u32'> };
type F32 = Local<'f32'>;
/** x pointers of a lane's step: x_quant word, x_factors scale and sum indices. */
export type XPointers = Record<'quant' | 'scale' | 'sum', Local<'u32'>>;

/**
 * A lane's x pointers at block 0 for half `half`, l0 = 16·`side` (`sideWords` = 4·side): its values
 * 128n + 32j + l0.. of a block are half of x group 8·block + 4n + j.
 */
export function laneXPointers(b: RowsBuilder, { half, side, sideWords, sumBase }: LaneFields) {
  return {
    quant: b.let('lane_quant', half.mul(4 * X_QUANT_GROUP_WORDS).add(sideWords)),
    scale: b.let('lane_scale', half.mul(4)),
    sum: b.let('lane_sum', sumBase.add(half.mul(16).add(side.mul(2)))),
  };
}

/** dot4I8 operands that pick scale byte l0 / 16 (j even) or l0 / 16 + 2 (j odd) of a word. */
export const scalePicksOf = (b: RowsBuilder, sideBytes: Local<'u32'>): Pair<Local<'u32'>> => [
  b.let('scale_pick_even', u32(1).shl(sideBytes)),
  b.let('scale_pick_odd', u32(1 << 16).shl(sideBytes)),
];

/**
 * A step's x loads from scratch (L1): each group's x_high and x_low words, its scales, and
 * −32 · Σ x of each group's 16 values (from its two sums of 8).
 */
export function loadX(b: RowsBuilder, x: XPointers) {
  const at = (base: Local<'u32'>, words: number) => (words === 0 ? base : base.add(words));
  const words = four((j) => {
    const high = b.loadVector('x_quant', at(x.quant, j * X_QUANT_GROUP_WORDS), hints('x_hi'));
    return [high, b.loadVector('x_quant', at(x.quant, j * X_QUANT_GROUP_WORDS + 8), hints('x_lo'))] as const; // prettier-ignore
  });
  const scales = b.loadVector('x_factors', x.scale, hints('x_scale'));
  const sums = four((j) => b.loadVector('x_factors', at(x.sum, 4 * j), ['x_sum8', 'x_sum8']));
  return { words, scales, offsets: () => four((j) => b.let('x_offset', sums[j][0].add(sums[j][1]).mul(-32))) }; // prettier-ignore
}

/** The x a row's values meet: loadX's words and scales, and its offsets once declared. */
export type XWords = Omit<ReturnType<typeof loadX>, 'offsets'> & { readonly offsets: Four<Local<'f32'>> }; // prettier-ignore

/**
 * The 4 words of value bytes q of group j from ql words `low` (j's nibbles) and qh `parts` of j's
 * parity (the other parity cleared, so nothing shifts into bits 6-7).
 */
function groupWords(j: 0 | 1 | 2 | 3, low: Words, parts: Words) {
  // Nibble: ql bits 0-3 (j < 2) or 4-7, to bits 0-3; high part: qh bits 2j, 2j + 1 to bits 4-5.
  const lowPart = (word: Local<'u32'>) => (j < 2 ? word : word.shr(4));
  const highPart = (word: Local<'u32'>) => (j === 2 ? word : j === 3 ? word.shr(2) : word.shl(4 - 2 * j)); // prettier-ignore
  return four((i) => bitSelect(NIBBLES, lowPart(low[i]), highPart(parts[i])));
}

/** Adds the lane's 64 values of one row (16 of each of 4 sub-blocks) into total. */
export function blockValues(b: RowsBuilder, words: RowWords, x: XWords, picks: Picks, total: F32) {
  const [{ low, high, scales, d }, { scalePicks, dShift }] = [words, picks];
  // Groups 0 and 2 take the even parts, then 1 and 3 the odd ones (one parity live at a time).
  let parts = high;
  // Group j's sub-block scale and Σ (q − 32)·x, as f32.
  const group = (j: 0 | 1 | 2 | 3): readonly [Value<'f32'>, Local<'f32'>] => {
    if (j < 2) parts = four((i) => b.let(j === 0 ? 'qh_even' : 'qh_odd', high[i].and(j === 0 ? EVEN_PARTS : ODD_PARTS))); // prettier-ignore
    const q = groupWords(j, low[j % 2 === 0 ? 0 : 1], parts);
    const words = four((i) => b.let('q', q[i]));
    const [xHigh, xLow] = x.words[j];
    const sumHigh = four((i) => i).reduce<Value<'i32'>>((c, i) => words[i].dot4I8(xHigh[i], c), i32(0)); // prettier-ignore
    const dotHigh = b.let('dot_high', sumHigh.shl(8));
    const dot = four((i) => i).reduce<Value<'i32'>>((c, i) => words[i].dot4I8(xLow[i], c), dotHigh); // prettier-ignore
    // Σ (q − 32)·x ≈ x scale · Σ q·(256·x_high + x_low) − 32 · Σ x.
    const values = b.let('values', fma(x.scales[j], dot.to('f32'), x.offsets[j]));
    return [scales[j < 2 ? 0 : 1].dot4I8(scalePicks[j % 2 === 0 ? 0 : 1], 0).to('f32'), values];
  };
  // Group by group into the block's partial, then d: the fma nesting WGSL devices and the
  // interpreter round alike.
  const [scale0, values0] = group(0);
  const partial = b.let('partial', scale0.mul(values0));
  for (const j of [2, 1, 3] as const) b.assign(partial, fma(...group(j), partial));
  b.assign(total, fma(d.shr(dShift).unpackHalf(0), partial, total));
}

/**
 * The row's steps of 8 blocks, each lane at its block clamped to the row (the last step's lanes
 * past it add nothing): `setup` runs before the loop and returns the step.
 */
export function clampedSteps(
  b: RowsBuilder,
  { blocks, laneBlock }: Record<'blocks' | 'laneBlock', Local<'u32'>>,
  setup: () => (inRow: Local<'bool'>, at: Local<'u32'>) => void,
): void {
  const { block, lastBlock, steps } = b.let({
    block: laneBlock,
    lastBlock: blocks.sub(1),
    steps: blocks.add(7).div(8),
  });
  const step = setup();
  b.for('step', { start: 0, end: steps }, () => {
    const { inRow, at } = b.let({ inRow: block.lt(blocks), at: block.min(lastBlock) });
    step(inRow, at);
    b.assign(block, block.add(8));
  });
}
