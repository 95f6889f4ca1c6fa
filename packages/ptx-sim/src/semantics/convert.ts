// cvt: integer ↔ integer, float ↔ integer, float ↔ float, and packing two f32 into .f16x2/.bf16x2.
import type { PtxType } from '../ast.js';
import { dyadicOfInteger, roundDyadic } from './dyadic.js';
import { f32FromBits, f32ToBits, f64FromBits, f64ToBits, packHalves } from './float-bits.js';
import { BF16_CODEC, F16_CODEC } from './half.js';
import { aluOp, big, decode, FLOAT_ROUNDINGS, integralRounding, isIntType, num, toSigned, widthOf, wrap, type Decoded, type IntType } from './modifiers.js'; // prettier-ignore
import { BF16, F16, F32, F64, flushSubnormal, roundToFormat, roundToIntegral, saturate, type FloatFormat, type Rounding } from './rounding.js'; // prettier-ignore
import type { AluOp, Bits } from './types.js';

type FloatType = 'f16' | 'bf16' | 'f32' | 'f64';
const FLOAT_TYPES: readonly PtxType[] = ['f16', 'bf16', 'f32', 'f64'];
const isFloatType = (type: PtxType): type is FloatType => FLOAT_TYPES.includes(type);
const INTEGRAL_ROUNDINGS = ['rni', 'rzi', 'rmi', 'rpi'];
const FORMATS: Record<FloatType, FloatFormat> = { f16: F16, bf16: BF16, f32: F32, f64: F64 };

/** Reads a float source as its value. */
function floatReader(type: FloatType): (bits: Bits | undefined) => number {
  switch (type) {
    case 'f16':
      return (bits) => F16_CODEC.fromBits(num(bits));
    case 'bf16':
      return (bits) => BF16_CODEC.fromBits(num(bits));
    case 'f32':
      return (bits) => f32FromBits(num(bits));
    case 'f64':
      return (bits) => f64FromBits(big(bits));
  }
}

/** Encodes a value already representable in the type. */
function floatWriter(type: FloatType): (value: number) => Bits {
  switch (type) {
    case 'f16':
      return F16_CODEC.toBits;
    case 'bf16':
      return BF16_CODEC.toBits;
    case 'f32':
      return f32ToBits;
    case 'f64':
      return f64ToBits;
  }
}

/** Integer source as its value (signed types signed): a number up to 32 bits, else a bigint. */
function intReader(type: IntType): (bits: Bits | undefined) => number | bigint {
  const width = widthOf(type);
  const signed = type.startsWith('s');
  if (width === 64) return signed ? (bits) => BigInt.asIntN(64, big(bits)) : (bits) => big(bits);
  return signed ? (bits) => toSigned(num(bits), width) : (bits) => num(bits);
}

function intRange(type: IntType): { readonly min: bigint; readonly max: bigint } {
  const width = BigInt(widthOf(type));
  return type.startsWith('s')
    ? { min: -(1n << (width - 1n)), max: (1n << (width - 1n)) - 1n }
    : { min: 0n, max: (1n << width) - 1n };
}

/** Encodes an integer value into `type` (wrapping; callers clamp first where required). */
function intWriter(type: IntType): (value: number | bigint) => Bits {
  const width = widthOf(type);
  if (width === 64)
    return (value) => BigInt.asUintN(64, typeof value === 'bigint' ? value : BigInt(value));
  return (value) =>
    typeof value === 'bigint' ? Number(BigInt.asUintN(width, value)) : wrap(value, width);
}

function clampInt(value: number | bigint, type: IntType): number | bigint {
  const { min, max } = intRange(type);
  if (typeof value === 'bigint') return value < min ? min : value > max ? max : value;
  return value < Number(min) ? Number(min) : value > Number(max) ? Number(max) : value;
}

/** Float → integer: NaN gives 0, out-of-range values clamp (cvt saturates float → int by default). */
function floatToInt(value: number, type: IntType): number | bigint {
  if (value !== value) return 0;
  const { min, max } = intRange(type);
  if (value <= Number(min)) return widthOf(type) === 64 ? min : Number(min);
  if (value >= Number(max)) return widthOf(type) === 64 ? max : Number(max);
  return widthOf(type) === 64 ? BigInt(value) : value === 0 ? 0 : value;
}

/** Post-processing of a float result: .ftz for f32, .sat, .relu and .satfinite for the half types. */
function floatFinisher(d: Decoded, type: FloatType): (value: number) => number {
  const ftz = d.has('ftz') && type === 'f32';
  const sat = d.has('sat');
  const relu = d.has('relu');
  const satfinite = d.has('satfinite');
  if ((relu || satfinite) && type !== 'f16' && type !== 'bf16')
    d.fail('.relu/.satfinite need an f16/bf16 result');
  const max = FORMATS[type].maxFinite;
  return (value) => {
    let result = ftz ? flushSubnormal(value, F32) : value;
    if (sat) result = saturate(result);
    if (relu && !(result > 0) && result === result) result = 0;
    if (satfinite && Math.abs(result) === Infinity) result = result > 0 ? max : -max;
    return result;
  };
}

/** The element conversion from one source type to one destination type. */
function converter(
  d: Decoded,
  destination: PtxType,
  source: PtxType,
): (bits: Bits | undefined) => Bits {
  const word = d.rounding([...FLOAT_ROUNDINGS, ...INTEGRAL_ROUNDINGS]);
  const integral = word !== undefined && INTEGRAL_ROUNDINGS.includes(word);
  if (d.has('ftz') && destination !== 'f32' && source !== 'f32')
    d.fail('.ftz needs an .f32 operand');
  if (isIntType(destination) && isIntType(source)) {
    if (word !== undefined) d.fail('rounding on an integer conversion');
    const read = intReader(source);
    const write = intWriter(destination);
    return d.has('sat')
      ? (bits) => write(clampInt(read(bits), destination))
      : (bits) => write(read(bits));
  }
  if (isIntType(destination) && isFloatType(source)) {
    if (!integral) return d.fail('float → integer needs .rni .rzi .rmi or .rpi');
    const mode = integralRounding(word as string);
    const read = floatReader(source);
    const flush = d.has('ftz') ? (x: number) => flushSubnormal(x, F32) : (x: number) => x;
    const write = intWriter(destination);
    return (bits) => write(floatToInt(roundToIntegral(flush(read(bits)), mode), destination));
  }
  if (isFloatType(destination) && isIntType(source)) {
    if (word === undefined || integral) return d.fail('integer → float needs .rn .rz .rm or .rp');
    const fmt = FORMATS[destination];
    const mode = word as Rounding;
    const read = intReader(source);
    const finish = floatFinisher(d, destination);
    const write = floatWriter(destination);
    return (bits) => {
      const value = read(bits);
      const rounded =
        typeof value === 'bigint'
          ? roundDyadic(dyadicOfInteger(value), fmt, mode)
          : roundToFormat(value, fmt, mode);
      return write(finish(rounded));
    };
  }
  if (isFloatType(destination) && isFloatType(source))
    return floatConverter(d, destination, source, word, integral);
  return d.fail(`conversion .${destination}.${source}`);
}

function floatConverter(
  d: Decoded,
  destination: FloatType,
  source: FloatType,
  word: string | undefined,
  integral: boolean,
): (bits: Bits | undefined) => Bits {
  const read = floatReader(source);
  const write = floatWriter(destination);
  const finish = floatFinisher(d, destination);
  const flush =
    d.has('ftz') && source === 'f32' ? (x: number) => flushSubnormal(x, F32) : (x: number) => x;
  if (integral) {
    if (destination !== source) d.fail('integral rounding needs equal types');
    const mode = integralRounding(word as string);
    return (bits) => write(finish(roundToIntegral(flush(read(bits)), mode)));
  }
  const fmt = FORMATS[destination];
  const from = FORMATS[source];
  const narrowing = fmt.precision < from.precision || fmt.maxExponent < from.maxExponent;
  if (narrowing && word === undefined)
    d.fail('a narrowing float conversion needs .rn .rz .rm or .rp');
  // Widening is exact; a rounding written on it changes nothing.
  const mode = (word ?? 'rn') as Rounding;
  return (bits) => write(finish(roundToFormat(flush(read(bits)), fmt, mode)));
}

/**
 * cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype d, a — and .f16x2/.bf16x2 from two f32:
 * the ISA puts cvt(a) in the upper half and cvt(b) in the lower half of d.
 */
function decodeCvt(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, [
    ...FLOAT_ROUNDINGS,
    ...INTEGRAL_ROUNDINGS,
    'ftz',
    'sat',
    'relu',
    'satfinite',
  ]);
  const [destination, source] = d.types;
  if (d.types.length !== 2 || destination === undefined || source === undefined)
    return d.fail('expected .dtype.atype');
  if (destination === 'f16x2' || destination === 'bf16x2') {
    if (source !== 'f32') d.fail('packed conversion needs .f32 sources');
    const element = converter(d, destination === 'f16x2' ? 'f16' : 'bf16', 'f32');
    return aluOp(opcode, ['f32', 'f32'], [destination], ([a, b]) => [
      packHalves(num(element(b)), num(element(a))),
    ]);
  }
  const convert = converter(d, destination, source);
  return aluOp(opcode, [source], [destination], ([a]) => [convert(a)]);
}

export const CONVERT_DECODERS: ReadonlyMap<
  string,
  (opcode: string, modifiers: readonly string[]) => AluOp
> = new Map([['cvt', decodeCvt]]);
