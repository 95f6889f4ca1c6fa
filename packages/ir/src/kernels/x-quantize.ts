import type { Expr } from '../body.js';
import type { BodyBuilder } from '../builder.js';
import type { Local, Value } from '../expression-methods.js';
import { bitSelect, div, fluent, fma, select } from '../expressions.js';
import type { RowsBuilder } from './gemv-rows.js';
import { four } from './locals.js';
import { hints, fourAt } from './tuples.js';
import type { Four } from './tuples.js';

/** Values sharing one scale: a Q8_0 block, a Q4_K sub-block, two Q6_K sub-blocks. */
export const X_GROUP = 32;
/** |v| ≤ X_RANGE keeps h = (v + 128) >> 8 in int8: (±32639 + 128) >> 8 is 127 or -127. */
export const X_RANGE = 32639;
/** 1.5 · 2^23 + 128 (0x4B400080): adding it rounds to an integer held in the low 16 bits. */
export const ROUNDING = 12583040;

/** Any builder's `let` and `shuffle` (neither depends on the kernel's declarations). */
type LaneBuilder = Pick<BodyBuilder, 'let' | 'shuffle'>;
type F32 = Expr<'f32'>;

const largestAbs = (values: readonly Value<'f32'>[]) => values.map((x) => x.abs()).reduce((m, x) => m.max(x)); // prettier-ignore
const sumOf = (values: readonly Value<'f32'>[]) => values.reduce((total, x) => total.add(x));

/**
 * Quantizes the 32 values x[xBase, xBase + 32): s = max|x| / 32639, v = round(x / s), h = (v + 128)
 * >> 8 and l = v - 256·h as int8 bytes (word k holds values 4k..4k+3, byte i value 4k + i; l with
 * its top bit flipped back), and the f32 sum of each 8 values. So Σ q·x over the group is s·(256·Σ
 * q·h + Σ q·l) up to s/2 per value. A non-finite x makes the scale NaN, so y is NaN as the exact
 * product would be. Returns the scale, the 4 sums and the x_high and x_low words, 4 a store.
 */
export function quantizeXGroup(b: RowsBuilder, xBase: Value<'u32'>) {
  const loads = Array.from({ length: X_GROUP / 4 }, (_, k) =>
    b.loadVector('x', xBase.add(4 * k), hints('xq')),
  );
  const values: readonly Value<'f32'>[] = loads.flat();
  const sums = four((j) => b.let('x_sum', sumOf(values.slice(8 * j, 8 * j + 8))));
  const [s0, s1, s2, s3] = sums;
  const { amax, groupSum } = b.let({ amax: largestAbs(values), groupSum: s0.add(s1).add(s2.add(s3)) }); // prettier-ignore
  const { inverse, scale } = scaleOf(b, amax, groupSum);
  const words = loads.map((x) => {
    const { high, low } = quantizedWord(b, hints('x_bits'), x, inverse);
    return { high: b.let('x_high', high), low: b.let('x_low', low) };
  });
  const [high, low] = [words.map((w) => w.high), words.map((w) => w.low)];
  return { scale, sums, stores: [fourAt(high), fourAt(high, 4), fourAt(low), fourAt(low, 4)] };
}

/** A group's scale s = amax / X_RANGE and 1 / s (0 for an all-zero group). */
function scaleOf(b: LaneBuilder, amax: Local<'f32'>, groupSum: Local<'f32'>, prefix = '') {
  // groupSum · 0 is NaN exactly when some x of the group is not finite (or the sum overflows).
  return {
    scale: b.let(`${prefix}scale`, amax.div(X_RANGE).add(groupSum.mul(0))),
    inverse: b.let(`${prefix}inverse`, select(amax.gt(0), div(X_RANGE, amax), 0)),
  };
}

/** The x_high and x_low words of 4 values at 1 / s = `inverse` (their bits declared as `names`). */
function quantizedWord(b: LaneBuilder, names: Four<string>, x: Four<F32>, inverse: F32) {
  // x / s + ROUNDING lies in [2^23, 2^24), where f32 steps by 1: the addition rounds x / s to
  // the nearest integer v, and the float's low 16 bits are u = v + 128 as an int16, so that h
  // = u >> 8 is its high byte as it stands and l = (u & 255) - 128 its low byte, top bit flipped.
  const [u0, u1, u2, u3] = four((i) => b.let(names[i], fma(x[i], inverse, ROUNDING).bitcast('u32'))); // prettier-ignore
  // Byte i of each word from u_i moved into place: pairs of bytes, then the two halves.
  const high = bitSelect(0xffff0000, bitSelect(0xff000000, u3.shl(16), u2.shl(8)), bitSelect(0xff00, u1, u0.shr(8))); // prettier-ignore
  const low = bitSelect(0xffff0000, bitSelect(0xff000000, u3.shl(24), u2.shl(16)), bitSelect(0xff00, u1.shl(8), u0)); // prettier-ignore
  return { high, low: low.xor(0x80808080) };
}

/**
 * quantizeXGroup spread over 4 consecutive lanes, 8 values each (`values`, the group's values
 * 8·part..8·part + 7 for the lane's `part`): the largest |x| and the group sum meet by two xor
 * shuffles, so every lane gets the group's scale; the lane's sum of 8 is summed in quantizeXGroup's
 * order, and its words are words 2·part and 2·part + 1 of the group, bit for bit. All 32 lanes run
 * it. Its locals' names start with `prefix`: its callers (rmsnorm, sdpa-combine) keep their names.
 */
export function quantizeXQuarter(b: LaneBuilder, values: readonly Expr<'f32'>[], prefix = '') {
  const named = (name: string): string => `${prefix}${name}`;
  const xs = values.map((x) => fluent(x));
  const laneMost = b.let(named('lane_most'), largestAbs(xs));
  const laneSum = b.let(named('lane_sum'), sumOf(xs));
  const most1 = b.shuffle('xor', named('most_1'), laneMost, 1);
  const pairMost = b.let(named('pair_most'), laneMost.max(most1));
  const sum1 = b.shuffle('xor', named('sum_1'), laneSum, 1);
  const pairSum = b.let(named('pair_sum'), laneSum.add(sum1));
  // Both shuffles before both lets, the order every golden was built in.
  const most2 = b.shuffle('xor', named('most_2'), pairMost, 2);
  const sum2 = b.shuffle('xor', named('sum_2'), pairSum, 2);
  const amax = b.let(named('amax'), pairMost.max(most2));
  const groupSum = b.let(named('group_sum'), pairSum.add(sum2));
  const { scale, inverse } = scaleOf(b, amax, groupSum, prefix);
  const words = [0, 1].map((k) => {
    const bits = four((i) => named(`x_bits${k}_${i}`));
    const { high, low } = quantizedWord(b, bits, fourAt(values, 4 * k), inverse);
    return { high: b.let(named(`x_high${k}`), high), low: b.let(named(`x_low${k}`), low) };
  });
  return { scale, sum: laneSum, words };
}
