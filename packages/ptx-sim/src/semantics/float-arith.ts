// f32/f64 add sub mul fma mad div (the half types live in half.ts).
import { signBit } from './float-bits.js';
import { f32Lane, f64Lane } from './float-lanes.js';
import { addRounded, divRounded, fmaRounded, mulRounded } from './float-ops.js';
import { decode, FLOAT_ROUNDINGS, type Decoded } from './modifiers.js';
import { F32, F64, type Rounding } from './rounding.js';
import type { AluOp } from './types.js';

type FloatType = 'f32' | 'f64';

/** Options shared by the f32 forms: .ftz and .sat are f32-only. */
function f32Only(d: Decoded, type: FloatType): { ftz: boolean; sat: boolean } {
  const ftz = d.has('ftz');
  const sat = d.has('sat');
  if (type === 'f64' && (ftz || sat)) d.fail('.ftz/.sat on .f64');
  return { ftz, sat };
}

/** add/sub/mul: rounding defaults to .rn. */
function decodeBinary(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, [...FLOAT_ROUNDINGS, 'ftz', 'sat']);
  const type = d.type(['f32', 'f64'] as const);
  const mode = d.rounding(FLOAT_ROUNDINGS, 'rn') as Rounding;
  const fmt = type === 'f32' ? F32 : F64;
  const compute =
    opcode === 'mul'
      ? (a: number, b: number) => mulRounded(a, b, fmt, mode)
      : opcode === 'add'
        ? (a: number, b: number) => addRounded(a, b, fmt, mode)
        : (a: number, b: number) => addRounded(a, -b, fmt, mode);
  const options = f32Only(d, type);
  return type === 'f32'
    ? f32Lane(opcode, 2, compute, options)
    : f64Lane(opcode, 2, compute, options);
}

/** fma/mad: one rounding of a·b + c; mad without rounding (sm_1x syntax) is fma.rn per the ISA. */
function decodeFma(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, [...FLOAT_ROUNDINGS, 'ftz', 'sat']);
  const type = d.type(['f32', 'f64'] as const);
  const mode = d.rounding(FLOAT_ROUNDINGS, 'rn') as Rounding;
  const fmt = type === 'f32' ? F32 : F64;
  const compute = (a: number, b: number, c: number): number => fmaRounded(a, b, c, fmt, mode);
  const options = f32Only(d, type);
  return type === 'f32'
    ? f32Lane(opcode, 3, compute, options)
    : f64Lane(opcode, 3, compute, options);
}

/**
 * div: IEEE with a rounding modifier; .approx and .full (f32) are computed correctly rounded,
 * which is within their 2-ulp bound — except that .approx keeps the ISA's documented result for
 * 2^126 < |b| < 2^128 (it computes a · (1/b)): NaN for infinite a, else a signed zero.
 */
function decodeDiv(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, [...FLOAT_ROUNDINGS, 'ftz', 'approx', 'full']);
  const type = d.type(['f32', 'f64'] as const);
  const approx = d.has('approx');
  const full = d.has('full');
  const { ftz } = f32Only(d, type);
  if (approx || full) {
    if (type !== 'f32' || (approx && full)) d.fail('.approx/.full need .f32 alone');
    if (d.rounding(FLOAT_ROUNDINGS) !== undefined) d.fail('rounding with .approx/.full');
    const compute = (a: number, b: number): number => {
      const magnitude = Math.abs(b);
      if (approx && magnitude > 2 ** 126 && magnitude < Infinity) {
        return Number.isFinite(a) ? (signBit(a) !== signBit(b) ? -0 : 0) : NaN;
      }
      return divRounded(a, b, F32, 'rn');
    };
    return f32Lane(opcode, 2, compute, { ftz });
  }
  const mode = d.rounding(FLOAT_ROUNDINGS);
  if (mode === undefined) d.fail('div needs .approx, .full or a rounding modifier');
  const rounding = mode as Rounding;
  if (type === 'f32') {
    return f32Lane(opcode, 2, (a, b) => divRounded(a, b, F32, rounding), { ftz });
  }
  return f64Lane(opcode, 2, (a, b) => divRounded(a, b, F64, rounding));
}

export const FLOAT_ARITH_DECODERS: ReadonlyMap<
  string,
  (opcode: string, modifiers: readonly string[]) => AluOp
> = new Map([
  ['add', decodeBinary],
  ['sub', decodeBinary],
  ['mul', decodeBinary],
  ['fma', decodeFma],
  ['mad', decodeFma],
  ['div', decodeDiv],
]);
