// Integer arithmetic: add sub mul mad mul24 mad24 sad div rem abs neg min max.
import type { PtxType } from '../ast.js';
import {
  aluOp,
  big,
  decode,
  isSigned,
  num,
  toSigned,
  widthOf,
  wrap,
  type Decoded,
} from './modifiers.js';
import type { AluOp, Bits } from './types.js';

type IntAluType = 'u16' | 'u32' | 'u64' | 's16' | 's32' | 's64';
const INT_ALU_TYPES: readonly IntAluType[] = ['u16', 'u32', 'u64', 's16', 's32', 's64'];
const SIMD_WORDS = ['u16x2', 's16x2'];

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const clampS32 = (value: number): number => Math.min(Math.max(value, INT32_MIN), INT32_MAX) >>> 0;

/** Value of a ≤32-bit pattern as its type reads it. */
const valueOf = (bits: number, width: number, signed: boolean): number =>
  signed ? toSigned(bits, width) : width === 32 ? bits >>> 0 : bits;
/** Value of a 64-bit pattern as its type reads it. */
const valueOf64 = (bits: bigint, signed: boolean): bigint =>
  signed ? BigInt.asIntN(64, bits) : bits;
const wrap64 = (value: bigint): bigint => BigInt.asUintN(64, value);

/** Builds a same-type binary op from a ≤32-bit and a 64-bit formula on values. */
function binary(
  family: string,
  type: IntAluType,
  small: (a: number, b: number) => number,
  wide: (a: bigint, b: bigint) => bigint,
): AluOp {
  const width = widthOf(type);
  const signed = isSigned(type);
  if (width === 64) {
    return aluOp(family, [type, type], [type], ([a, b]) => [
      wrap64(wide(valueOf64(big(a), signed), valueOf64(big(b), signed))),
    ]);
  }
  return aluOp(family, [type, type], [type], ([a, b]) => [
    wrap(small(valueOf(num(a), width, signed), valueOf(num(b), width, signed)), width),
  ]);
}

/** Two 16-bit lanes of a .b32 (element 0 low), each through `lane`. */
function simd16(family: string, signed: boolean, lane: (a: number, b: number) => number): AluOp {
  return aluOp(family, ['b32', 'b32'], ['b32'], ([a, b]) => {
    const x = num(a);
    const y = num(b);
    const low = lane(valueOf(x & 0xffff, 16, signed), valueOf(y & 0xffff, 16, signed));
    const high = lane(valueOf(x >>> 16, 16, signed), valueOf(y >>> 16, 16, signed));
    return [(((high & 0xffff) << 16) | (low & 0xffff)) >>> 0];
  });
}

function decodeAddSub(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['sat', 'cc', ...SIMD_WORDS]);
  if (d.has('cc')) d.fail('carry flag .cc (extended-precision arithmetic is not simulated)');
  const sign = opcode === 'add' ? 1 : -1;
  const simd = SIMD_WORDS.find((word) => d.has(word));
  if (simd !== undefined) {
    if (opcode !== 'add' || d.has('sat') || d.types.length > 0) d.fail('packed form');
    return simd16(opcode, simd === 's16x2', (a, b) => a + b);
  }
  const type = d.type(INT_ALU_TYPES);
  if (d.has('sat')) {
    if (type !== 's32') d.fail('.sat needs .s32');
    return aluOp(opcode, [type, type], [type], ([a, b]) => [
      clampS32((num(a) | 0) + sign * (num(b) | 0)),
    ]);
  }
  if (widthOf(type) === 64) {
    // Modulo 2^64 a sum or difference is the same read signed or unsigned: no sign extension.
    return aluOp(opcode, [type, type], [type], ([a, b]) => [
      wrap64(sign === 1 ? big(a) + big(b) : big(a) - big(b)),
    ]);
  }
  return binary(
    opcode,
    type,
    (a, b) => a + sign * b,
    (a, b) => a + BigInt(sign) * b,
  );
}

/** High 32 bits of the unsigned 64-bit product of two u32 patterns, in doubles. */
export function mulHighU32(a: number, b: number): number {
  const aHigh = a >>> 16;
  const aLow = a & 0xffff;
  const bHigh = b >>> 16;
  const bLow = b & 0xffff;
  const middle = aHigh * bLow + aLow * bHigh;
  const carry = Math.floor((middle * 65536 + aLow * bLow) / 4294967296);
  return (aHigh * bHigh + carry) >>> 0;
}

/** High 32 bits of the signed product (from the unsigned one: subtract b if a < 0, a if b < 0). */
export function mulHighS32(a: number, b: number): number {
  return (mulHighU32(a, b) - (a & 0x80000000 ? b : 0) - (b & 0x80000000 ? a : 0)) >>> 0;
}

type Product = (a: Bits, b: Bits) => Bits;

/** The product part of mul/mad: .lo, .hi or .wide of a type; returns it and its result type. */
function product(
  d: Decoded,
  type: IntAluType,
): { readonly part: Product; readonly resultType: PtxType } {
  const modes = ['lo', 'hi', 'wide'].filter((mode) => d.has(mode));
  if (modes.length !== 1) d.fail('expected one of .lo .hi .wide');
  const mode = modes[0];
  const width = widthOf(type);
  const signed = isSigned(type);
  if (mode === 'wide') {
    if (width === 64) d.fail('.wide on a 64-bit type');
    if (width === 16) {
      const resultType = signed ? 's32' : 'u32';
      return {
        resultType,
        part: (a, b) => (valueOf(num(a), 16, signed) * valueOf(num(b), 16, signed)) >>> 0,
      };
    }
    return {
      resultType: signed ? 's64' : 'u64',
      // A product within 2^53 is exact in doubles: one bigint instead of three.
      part: signed
        ? (a, b) => {
            const exact = (num(a) | 0) * (num(b) | 0);
            return Math.abs(exact) <= Number.MAX_SAFE_INTEGER
              ? wrap64(BigInt(exact))
              : wrap64(BigInt(num(a) | 0) * BigInt(num(b) | 0));
          }
        : (a, b) => {
            const exact = num(a) * num(b);
            return exact <= Number.MAX_SAFE_INTEGER
              ? BigInt(exact)
              : BigInt(num(a)) * BigInt(num(b));
          },
    };
  }
  const high = mode === 'hi';
  if (width === 64) {
    return {
      resultType: type,
      part: high
        ? (a, b) => wrap64((valueOf64(big(a), signed) * valueOf64(big(b), signed)) >> 64n)
        : (a, b) => wrap64(big(a) * big(b)),
    };
  }
  if (width === 16) {
    return {
      resultType: type,
      part: high
        ? (a, b) => ((valueOf(num(a), 16, signed) * valueOf(num(b), 16, signed)) >> 16) & 0xffff
        : (a, b) => (num(a) * num(b)) & 0xffff,
    };
  }
  return {
    resultType: type,
    part: high
      ? signed
        ? (a, b) => mulHighS32(num(a), num(b))
        : (a, b) => mulHighU32(num(a), num(b))
      : (a, b) => Math.imul(num(a), num(b)) >>> 0,
  };
}

function decodeMul(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['lo', 'hi', 'wide']);
  const type = d.type(INT_ALU_TYPES);
  const { part, resultType } = product(d, type);
  return aluOp(opcode, [type, type], [resultType], ([a, b]) => [part(a ?? 0, b ?? 0)]);
}

function decodeMad(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['lo', 'hi', 'wide', 'sat', 'cc']);
  if (d.has('cc')) d.fail('carry flag .cc (extended-precision arithmetic is not simulated)');
  const type = d.type(INT_ALU_TYPES);
  const { part, resultType } = product(d, type);
  if (d.has('sat')) {
    if (type !== 's32' || !d.has('hi')) d.fail('.sat needs .hi.s32');
    return aluOp(opcode, [type, type, type], [type], ([a, b, c]) => [
      clampS32((num(part(a ?? 0, b ?? 0)) | 0) + (num(c) | 0)),
    ]);
  }
  const width = widthOf(resultType);
  if (width === 64) {
    return aluOp(opcode, [type, type, resultType], [resultType], ([a, b, c]) => [
      wrap64(big(part(a ?? 0, b ?? 0)) + big(c)),
    ]);
  }
  return aluOp(opcode, [type, type, resultType], [resultType], ([a, b, c]) => [
    wrap(num(part(a ?? 0, b ?? 0)) + num(c), width),
  ]);
}

/** mul24/mad24: 24-bit operands (sign-extended for .s32), low or high 32 bits of the 48-bit product. */
function decode24(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['lo', 'hi', 'sat']);
  const type = d.type(['u32', 's32'] as const);
  const high = d.has('hi');
  if (high === d.has('lo')) d.fail('expected one of .lo .hi');
  const mad = opcode === 'mad24';
  if (d.has('sat') && !(mad && high && type === 's32')) d.fail('.sat needs mad24.hi.s32');
  const signed = type === 's32';
  const operand = (x: Bits | undefined): bigint =>
    BigInt(signed ? toSigned(num(x) & 0xffffff, 24) : num(x) & 0xffffff);
  const part = (a: Bits | undefined, b: Bits | undefined): number => {
    const productBits = BigInt.asUintN(48, operand(a) * operand(b));
    return Number(high ? productBits >> 16n : productBits & 0xffffffffn);
  };
  if (!mad) return aluOp(opcode, [type, type], [type], ([a, b]) => [part(a, b)]);
  if (d.has('sat')) {
    return aluOp(opcode, [type, type, type], [type], ([a, b, c]) => [
      clampS32((part(a, b) | 0) + (num(c) | 0)),
    ]);
  }
  return aluOp(opcode, [type, type, type], [type], ([a, b, c]) => [(part(a, b) + num(c)) >>> 0]);
}

function decodeSad(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, []);
  const type = d.type(INT_ALU_TYPES);
  const width = widthOf(type);
  const signed = isSigned(type);
  if (width === 64) {
    return aluOp(opcode, [type, type, type], [type], ([a, b, c]) => {
      const difference = valueOf64(big(a), signed) - valueOf64(big(b), signed);
      return [wrap64(big(c) + (difference < 0n ? -difference : difference))];
    });
  }
  return aluOp(opcode, [type, type, type], [type], ([a, b, c]) => [
    wrap(num(c) + Math.abs(valueOf(num(a), width, signed) - valueOf(num(b), width, signed)), width),
  ]);
}

/**
 * div/rem truncate toward zero (rem takes the dividend's sign); MIN / −1 wraps to MIN with remainder
 * 0. The ISA leaves division by zero machine-specific: here the quotient is all ones (what the
 * hardware's unsigned divide gives, −1 for signed) and the remainder is the dividend.
 */
function decodeDivRem(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, []);
  const type = d.type(INT_ALU_TYPES);
  const remainder = opcode === 'rem';
  return binary(
    opcode,
    type,
    remainder ? (a, b) => (b === 0 ? a : a % b) : (a, b) => (b === 0 ? -1 : Math.trunc(a / b)),
    remainder ? (a, b) => (b === 0n ? a : a % b) : (a, b) => (b === 0n ? -1n : a / b),
  );
}

function decodeAbsNeg(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, []);
  const type = d.type(['s16', 's32', 's64'] as const);
  const width = widthOf(type);
  const negate = opcode === 'neg';
  if (width === 64) {
    return aluOp(opcode, [type], [type], ([a]) => {
      const value = BigInt.asIntN(64, big(a));
      return [wrap64(negate || value < 0n ? -value : value)];
    });
  }
  return aluOp(opcode, [type], [type], ([a]) => {
    const value = toSigned(num(a), width);
    return [wrap(negate ? -value : Math.abs(value), width)];
  });
}

function decodeMinMax(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['relu', ...SIMD_WORDS]);
  const pick = opcode === 'min' ? Math.min : Math.max;
  const relu = d.has('relu');
  const simd = SIMD_WORDS.find((word) => d.has(word));
  if (simd !== undefined) {
    if (d.types.length > 0 || (relu && simd !== 's16x2')) d.fail('packed form');
    return simd16(opcode, simd === 's16x2', relu ? (a, b) => Math.max(pick(a, b), 0) : pick);
  }
  const type = d.type(INT_ALU_TYPES);
  if (relu && type !== 's32') d.fail('.relu needs .s32');
  return binary(
    opcode,
    type,
    relu ? (a, b) => Math.max(pick(a, b), 0) : pick,
    opcode === 'min' ? (a, b) => (a < b ? a : b) : (a, b) => (a > b ? a : b),
  );
}

function decodeCarry(opcode: string, modifiers: readonly string[]): AluOp {
  return decode(opcode, modifiers, []).fail('carry-chain arithmetic is not simulated');
}

export const INTEGER_DECODERS: ReadonlyMap<
  string,
  (opcode: string, modifiers: readonly string[]) => AluOp
> = new Map([
  ['add', decodeAddSub],
  ['sub', decodeAddSub],
  ['mul', decodeMul],
  ['mad', decodeMad],
  ['mul24', decode24],
  ['mad24', decode24],
  ['sad', decodeSad],
  ['div', decodeDivRem],
  ['rem', decodeDivRem],
  ['abs', decodeAbsNeg],
  ['neg', decodeAbsNeg],
  ['min', decodeMinMax],
  ['max', decodeMinMax],
  ['addc', decodeCarry],
  ['subc', decodeCarry],
  ['madc', decodeCarry],
]);
