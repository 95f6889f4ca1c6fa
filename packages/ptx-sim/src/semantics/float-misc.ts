// f32/f64 neg abs min max copysign testp sqrt rsqrt rcp ex2 lg2 sin cos tanh.
//
// The .approx instructions are computed in double and rounded once to f32 (nearest): that result
// is within every error bound the ISA states for them, so kernels relying only on the documented
// accuracy see the same behaviour as on hardware.
import { f32FromBits, f64FromBits, f64ToBits, signBit } from './float-bits.js';
import { f32Lane, f64Lane, f64Result } from './float-lanes.js';
import { divRounded, sqrtRounded } from './float-ops.js';
import { aluOp, big, decode, FLOAT_ROUNDINGS, num, type Decoded } from './modifiers.js';
import { F32, F64, flushSubnormal, type Rounding } from './rounding.js';
import type { AluOp, Bits } from './types.js';

const F32_SIGN = 0x80000000;
const F64_SIGN = 0x8000000000000000n;

/** f32 bits with a subnormal flushed to a zero of the same sign. */
const flushBits = (bits: number): number =>
  ((bits & 0x7f800000) === 0 ? bits & F32_SIGN : bits) >>> 0;

function decodeNegAbs(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['ftz']);
  const type = d.type(['f32', 'f64'] as const);
  const ftz = d.has('ftz');
  const negate = opcode === 'neg';
  if (type === 'f64') {
    if (ftz) d.fail('.ftz on .f64');
    return aluOp(opcode, [type], [type], ([a]) => [
      negate ? big(a) ^ F64_SIGN : big(a) & ~F64_SIGN,
    ]);
  }
  return aluOp(opcode, [type], [type], ([a]) => {
    const bits = ftz ? flushBits(num(a)) : num(a);
    return [(negate ? bits ^ F32_SIGN : bits & ~F32_SIGN) >>> 0];
  });
}

/** min/max per the ISA: a NaN operand yields the other (both NaN, or .NaN with any: NaN); −0 < +0. */
export function minMax(max: boolean, propagateNaN: boolean, x: number, y: number): number {
  if (x !== x || y !== y) return propagateNaN || (x !== x && y !== y) ? NaN : x !== x ? y : x;
  if (x === y && x === 0) return signBit(x) === max ? y : x;
  return max ? (x > y ? x : y) : x < y ? x : y;
}

function decodeMinMax(opcode: string, modifiers: readonly string[], operandCount: number): AluOp {
  const d = decode(opcode, modifiers, ['ftz', 'NaN', 'nan', 'xorsign', 'abs']);
  const type = d.type(['f32', 'f64'] as const);
  const max = opcode === 'max';
  const propagateNaN = d.has('NaN') || d.has('nan');
  const abs = d.has('abs');
  const xorsign = d.has('xorsign');
  const three = operandCount === 4;
  if (xorsign && (!abs || three)) d.fail('.xorsign needs .abs and two inputs');
  if (type === 'f64') {
    if (d.words.size > 0 || three) d.fail('modifiers on .f64');
    return f64Lane(opcode, 2, (a, b) => minMax(max, false, a, b));
  }
  return f32Lane(
    opcode,
    three ? 3 : 2,
    (a, b, c) => {
      const pick = (x: number, y: number): number => minMax(max, propagateNaN, x, y);
      let result = abs ? pick(Math.abs(a), Math.abs(b)) : pick(a, b);
      if (three) result = pick(result, abs ? Math.abs(c) : c);
      if (xorsign && result === result)
        result = signBit(a) !== signBit(b) ? -Math.abs(result) : Math.abs(result);
      return result;
    },
    { ftz: d.has('ftz') },
  );
}

function decodeCopysign(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(['f32', 'f64'] as const);
  if (type === 'f64') {
    return aluOp(opcode, [type, type], [type], ([a, b]) => [
      (big(b) & ~F64_SIGN) | (big(a) & F64_SIGN),
    ]);
  }
  return aluOp(opcode, [type, type], [type], ([a, b]) => [
    ((num(b) & ~F32_SIGN) | (num(a) & F32_SIGN)) >>> 0,
  ]);
}

const TESTP_OPS = ['finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal'];

/** testp: zeros count as normal, as the ISA says. */
function decodeTestp(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, TESTP_OPS);
  const type = d.type(['f32', 'f64'] as const);
  const ops = TESTP_OPS.filter((op) => d.has(op));
  if (ops.length !== 1) d.fail('expected one property');
  const minNormal = type === 'f32' ? F32.minNormal : F64.minNormal;
  const test: (x: number) => boolean = {
    finite: (x: number) => Number.isFinite(x),
    infinite: (x: number) => x === Infinity || x === -Infinity,
    number: (x: number) => x === x,
    notanumber: (x: number) => x !== x,
    normal: (x: number) => Number.isFinite(x) && (x === 0 || Math.abs(x) >= minNormal),
    subnormal: (x: number) => x !== 0 && Math.abs(x) < minNormal,
  }[ops[0] as string] as (x: number) => boolean;
  const read =
    type === 'f32'
      ? (bits: Bits | undefined) => f32FromBits(num(bits))
      : (bits: Bits | undefined) => f64FromBits(big(bits));
  return aluOp(opcode, [type], ['pred'], ([a]) => [test(read(a)) ? 1 : 0]);
}

/** The ISA's "gross" f64 approximations: computed on the upper word, low 32 result bits zero. */
function grossF64(compute: (x: number) => number): (bits: bigint) => bigint {
  return (bits) => {
    const upper = bits & 0xffffffff00000000n;
    let x = f64FromBits(upper);
    if (x !== x) return 0x7fffffff00000000n;
    x = flushSubnormal(x, F64);
    const result = flushSubnormal(compute(x), F64);
    return f64ToBits(result) & 0xffffffff00000000n;
  };
}

/** sqrt, rsqrt, rcp, ex2, lg2, sin, cos, tanh. */
function decodeUnary(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, [...FLOAT_ROUNDINGS, 'approx', 'ftz', 'full']);
  const type = d.type(['f32', 'f64'] as const);
  const approx = d.has('approx');
  const ftz = d.has('ftz');
  const mode = d.rounding(FLOAT_ROUNDINGS) as Rounding | undefined;
  if (approx === (mode !== undefined) || d.has('full'))
    d.fail('expected exactly one of .approx or a rounding');
  const ieee = opcode === 'sqrt' || opcode === 'rcp';
  if (mode !== undefined) {
    if (!ieee) d.fail(`rounding on ${opcode}`);
    if (type === 'f64' && ftz) d.fail('.ftz on .f64');
    const fmt = type === 'f32' ? F32 : F64;
    const compute =
      opcode === 'sqrt'
        ? (a: number) => sqrtRounded(a, fmt, mode)
        : (a: number) => divRounded(1, a, fmt, mode);
    return type === 'f32' ? f32Lane(opcode, 1, compute, { ftz }) : f64Lane(opcode, 1, compute);
  }
  const fn = approxFunction(opcode, d);
  if (type === 'f64') {
    if ((opcode === 'rcp' || opcode === 'rsqrt') && ftz) {
      const gross = grossF64(fn);
      return aluOp(opcode, [type], [type], ([a]) => [gross(big(a))]);
    }
    if (opcode !== 'rsqrt' || ftz) d.fail(`.approx.f64 for ${opcode}`);
    return aluOp(opcode, [type], [type], ([a]) => [f64Result(fn(f64FromBits(big(a))), [a ?? 0n])]);
  }
  if (opcode === 'tanh' && ftz) d.fail('.ftz on tanh');
  return f32Lane(opcode, 1, (a) => Math.fround(fn(a)), { ftz });
}

function approxFunction(opcode: string, d: Decoded): (x: number) => number {
  switch (opcode) {
    case 'sqrt':
      return Math.sqrt;
    case 'rsqrt':
      return (x) => 1 / Math.sqrt(x);
    case 'rcp':
      return (x) => 1 / x;
    case 'ex2':
      return (x) => 2 ** x;
    case 'lg2':
      return Math.log2;
    case 'sin':
      return Math.sin;
    case 'cos':
      return Math.cos;
    case 'tanh':
      return Math.tanh;
    default:
      return d.fail('not an approximate function');
  }
}

type MiscDecoder = (opcode: string, modifiers: readonly string[], operandCount: number) => AluOp;

export const FLOAT_MISC_DECODERS: ReadonlyMap<string, MiscDecoder> = new Map<string, MiscDecoder>([
  ['neg', decodeNegAbs],
  ['abs', decodeNegAbs],
  ['min', decodeMinMax],
  ['max', decodeMinMax],
  ['copysign', decodeCopysign],
  ['testp', decodeTestp],
  ['sqrt', decodeUnary],
  ['rsqrt', decodeUnary],
  ['rcp', decodeUnary],
  ['ex2', decodeUnary],
  ['lg2', decodeUnary],
  ['sin', decodeUnary],
  ['cos', decodeUnary],
  ['tanh', decodeUnary],
]);
