// Logic and shift instructions: and or xor not cnot shl shr lop3 shf.
import { aluOp, big, decode, num, widthOf } from './modifiers.js';
import type { AluOp } from './types.js';

const BIT_TYPES = ['pred', 'b16', 'b32', 'b64'] as const;

function decodeBitwise(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(BIT_TYPES);
  const width = widthOf(type);
  const mask = width === 1 ? 1 : width === 16 ? 0xffff : 0;
  if (opcode === 'not') {
    if (width === 64) return aluOp(opcode, [type], [type], ([a]) => [BigInt.asUintN(64, ~big(a))]);
    if (width === 32) return aluOp(opcode, [type], [type], ([a]) => [~num(a) >>> 0]);
    return aluOp(opcode, [type], [type], ([a]) => [~num(a) & mask]);
  }
  if (width === 64) {
    const op =
      opcode === 'and'
        ? (a: bigint, b: bigint) => a & b
        : opcode === 'or'
          ? (a: bigint, b: bigint) => a | b
          : (a: bigint, b: bigint) => a ^ b;
    return aluOp(opcode, [type, type], [type], ([a, b]) => [op(big(a), big(b))]);
  }
  const op =
    opcode === 'and'
      ? (a: number, b: number) => a & b
      : opcode === 'or'
        ? (a: number, b: number) => a | b
        : (a: number, b: number) => a ^ b;
  return aluOp(opcode, [type, type], [type], ([a, b]) => [op(num(a), num(b)) >>> 0]);
}

function decodeCnot(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(['b16', 'b32', 'b64'] as const);
  if (type === 'b64') return aluOp(opcode, [type], [type], ([a]) => [big(a) === 0n ? 1n : 0n]);
  return aluOp(opcode, [type], [type], ([a]) => [num(a) === 0 ? 1 : 0]);
}

/** shl/shr: the amount is a .u32; amounts ≥ the width give 0 (or the sign fill for .s types). */
function decodeShift(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, []);
  const type =
    opcode === 'shl'
      ? d.type(['b16', 'b32', 'b64'] as const)
      : d.type(['b16', 'b32', 'b64', 'u16', 'u32', 'u64', 's16', 's32', 's64'] as const);
  const width = widthOf(type);
  const arithmetic = type.startsWith('s');
  if (width === 64) {
    if (opcode === 'shl') {
      return aluOp(opcode, [type, 'u32'], [type], ([a, b]) => {
        const amount = num(b);
        return [amount >= 64 ? 0n : BigInt.asUintN(64, big(a) << BigInt(amount))];
      });
    }
    return aluOp(opcode, [type, 'u32'], [type], ([a, b]) => {
      const amount = BigInt(Math.min(num(b), 64));
      return [
        arithmetic ? BigInt.asUintN(64, BigInt.asIntN(64, big(a)) >> amount) : big(a) >> amount,
      ];
    });
  }
  const mask = width === 32 ? 0xffffffff : 0xffff;
  if (opcode === 'shl') {
    return aluOp(opcode, [type, 'u32'], [type], ([a, b]) => {
      const amount = num(b);
      return [amount >= width ? 0 : ((num(a) << amount) & mask) >>> 0];
    });
  }
  return aluOp(opcode, [type, 'u32'], [type], ([a, b]) => {
    const amount = Math.min(num(b), width);
    const value = num(a);
    if (!arithmetic) return [amount >= width ? 0 : value >>> amount];
    const signed = width === 32 ? value | 0 : (value << 16) >> 16;
    return [((signed >> Math.min(amount, 31)) & mask) >>> 0];
  });
}

/** lop3: bit i of immLut is F at (a, b, c) = (bit 2, bit 1, bit 0 of i), from ta=0xF0, tb=0xCC, tc=0xAA. */
export function lop3(a: number, b: number, c: number, lut: number): number {
  let result = 0;
  for (let index = 0; index < 8; index++) {
    if ((lut >>> index) & 1) {
      result |= (index & 4 ? a : ~a) & (index & 2 ? b : ~b) & (index & 1 ? c : ~c);
    }
  }
  return result >>> 0;
}

/** lop3.b32 d, a, b, c, immLut; with .or/.and also p = (d != 0) BoolOp q (destinations d, p). */
function decodeLop3(
  opcode: string,
  modifiers: readonly string[],
  _operandCount: number,
  arity?: readonly number[],
): AluOp {
  const d = decode(opcode, modifiers, ['or', 'and']);
  const type = d.type(['b32'] as const);
  const boolOp = d.has('or') ? 'or' : d.has('and') ? 'and' : undefined;
  if (boolOp === undefined) {
    return aluOp(opcode, [type, type, type, type], [type], ([a, b, c, lut]) => [
      lop3(num(a), num(b), num(c), num(lut) & 0xff),
    ]);
  }
  if (d.has('or') && d.has('and')) d.fail('both .or and .and');
  if (arity !== undefined && arity[0] !== 2) d.fail(`.${boolOp} needs a d|p destination pair`);
  return aluOp(opcode, [type, type, type, type, 'pred'], [type, 'pred'], ([a, b, c, lut, q]) => {
    const value = lop3(num(a), num(b), num(c), num(lut) & 0xff);
    const nonzero = value !== 0 ? 1 : 0;
    return [value, boolOp === 'or' ? nonzero | num(q) : nonzero & num(q)];
  });
}

/** Funnel shift of the 64-bit {b, a}: .l keeps the high word, .r the low; .clamp caps n at 32. */
export function funnelShift(
  a: number,
  b: number,
  amount: number,
  left: boolean,
  clamp: boolean,
): number {
  const n = clamp ? Math.min(amount, 32) : amount & 31;
  if (n === 0) return (left ? b : a) >>> 0;
  if (n === 32) return (left ? a : b) >>> 0;
  return (left ? (b << n) | (a >>> (32 - n)) : (b << (32 - n)) | (a >>> n)) >>> 0;
}

function decodeShf(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['l', 'r', 'clamp', 'wrap']);
  const type = d.type(['b32'] as const);
  const left = d.has('l');
  const clamp = d.has('clamp');
  if (left === d.has('r')) d.fail('expected one of .l .r');
  if (clamp === d.has('wrap')) d.fail('expected one of .clamp .wrap');
  return aluOp(opcode, [type, type, 'u32'], [type], ([a, b, c]) => [
    funnelShift(num(a), num(b), num(c), left, clamp),
  ]);
}

type LogicDecoder = (
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  arity?: readonly number[],
) => AluOp;

export const LOGIC_DECODERS: ReadonlyMap<string, LogicDecoder> = new Map<string, LogicDecoder>([
  ['and', decodeBitwise],
  ['or', decodeBitwise],
  ['xor', decodeBitwise],
  ['not', decodeBitwise],
  ['cnot', decodeCnot],
  ['shl', decodeShift],
  ['shr', decodeShift],
  ['lop3', decodeLop3],
  ['shf', decodeShf],
]);
