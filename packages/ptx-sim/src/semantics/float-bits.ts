// Bit pattern ⇄ value conversions for the float formats a PTX register holds. Values are JS
// doubles, which hold every f16, bf16, f32 and f64 value exactly.

const f32Cell = new Float32Array(1);
const u32OfF32 = new Uint32Array(f32Cell.buffer);
const f64Cell = new Float64Array(1);
const u64OfF64 = new BigUint64Array(f64Cell.buffer);
const u32OfF64 = new Uint32Array(f64Cell.buffer);
// Index of the high word of a double in u32OfF64 (1 on little-endian hosts).
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** The NaN the simulator produces for f32 results (what NVIDIA GPUs produce; the ISA leaves it unspecified). */
export const F32_NAN = 0x7fffffff;
/** The NaN produced for f16 and bf16 results. */
export const F16_NAN = 0x7fff;
export const BF16_NAN = 0x7fff;
/** The NaN produced for f64 results that have no NaN input to propagate. */
export const F64_NAN = 0x7fffffffffffffffn;

export function f32FromBits(bits: number): number {
  u32OfF32[0] = bits;
  return f32Cell[0] as number;
}

/** Bits of an f32-representable value (callers round first); NaN gives F32_NAN. */
export function f32ToBits(value: number): number {
  if (value !== value) return F32_NAN;
  f32Cell[0] = value;
  return u32OfF32[0] as number;
}

export function f64FromBits(bits: bigint): number {
  u64OfF64[0] = bits;
  return f64Cell[0] as number;
}

/** Bits of a double; NaN gives F64_NAN (use the input's bits where a NaN input should propagate). */
export function f64ToBits(value: number): bigint {
  if (value !== value) return F64_NAN;
  f64Cell[0] = value;
  return u64OfF64[0] as bigint;
}

/** floor(log2(|x|)) for a finite nonzero double; -1023 for double subnormals (callers clamp). */
export function exponentOf(x: number): number {
  f64Cell[0] = x;
  return (((u32OfF64[HIGH] as number) >>> 20) & 0x7ff) - 1023;
}

/** True when the sign bit of x is set (distinguishes -0 from +0). */
export const signBit = (x: number): boolean => x < 0 || (x === 0 && 1 / x < 0);

const POW2_OFFSET = 1100;
const POW2 = new Float64Array(2 * POW2_OFFSET);
POW2[POW2_OFFSET] = 1;
for (let k = 1; k < POW2_OFFSET; k++) {
  POW2[POW2_OFFSET + k] = (POW2[POW2_OFFSET + k - 1] as number) * 2;
  POW2[POW2_OFFSET - k] = (POW2[POW2_OFFSET - k + 1] as number) / 2;
}

/** 2^k exactly (0 below 2^-1074, Infinity from 2^1024), for |k| < 1100. */
export function pow2(k: number): number {
  return POW2[POW2_OFFSET + k] ?? (k < 0 ? 0 : Infinity);
}

const F16_VALUES = new Float64Array(65536);
for (let bits = 0; bits < 65536; bits++) {
  const exponent = (bits >>> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const magnitude =
    exponent === 0
      ? fraction * pow2(-24)
      : exponent === 31
        ? fraction === 0
          ? Infinity
          : NaN
        : (1024 + fraction) * pow2(exponent - 25);
  F16_VALUES[bits] = bits & 0x8000 ? -magnitude : magnitude;
}

export function f16FromBits(bits: number): number {
  return F16_VALUES[bits & 0xffff] as number;
}

/** Bits of an f16-representable value (callers round first); NaN gives F16_NAN. */
export function f16ToBits(value: number): number {
  if (value !== value) return F16_NAN;
  const sign = signBit(value) ? 0x8000 : 0;
  const magnitude = Math.abs(value);
  if (magnitude === Infinity) return sign | 0x7c00;
  if (magnitude < pow2(-14)) return sign | (magnitude / pow2(-24));
  const exponent = exponentOf(magnitude);
  return sign | ((exponent + 15) << 10) | (magnitude / pow2(exponent - 10) - 1024);
}

export function bf16FromBits(bits: number): number {
  return f32FromBits(((bits & 0xffff) << 16) >>> 0);
}

/** Bits of a bf16-representable value (callers round first); NaN gives BF16_NAN. */
export function bf16ToBits(value: number): number {
  if (value !== value) return BF16_NAN;
  return f32ToBits(value) >>> 16;
}

/** Splits an f16x2 / bf16x2 register: element 0 is the low half. */
export const lowHalf = (bits: number): number => bits & 0xffff;
export const highHalf = (bits: number): number => (bits >>> 16) & 0xffff;
export const packHalves = (low: number, high: number): number =>
  ((high << 16) | (low & 0xffff)) >>> 0;
