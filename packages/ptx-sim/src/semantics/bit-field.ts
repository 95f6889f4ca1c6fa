// Bit manipulation: popc clz brev bfind bfe bfi bmsk szext prmt, and the dot products dp4a dp2a.
import { aluOp, big, decode, num, toSigned, widthOf } from './modifiers.js';
import type { AluOp } from './types.js';

export function popc32(value: number): number {
  let x = value >>> 0;
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export function brev32(value: number): number {
  let x = value >>> 0;
  x = ((x >>> 1) & 0x55555555) | ((x & 0x55555555) << 1);
  x = ((x >>> 2) & 0x33333333) | ((x & 0x33333333) << 2);
  x = ((x >>> 4) & 0x0f0f0f0f) | ((x & 0x0f0f0f0f) << 4);
  x = ((x >>> 8) & 0x00ff00ff) | ((x & 0x00ff00ff) << 8);
  return ((x >>> 16) | (x << 16)) >>> 0;
}

const low32 = (x: bigint): number => Number(x & 0xffffffffn);
const high32 = (x: bigint): number => Number(x >> 32n);

function decodeCount(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(['b32', 'b64'] as const);
  const wide = type === 'b64';
  if (opcode === 'popc') {
    return wide
      ? aluOp(opcode, [type], ['u32'], ([a]) => [popc32(low32(big(a))) + popc32(high32(big(a)))])
      : aluOp(opcode, [type], ['u32'], ([a]) => [popc32(num(a))]);
  }
  if (opcode === 'clz') {
    return wide
      ? aluOp(opcode, [type], ['u32'], ([a]) => {
          const high = high32(big(a));
          return [high !== 0 ? Math.clz32(high) : 32 + Math.clz32(low32(big(a)))];
        })
      : aluOp(opcode, [type], ['u32'], ([a]) => [Math.clz32(num(a))]);
  }
  return wide
    ? aluOp(opcode, [type], [type], ([a]) => [
        (BigInt(brev32(low32(big(a)))) << 32n) | BigInt(brev32(high32(big(a)))),
      ])
    : aluOp(opcode, [type], [type], ([a]) => [brev32(num(a))]);
}

/** bfind: position of the most significant non-sign bit, 0xffffffff if none; .shiftamt gives msb − it. */
function decodeBfind(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['shiftamt']);
  const type = d.type(['u32', 'u64', 's32', 's64'] as const);
  const shiftAmount = d.has('shiftamt');
  const msb = widthOf(type) - 1;
  const signed = type.startsWith('s');
  const finish = (position: number): number =>
    position < 0 ? 0xffffffff : shiftAmount ? msb - position : position;
  if (msb === 63) {
    return aluOp(opcode, [type], ['u32'], ([a]) => {
      let x = big(a);
      if (signed && x >> 63n === 1n) x = BigInt.asUintN(64, ~x);
      const high = high32(x);
      return [finish(high !== 0 ? 63 - Math.clz32(high) : 31 - Math.clz32(low32(x)))];
    });
  }
  return aluOp(opcode, [type], ['u32'], ([a]) => {
    let x = num(a);
    if (signed && x & 0x80000000) x = ~x >>> 0;
    return [finish(31 - Math.clz32(x))];
  });
}

/** bfe: len bits from pos (both & 0xff), zero- or sign-extended per the ISA's sbit rule. */
function decodeBfe(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(['u32', 'u64', 's32', 's64'] as const);
  const signed = type.startsWith('s');
  const width = widthOf(type);
  const bigWidth = BigInt(width);
  return aluOp(opcode, [type, 'u32', 'u32'], [type], ([a, b, c]) => {
    const position = num(b) & 0xff;
    const length = num(c) & 0xff;
    const value = big(a);
    const bit = (index: number): bigint => (value >> BigInt(index)) & 1n;
    const signBitValue =
      signed && length !== 0 ? bit(Math.min(position + length - 1, width - 1)) : 0n;
    // Bits [position, min(position+len, width)) of a, then sign-fill above.
    const available = Math.max(0, Math.min(length, width - position));
    const field =
      available === 0 ? 0n : (value >> BigInt(position)) & ((1n << BigInt(available)) - 1n);
    const fill =
      signBitValue === 1n
        ? BigInt.asUintN(width, ((1n << bigWidth) - 1n) << BigInt(available))
        : 0n;
    const result = field | fill;
    return [width === 64 ? result : Number(result)];
  });
}

/** bfi: a's low len bits into b at pos (both & 0xff); bits past the msb are dropped. */
function decodeBfi(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(['b32', 'b64'] as const);
  const width = widthOf(type);
  return aluOp(opcode, [type, type, 'u32', 'u32'], [type], ([a, b, c, d]) => {
    const position = num(c) & 0xff;
    const length = Math.max(0, Math.min(num(d) & 0xff, width - position));
    if (length === 0) return [width === 64 ? big(b) : num(b)];
    const mask = ((1n << BigInt(length)) - 1n) << BigInt(position);
    const result = (big(b) & ~mask) | ((big(a) << BigInt(position)) & mask);
    return [width === 64 ? BigInt.asUintN(64, result) : Number(BigInt.asUintN(32, result))];
  });
}

/** bmsk: a mask of b bits starting at bit a (ISA pseudocode, .clamp / .wrap). */
function decodeBmsk(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['clamp', 'wrap']);
  d.type(['b32'] as const);
  const clamp = d.has('clamp');
  if (clamp === d.has('wrap')) d.fail('expected one of .clamp .wrap');
  return aluOp(opcode, ['b32', 'b32'], ['b32'], ([a, b]) => {
    const start = num(a) & 31;
    const size = num(b) & 31;
    let mask0 = (0xffffffff << start) >>> 0;
    let overflow = start + size >= 32;
    if (clamp) {
      if (num(a) >= 32) {
        mask0 = 0;
        overflow = true;
      }
      if (num(b) >= 32) overflow = true;
    }
    const mask1 = overflow ? 0 : size === 0 ? 0xffffffff : (0xffffffff << (start + size)) >>> 0;
    return [(mask0 & ~mask1) >>> 0];
  });
}

/** szext: sign- or zero-extends the low N = b bits of a (ISA pseudocode, .clamp / .wrap). */
function decodeSzext(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['clamp', 'wrap']);
  const type = d.type(['u32', 's32'] as const);
  const clamp = d.has('clamp');
  if (clamp === d.has('wrap')) d.fail('expected one of .clamp .wrap');
  return aluOp(opcode, [type, 'u32'], [type], ([a, b]) => {
    const bits = num(b) & 31;
    const tooLarge = clamp && num(b) >= 32;
    const mask = tooLarge ? 0 : (0xffffffff << bits) >>> 0;
    const sign = bits !== 0 && !tooLarge && type === 's32' ? (num(a) >>> ((bits - 1) & 31)) & 1 : 0;
    return [((num(a) & ~mask) | (sign ? mask : 0)) >>> 0];
  });
}

type PrmtMode = 'f4e' | 'b4e' | 'rc8' | 'ecl' | 'ecr' | 'rc16';
const PRMT_MODES: readonly string[] = ['f4e', 'b4e', 'rc8', 'ecl', 'ecr', 'rc16'];

/** Selector of result byte `index`: 4 bits (bit 3 = replicate the sign) in the default mode. */
function prmtSelector(mode: PrmtMode | undefined, control: number, index: number): number {
  const low = control & 3;
  switch (mode) {
    case undefined:
      return (control >>> (4 * index)) & 0xf;
    case 'f4e':
      return (low + index) & 7;
    case 'b4e':
      return (low - index) & 7;
    case 'rc8':
      return low;
    case 'ecl':
      return Math.max(index, low);
    case 'ecr':
      return Math.min(index, low);
    case 'rc16':
      return ((control & 1) << 1) | (index & 1);
  }
}

/** prmt: picks bytes of {b, a} (a is bytes 0–3). */
export function prmt(a: number, b: number, control: number, mode?: PrmtMode): number {
  let result = 0;
  for (let index = 0; index < 4; index++) {
    const selector = prmtSelector(mode, control, index);
    const source = selector & 7;
    let byte = ((source < 4 ? a : b) >>> (8 * (source & 3))) & 0xff;
    if (selector & 8) byte = byte & 0x80 ? 0xff : 0;
    result |= byte << (8 * index);
  }
  return result >>> 0;
}

function decodePrmt(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, PRMT_MODES);
  const type = d.type(['b32'] as const);
  const modes = PRMT_MODES.filter((mode) => d.has(mode));
  if (modes.length > 1) d.fail('more than one mode');
  const mode = modes[0] as PrmtMode | undefined;
  return aluOp(opcode, [type, type, type], [type], ([a, b, c]) => [
    prmt(num(a), num(b), num(c), mode),
  ]);
}

/** dp4a / dp2a: byte (and half-word) dot products accumulated into c, wrapping at 32 bits. */
function decodeDot(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, opcode === 'dp2a' ? ['lo', 'hi'] : []);
  const [aType, bType] = d.types;
  const valid = (type: string | undefined): type is 'u32' | 's32' =>
    type === 'u32' || type === 's32';
  if (d.types.length !== 2 || !valid(aType) || !valid(bType))
    d.fail('expected .atype.btype from .u32 .s32');
  const cType = aType === 'u32' && bType === 'u32' ? 'u32' : 's32';
  const aSigned = aType === 's32';
  const bSigned = bType === 's32';
  const byte = (x: number, index: number, signed: boolean): number =>
    signed ? toSigned((x >>> (8 * index)) & 0xff, 8) : (x >>> (8 * index)) & 0xff;
  if (opcode === 'dp4a') {
    return aluOp(opcode, [aType ?? 'u32', bType ?? 'u32', cType], [cType], ([a, b, c]) => {
      let sum = num(c);
      for (let index = 0; index < 4; index++)
        sum += byte(num(a), index, aSigned) * byte(num(b), index, bSigned);
      return [sum >>> 0];
    });
  }
  const high = d.has('hi');
  if (high === d.has('lo')) d.fail('expected one of .lo .hi');
  const first = high ? 2 : 0;
  return aluOp(opcode, [aType ?? 'u32', bType ?? 'u32', cType], [cType], ([a, b, c]) => {
    let sum = num(c);
    for (let index = 0; index < 2; index++) {
      const half = (num(a) >>> (16 * index)) & 0xffff;
      sum += (aSigned ? toSigned(half, 16) : half) * byte(num(b), first + index, bSigned);
    }
    return [sum >>> 0];
  });
}

export const BIT_FIELD_DECODERS: ReadonlyMap<
  string,
  (opcode: string, modifiers: readonly string[]) => AluOp
> = new Map([
  ['popc', decodeCount],
  ['clz', decodeCount],
  ['brev', decodeCount],
  ['bfind', decodeBfind],
  ['bfe', decodeBfe],
  ['bfi', decodeBfi],
  ['bmsk', decodeBmsk],
  ['szext', decodeSzext],
  ['prmt', decodePrmt],
  ['dp4a', decodeDot],
  ['dp2a', decodeDot],
]);
