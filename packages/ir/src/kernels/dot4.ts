import type { Expr } from '../body.js';
import { add, bitcast, i32, mul, shl, shr } from '../expressions.js';

/** Placeholder for the IR op dot4_i8 until it lands: c + Σ sext(a.byte k)·sext(b.byte k). */
export function dot4I8(a: Expr<'u32'>, b: Expr<'u32'>, c: Expr<'i32'> | number): Expr<'i32'> {
  const byte = (word: Expr<'u32'>, k: number) => shr(bitcast('i32', shl(word, 24 - 8 * k)), 24);
  let sum: Expr<'i32'> = typeof c === 'number' ? i32(c) : c;
  for (let k = 0; k < 4; k++) sum = add(sum, mul(byte(a, k), byte(b, k)));
  return sum;
}
