import type { Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { abs, add, bitcast, div, fma, gt, max, mul } from '../expressions.js';
import { bitSelect, select, shl, shr, xor } from '../expressions.js';
import type { RowsBuilder } from './gemv-rows.js';

/** Values sharing one scale: a Q8_0 block, a Q4_K sub-block, two Q6_K sub-blocks. */
export const X_GROUP = 32;
/** |v| ≤ X_RANGE keeps h = (v + 128) >> 8 in int8: (±32639 + 128) >> 8 is 127 or -127. */
export const X_RANGE = 32639;
/** 1.5 · 2^23 + 128 (0x4B400080): adding it rounds to an integer held in the low 16 bits. */
export const ROUNDING = 12583040;

/** A quantized 32-value group's scale and its 4 sums of 8 (its words go to `onWords`). */
export interface QuantizedGroup {
  readonly scale: Var<'f32'>;
  readonly sums: readonly Var<'f32'>[];
}

/** Anything that loads x and declares locals: a gemv body, or a stage with an `x` buffer. */
type XBuilder = Pick<RowsBuilder, 'let' | 'loadVector'>;

/**
 * Quantizes the 32 values x[xBase, xBase + 32): s = max|x| / 32639, v = round(x / s), h = (v + 128)
 * >> 8 and l = v - 256·h as int8 bytes (word k holds values 4k..4k+3, byte i value 4k + i; l with
 * its top bit flipped back), and the f32 sum of each 8 values. So Σ q·x over the group is s·(256·Σ
 * q·h + Σ q·l) up to s/2 per value. A non-finite x makes the scale NaN, so y is NaN as the exact
 * product would be. `beforeWords` runs once the scale is known; word k's x_high and x_low go to
 * `onWords` as soon as they are computed.
 */
export function quantizeXGroup(
  q: XBuilder,
  xBase: Expr<'u32'>,
  hooks: {
    readonly beforeWords?: () => void;
    readonly onWords: (k: number, high: Expr<'u32'>, low: Expr<'u32'>) => void;
  },
): QuantizedGroup {
  const words = Array.from({ length: X_GROUP / 4 }, (_, k) =>
    q.loadVector('x', add(xBase, 4 * k), [`xq${k}_0`, `xq${k}_1`, `xq${k}_2`, `xq${k}_3`]),
  );
  const values = words.flat();
  const largest = values.slice(1).reduce<Expr<'f32'>>((m, x) => max(m, abs(x)), abs(values[0]!));
  const sums = [0, 1, 2, 3].map((j) => {
    const eight = values.slice(8 * j, 8 * j + 8);
    const sum = eight.slice(1).reduce<Expr<'f32'>>((total, x) => add(total, x), eight[0]!);
    return q.let(`x_sum${j}`, sum);
  });
  const { amax, groupSum } = q.let({
    amax: largest,
    groupSum: add(add(sums[0]!, sums[1]!), add(sums[2]!, sums[3]!)),
  });
  const { scale, inverse } = scaleOf(q, amax, groupSum);
  hooks.beforeWords?.();
  words.forEach((four, k) => {
    const { high, low } = quantizedWord(q, `x_bits${k}`, four, inverse);
    hooks.onWords(k, high, low);
  });
  return { scale, sums };
}

/**
 * A group's scale s = amax / X_RANGE and 1 / s (0 for an all-zero group), declared `scale`,
 * `inverse` (after `prefix`).
 */
function scaleOf(
  q: Pick<XBuilder, 'let'>,
  amax: Var<'f32'>,
  groupSum: Var<'f32'>,
  prefix = '',
): { readonly scale: Var<'f32'>; readonly inverse: Var<'f32'> } {
  // groupSum · 0 is NaN exactly when some x of the group is not finite (or the sum overflows).
  return {
    scale: q.let(`${prefix}scale`, add(div(amax, X_RANGE), mul(groupSum, 0))),
    inverse: q.let(`${prefix}inverse`, select(gt(amax, 0), div(X_RANGE, amax), 0)),
  };
}

/** The x_high and x_low words of 4 values at 1 / s = `inverse` (their bits declared as `<tag>_i`). */
function quantizedWord(
  q: Pick<XBuilder, 'let'>,
  tag: string,
  four: readonly Expr<'f32'>[],
  inverse: Expr<'f32'>,
): { readonly high: Expr<'u32'>; readonly low: Expr<'u32'> } {
  // x / s + ROUNDING lies in [2^23, 2^24), where f32 steps by 1: the addition rounds x / s to
  // the nearest integer v, and the float's low 16 bits are u = v + 128 as an int16, so that h
  // = u >> 8 is its high byte as it stands and l = (u & 255) - 128 its low byte, top bit flipped.
  const bits = four.map((x, i) => q.let(`${tag}_${i}`, bitcast('u32', fma(x, inverse, ROUNDING))));
  const [b0, b1, b2, b3] = bits as [Var<'u32'>, Var<'u32'>, Var<'u32'>, Var<'u32'>];
  // Byte i of each word from u_i moved into place: pairs of bytes, then the two halves.
  const high = bitSelect(
    0xffff0000,
    bitSelect(0xff000000, shl(b3, 16), shl(b2, 8)),
    bitSelect(0xff00, b1, shr(b0, 8)),
  );
  const low = bitSelect(
    0xffff0000,
    bitSelect(0xff000000, shl(b3, 24), shl(b2, 16)),
    bitSelect(0xff00, shl(b1, 8), b0),
  );
  return { high, low: xor(low, 0x80808080) };
}

/** A builder that declares locals and shuffles across the warp. */
type LaneBuilder = Pick<RowsBuilder, 'let' | 'shuffle'>;

/**
 * quantizeXGroup spread over 4 consecutive lanes, 8 values each (`values`, the group's values
 * 8·part..8·part + 7 for the lane's `part`): the largest |x| and the group sum meet by two xor
 * shuffles, so every lane gets the group's scale; the lane's sum of 8 is summed in quantizeXGroup's
 * order, and its words are words 2·part and 2·part + 1 of the group, bit for bit. All 32 lanes run it.
 * Its locals' names start with `prefix` (none by default), for a body that has those names already.
 */
export function quantizeXQuarter(
  q: LaneBuilder,
  values: readonly Expr<'f32'>[],
  prefix = '',
): {
  readonly scale: Var<'f32'>;
  readonly sum: Var<'f32'>;
  readonly words: readonly { readonly high: Var<'u32'>; readonly low: Var<'u32'> }[];
} {
  const largest = values.slice(1).reduce<Expr<'f32'>>((m, x) => max(m, abs(x)), abs(values[0]!));
  const sum = values.slice(1).reduce<Expr<'f32'>>((total, x) => add(total, x), values[0]!);
  const named = (name: string): string => `${prefix}${name}`;
  const laneMost = q.let(named('lane_most'), largest);
  const laneSum = q.let(named('lane_sum'), sum);
  const most1 = q.shuffle('xor', named('most_1'), laneMost, 1);
  const pairMost = q.let(named('pair_most'), max(laneMost, most1));
  const sum1 = q.shuffle('xor', named('sum_1'), laneSum, 1);
  const pairSum = q.let(named('pair_sum'), add(laneSum, sum1));
  // Both shuffles before both lets, the order every golden was built in.
  const most2 = q.shuffle('xor', named('most_2'), pairMost, 2);
  const sum2 = q.shuffle('xor', named('sum_2'), pairSum, 2);
  const amax = q.let(named('amax'), max(pairMost, most2));
  const groupSum = q.let(named('group_sum'), add(pairSum, sum2));
  const { scale, inverse } = scaleOf(q, amax, groupSum, prefix);
  const words = [0, 1].map((k) => {
    const four = values.slice(4 * k, 4 * k + 4);
    const { high, low } = quantizedWord(q, named(`x_bits${k}`), four, inverse);
    return { high: q.let(named(`x_high${k}`), high), low: q.let(named(`x_low${k}`), low) };
  });
  return { scale, sum: laneSum, words };
}
