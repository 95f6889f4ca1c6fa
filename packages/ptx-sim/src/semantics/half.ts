// Half-precision instructions on .f16 .f16x2 .bf16 .bf16x2: add sub mul fma neg abs min max ex2 tanh.
// Packed x2 forms apply the scalar operation to each 16-bit half (element 0 in the low half).
import type { PtxType } from '../ast.js';
import {
  bf16FromBits,
  bf16ToBits,
  f16FromBits,
  f16ToBits,
  packHalves,
  signBit,
} from './float-bits.js';
import type { Compute } from './float-lanes.js';
import { minMax } from './float-misc.js';
import { addRounded, fmaRounded, mulRounded } from './float-ops.js';
import { aluOp, decode, num } from './modifiers.js';
import {
  BF16,
  F16,
  flushSubnormal,
  roundToFormat,
  saturate,
  type FloatFormat,
} from './rounding.js';
import type { AluOp } from './types.js';

export type HalfType = 'f16' | 'f16x2' | 'bf16' | 'bf16x2';
export const HALF_TYPES: readonly HalfType[] = ['f16', 'f16x2', 'bf16', 'bf16x2'];
export const isHalfType = (type: PtxType): type is HalfType =>
  (HALF_TYPES as readonly PtxType[]).includes(type);

export interface HalfCodec {
  readonly fmt: FloatFormat;
  readonly fromBits: (bits: number) => number;
  readonly toBits: (value: number) => number;
}

export const F16_CODEC: HalfCodec = { fmt: F16, fromBits: f16FromBits, toBits: f16ToBits };
export const BF16_CODEC: HalfCodec = { fmt: BF16, fromBits: bf16FromBits, toBits: bf16ToBits };

export const codecOf = (type: HalfType): HalfCodec =>
  type.startsWith('bf') ? BF16_CODEC : F16_CODEC;
export const isPacked = (type: HalfType): boolean => type.endsWith('x2');

interface HalfOptions {
  readonly ftz?: boolean;
  readonly sat?: boolean;
  readonly relu?: boolean;
}

/** An AluOp applying `compute` (values → value already rounded to the format) per element. */
export function halfLane(
  family: string,
  type: HalfType,
  arity: number,
  compute: Compute,
  { ftz = false, sat = false, relu = false }: HalfOptions = {},
): AluOp {
  const { fmt, fromBits, toBits } = codecOf(type);
  const read = (bits: number): number =>
    ftz ? flushSubnormal(fromBits(bits), fmt) : fromBits(bits);
  const element = (sources: readonly number[], shift: number): number => {
    const [a = 0, b = 0, c = 0] = sources;
    let result = compute(
      read((a >>> shift) & 0xffff),
      read((b >>> shift) & 0xffff),
      read((c >>> shift) & 0xffff),
    );
    if (ftz) result = flushSubnormal(result, fmt);
    if (sat) result = saturate(result);
    if (relu && !(result > 0) && result === result) result = 0;
    return toBits(result);
  };
  const types = Array.from({ length: arity }, (): PtxType => type);
  if (!isPacked(type))
    return aluOp(family, types, [type], (sources) => [element(sources.map(num), 0)]);
  return aluOp(family, types, [type], (sources) => {
    const values = sources.map(num);
    return [packHalves(element(values, 0), element(values, 16))];
  });
}

/** add/sub/mul/fma: only .rn exists for the half types; .ftz/.sat are f16-only, .relu fma-only. */
function decodeArith(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['rn', 'ftz', 'sat', 'relu']);
  const type = d.type(HALF_TYPES);
  const { fmt } = codecOf(type);
  const bf = fmt === BF16;
  const options = { ftz: d.has('ftz'), sat: d.has('sat'), relu: d.has('relu') };
  if (bf && (options.ftz || options.sat)) d.fail('.ftz/.sat on bf16');
  if (options.relu && (opcode !== 'fma' || options.sat)) d.fail('.relu needs fma without .sat');
  if (opcode === 'fma') {
    return halfLane(opcode, type, 3, (a, b, c) => fmaRounded(a, b, c, fmt, 'rn'), options);
  }
  const compute =
    opcode === 'mul'
      ? (a: number, b: number) => mulRounded(a, b, fmt, 'rn')
      : opcode === 'add'
        ? (a: number, b: number) => addRounded(a, b, fmt, 'rn')
        : (a: number, b: number) => addRounded(a, -b, fmt, 'rn');
  return halfLane(opcode, type, 2, compute, options);
}

/** neg/abs flip or clear each element's sign bit (.ftz first flushes f16 subnormals). */
function decodeNegAbs(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['ftz']);
  const type = d.type(HALF_TYPES);
  const ftz = d.has('ftz');
  if (ftz && codecOf(type) === BF16_CODEC) d.fail('.ftz on bf16');
  const negate = opcode === 'neg';
  const element = (bits: number): number => {
    const flushed = ftz && (bits & 0x7c00) === 0 ? bits & 0x8000 : bits;
    return negate ? flushed ^ 0x8000 : flushed & 0x7fff;
  };
  return aluOp(opcode, [type], [type], ([a]) => {
    const bits = num(a);
    return [
      isPacked(type)
        ? packHalves(element(bits & 0xffff), element(bits >>> 16))
        : element(bits & 0xffff),
    ];
  });
}

function decodeMinMax(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['ftz', 'NaN', 'nan', 'xorsign', 'abs']);
  const type = d.type(HALF_TYPES);
  const max = opcode === 'max';
  const propagateNaN = d.has('NaN') || d.has('nan');
  const abs = d.has('abs');
  const xorsign = d.has('xorsign');
  if (xorsign !== abs) d.fail('.xorsign.abs go together');
  if (d.has('ftz') && codecOf(type) === BF16_CODEC) d.fail('.ftz on bf16');
  return halfLane(
    opcode,
    type,
    2,
    (a, b) => {
      let result = abs
        ? minMax(max, propagateNaN, Math.abs(a), Math.abs(b))
        : minMax(max, propagateNaN, a, b);
      if (xorsign && result === result) {
        result = signBit(a) !== signBit(b) ? -result : result;
      }
      return result;
    },
    { ftz: d.has('ftz') },
  );
}

/** ex2/tanh .approx: computed in double and rounded once to the format (within the ISA's bounds). */
function decodeApprox(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['approx', 'ftz']);
  const type = d.type(HALF_TYPES);
  if (!d.has('approx')) d.fail('.approx is required');
  const { fmt } = codecOf(type);
  const ftz = d.has('ftz');
  if (opcode === 'ex2' && fmt === BF16 && !ftz) d.fail('ex2 on bf16 needs .ftz');
  if ((opcode === 'tanh' || fmt === F16) && ftz) d.fail('.ftz here');
  const fn = opcode === 'ex2' ? (x: number) => 2 ** x : Math.tanh;
  return halfLane(opcode, type, 1, (a) => roundToFormat(fn(a), fmt, 'rn'), { ftz });
}

export const HALF_DECODERS: ReadonlyMap<
  string,
  (opcode: string, modifiers: readonly string[]) => AluOp
> = new Map([
  ['add', decodeArith],
  ['sub', decodeArith],
  ['mul', decodeArith],
  ['fma', decodeArith],
  ['neg', decodeNegAbs],
  ['abs', decodeNegAbs],
  ['min', decodeMinMax],
  ['max', decodeMinMax],
  ['ex2', decodeApprox],
  ['tanh', decodeApprox],
]);
