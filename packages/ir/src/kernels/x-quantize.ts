import type { Expr, VarExpr as Var } from '../body.js';
import { abs, add, bitcast, div, fma, gt, max, mul } from '../expressions.js';
import { bitSelect, select, shl, shr, xor } from '../expressions.js';
import type { GemvBuilder } from './gemv-interface.js';

/** x values a workgroup quantizes into shared memory at a time (a multiple of every block size). */
export const X_TILE = 4096;
/** Values sharing one scale: a Q8_0 block, a Q4_K sub-block, two Q6_K sub-blocks. */
export const X_GROUP = 32;
/** |v| ≤ X_RANGE keeps h = (v + 128) >> 8 in int8: (±32639 + 128) >> 8 is 127 or -127. */
const X_RANGE = 32639;
/** 1.5 · 2^23 + 128 (0x4B400080): adding it rounds to an integer held in the low 16 bits. */
const ROUNDING = 12583040;

/**
 * Quantizes x[tileStart, tileStart + tileValues) into the shared tile, one 32-value group a thread:
 * s = max|x| / 32639, v = round(x / s), h = (v + 128) >> 8 and l = v - 256·h as int8 bytes (x_high,
 * x_low: word k of group g holds values 4k..4k+3 of it, byte i value 4k + i), s in x_scale[g] and the
 * f32 sum of each 8 values in x_sum. So Σ q·x over a group is s·(256·Σ q·h + Σ q·l) up to s/2 per
 * value. A non-finite x makes its group's scale NaN, so y is NaN as the exact product would be.
 */
export function quantizeXTile(b: GemvBuilder, tileStart: Var<'u32'>, tileValues: Var<'u32'>): void {
  const range = { start: b.localId(), end: div(tileValues, X_GROUP), step: b.workgroupSize() };
  b.for('x_group', range, (q, group) => {
    const { xBase } = q.let({ xBase: add(tileStart, mul(group, X_GROUP)) });
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
    // groupSum · 0 is NaN exactly when some x is not finite (or the sum overflows).
    const { scale, inverse } = q.let({
      scale: add(div(amax, X_RANGE), mul(groupSum, 0)),
      inverse: select(gt(amax, 0), div(X_RANGE, amax), 0),
    });
    // Indices off let-bound bases, so the renderer computes each array's address once.
    const { xHighWord: firstWord, xSumWord: firstSum } = q.let({
      xHighWord: mul(group, 8),
      xSumWord: mul(group, 4),
    });
    words.forEach((four, k) => {
      // x / s + ROUNDING lies in [2^23, 2^24), where f32 steps by 1: the addition rounds x / s to
      // the nearest integer v, and the float's low 16 bits are u = v + 128 as an int16, so that h
      // = u >> 8 is its high byte as it stands and l = (u & 255) - 128 its low byte, top bit flipped.
      const bits = four.map((x, i) =>
        q.let(`x_bits${k}_${i}`, bitcast('u32', fma(x, inverse, ROUNDING))),
      );
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
      q.store('x_high', k === 0 ? firstWord : add(firstWord, k), high);
      q.store('x_low', k === 0 ? firstWord : add(firstWord, k), xor(low, 0x80808080));
    });
    q.store('x_scale', group, scale);
    sums.forEach((sum, j) => q.store('x_sum', j === 0 ? firstSum : add(firstSum, j), sum));
  });
}
