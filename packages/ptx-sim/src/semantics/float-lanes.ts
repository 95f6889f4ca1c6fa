// Lifts numeric f32/f64 functions to AluOps on bit patterns, with .ftz and .sat applied.
import type { PtxType } from '../ast.js';
import { f32FromBits, f32ToBits, f64FromBits, f64ToBits, F64_NAN } from './float-bits.js';
import { aluOp, big, num } from './modifiers.js';
import { F32, flushSubnormal, saturate } from './rounding.js';
import type { AluOp, Bits } from './types.js';

export interface FloatOptions {
  /** Flush f32 subnormal inputs and results to sign-preserving zero. */
  readonly ftz?: boolean;
  /** Clamp the result to [0, 1], NaN to +0. */
  readonly sat?: boolean;
}

const QUIET = 0x0008000000000000n;
const isNaN64 = (bits: bigint): boolean =>
  (bits & 0x7ff0000000000000n) === 0x7ff0000000000000n && (bits & 0xfffffffffffffn) !== 0n;

/** An f64 NaN result propagates the first NaN input (quieted), as the ISA keeps f64 payloads. */
export function f64Result(value: number, inputs: readonly Bits[]): bigint {
  if (value === value) return f64ToBits(value);
  for (const input of inputs) {
    const bits = big(input);
    if (isNaN64(bits)) return bits | QUIET;
  }
  return F64_NAN;
}

/** A numeric lane function of up to three operands (unused ones are 0). */
export type Compute = (a: number, b: number, c: number) => number;

/** An AluOp over f32 operands: sources read as values (flushed under .ftz), result rounded by `compute`. */
export function f32Lane(
  family: string,
  arity: number,
  compute: Compute,
  { ftz = false, sat = false }: FloatOptions = {},
  resultType: PtxType = 'f32',
): AluOp {
  const read = ftz
    ? (bits: Bits | undefined) => flushSubnormal(f32FromBits(num(bits)), F32)
    : (bits: Bits | undefined) => f32FromBits(num(bits));
  const finish = (value: number): number => {
    let result = ftz ? flushSubnormal(value, F32) : value;
    if (sat) result = saturate(result);
    return f32ToBits(result);
  };
  const types = Array.from({ length: arity }, (): PtxType => 'f32');
  return aluOp(family, types, [resultType], ([a, b, c]) => [
    finish(compute(read(a), arity > 1 ? read(b) : 0, arity > 2 ? read(c) : 0)),
  ]);
}

/** An AluOp over f64 operands. */
export function f64Lane(
  family: string,
  arity: number,
  compute: Compute,
  { sat = false }: FloatOptions = {},
): AluOp {
  const types = Array.from({ length: arity }, (): PtxType => 'f64');
  const read = (bits: Bits | undefined): number => f64FromBits(big(bits));
  return aluOp(family, types, ['f64'], (sources) => {
    const [a, b, c] = sources;
    const value = compute(read(a), arity > 1 ? read(b) : 0, arity > 2 ? read(c) : 0);
    return [sat ? f64ToBits(saturate(value)) : f64Result(value, sources)];
  });
}
