import { type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import {
  add,
  and,
  bitSelect,
  convert,
  dot4I8,
  fma,
  mul,
  shl,
  shr,
  u32,
  unpackHalf,
} from '../expressions.js';
import type { RowsBuilder } from './gemv-rows.js';
import { X_QUANT_GROUP_WORDS } from './gemv-rows.js';
import { four, vectorNames } from './locals.js';

// Q6_K's value math shared by the native and the repacked row-streaming mat-vecs: a lane's 64
// values of a block (16 of each group j of its half), met with quantized x in int8 dot products.

/** A value byte: the ql nibble at bits 0-3 (these), the 2-bit qh part at bits 4-5, bits 6-7 zero. */
const NIBBLES = 0x0f0f0f0f;
/** The qh parts of j = 0, 2 (bits 0-1, 4-5 of each byte) and of j = 1, 3 (bits 2-3, 6-7). */
const [EVEN_PARTS, ODD_PARTS] = [0x33333333, 0xcccccccc];

/** Words of x a lane loads a step: x_high and x_low of each group j, its scales and sums of 8. */
export interface XWords {
  readonly words: readonly (readonly (readonly Var<'u32'>[])[])[];
  readonly scales: readonly Var<'f32'>[];
  /** −32 · Σ x over the lane's 16 values of each group. */
  readonly offsets: readonly Var<'f32'>[];
}

/** One row's words of a step: ql (j even, j odd), qh, scale words and the d word. */
export interface RowWords {
  readonly low: readonly (readonly Var<'u32'>[])[];
  readonly high: readonly Var<'u32'>[];
  readonly scales: readonly Var<'u32'>[];
  readonly d: Var<'u32'>;
}

/** How a lane picks its scales and its block's d out of the words it loaded. */
export interface ScalePicks {
  /** dot4I8 operands that pick scale byte l0 / 16 (j even) or l0 / 16 + 2 (j odd) of a word. */
  readonly scalePicks: readonly [Var<'u32'>, Var<'u32'>];
  /** Where the block's d sits in its word (bit 0 or 16). */
  readonly dShift: Var<'u32'>;
}

/** x pointers of a lane's step: x_quant word, x_factors scale and sum indices. */
export interface XPointers {
  readonly quant: Var<'u32'>;
  readonly scale: Var<'u32'>;
  readonly sum: Var<'u32'>;
}

/**
 * A lane's x pointers at block 0 for half `half`, l0 = 16·`side` (`sideWords` = 4·side): its values
 * 128n + 32j + l0.. of a block are half of x group 8·block + 4n + j.
 */
export function laneXPointers(
  b: RowsBuilder,
  { half, side, sideWords, sumBase }: Record<'half' | 'side' | 'sideWords' | 'sumBase', Var<'u32'>>,
): XPointers {
  return {
    quant: b.let('lane_quant', add(mul(half, 4 * X_QUANT_GROUP_WORDS), sideWords)),
    scale: b.let('lane_scale', mul(half, 4)),
    sum: b.let('lane_sum', add(sumBase, add(mul(half, 16), mul(side, 2)))),
  };
}

/** ScalePicks' dot4I8 operands for l0 = 16·side (`sideBytes` = 8·side). */
export const scalePicksOf = (b: RowsBuilder, sideBytes: Var<'u32'>): ScalePicks['scalePicks'] => [
  b.let('scale_pick_even', shl(u32(1), sideBytes)),
  b.let('scale_pick_odd', shl(u32(1 << 16), sideBytes)),
];

/** A step's x loads from scratch (L1): each group's x_high and x_low words, scales, sums of 8. */
export function loadX(s: RowsBuilder, x: XPointers) {
  const offset = (base: Var<'u32'>, words: number) => (words === 0 ? base : add(base, words));
  const words = [0, 1, 2, 3].map((j) =>
    [0, 8].map((part) => {
      const name = `x${j}${part === 0 ? 'h' : 'l'}_`;
      return s.loadVector('x_quant', offset(x.quant, j * X_QUANT_GROUP_WORDS + part), vectorNames(name)); // prettier-ignore
    }),
  );
  const scales = s.loadVector('x_factors', x.scale, vectorNames('x_scale'));
  const sums = [0, 1, 2, 3].map((j) => s.loadVector('x_factors', offset(x.sum, 4 * j), [`x_sum${j}a`, `x_sum${j}b`])); // prettier-ignore
  return { words, scales, sums };
}

/** −32 · Σ x of each group's 16 values, from its two sums of 8. */
export const xOffsets = (s: RowsBuilder, sums: ReturnType<typeof loadX>['sums']) =>
  sums.map(([a, b], j) => s.let(`x_offset${j}`, mul(add(a, b), -32)));

/**
 * The 4 words of value bytes q of group j from ql words `low` (j's nibbles) and qh `parts` of j's
 * parity (the other parity cleared, so nothing shifts into bits 6-7).
 */
export function groupWords(j: number, low: readonly Expr<'u32'>[], parts: readonly Expr<'u32'>[]) {
  // Nibble: ql bits 0-3 (j < 2) or 4-7, to bits 0-3; high part: qh bits 2j, 2j + 1 to bits 4-5.
  const lowPart = (word: Expr<'u32'>) => (j < 2 ? word : shr(word, 4));
  const highPart = (word: Expr<'u32'>) =>
    j === 2 ? word : j === 3 ? shr(word, 2) : shl(word, 4 - 2 * j);
  return four((i) => bitSelect(NIBBLES, lowPart(low[i]!), highPart(parts[i]!)));
}

/** Adds the lane's 64 values of one row (16 of each of 4 sub-blocks) into total. */
export function blockValues(
  b: RowsBuilder,
  tag: string,
  { low, high, scales, d }: RowWords,
  x: XWords,
  { scalePicks, dShift }: ScalePicks,
  total: Var<'f32'>,
): void {
  const name = (base: string) => `${base}${tag}`;
  const parity = (label: string, mask: number) =>
    high.map((word, i) => b.let(name(`${label}${i}_`), and(word, mask)));
  // Groups 0 and 2 take the even parts, then 1 and 3 the odd ones (one parity live at a time).
  let parts: readonly Var<'u32'>[] = [];
  // Group j's sub-block scale and Σ (q − 32)·x, as f32.
  const group = (j: number): readonly [Expr<'f32'>, Var<'f32'>] => {
    if (j === 0 || j === 1) parts = parity(j === 0 ? 'qh_even' : 'qh_odd', j === 0 ? EVEN_PARTS : ODD_PARTS); // prettier-ignore
    const words = groupWords(j, low[j % 2]!, parts).map((word, i) => b.let(name(`q${j}_${i}_`), word)); // prettier-ignore
    const [xHigh, xLow] = x.words[j]! as [readonly Var<'u32'>[], readonly Var<'u32'>[]];
    const sumHigh = words.reduce<Expr<'i32'> | number>((c, word, i) => dot4I8(word, xHigh[i]!, c), 0); // prettier-ignore
    const dotHigh = b.let(name(`dot_high${j}_`), shl(sumHigh as Expr<'i32'>, 8));
    const dot = words.reduce<Expr<'i32'>>((c, word, i) => dot4I8(word, xLow[i]!, c), dotHigh);
    // Σ (q − 32)·x ≈ x scale · Σ q·(256·x_high + x_low) − 32 · Σ x.
    const values = b.let(name(`values${j}_`), fma(x.scales[j]!, convert('f32', dot), x.offsets[j]!)); // prettier-ignore
    return [convert('f32', dot4I8(scales[j >> 1]!, scalePicks[j % 2]!, 0)), values];
  };
  // Group by group into the block's partial, then d: the fma nesting WGSL devices and the
  // interpreter round alike.
  const partial = b.let(name('partial'), mul(...group(0)));
  for (const j of [2, 1, 3]) b.assign(partial, fma(...group(j), partial));
  b.assign(total, fma(unpackHalf(shr(d, dShift), 0), partial, total));
}
