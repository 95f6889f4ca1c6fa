// IEEE binary16 conversions with round-to-nearest-even, shared by the interpreter and the quant codecs.

const scratch = new DataView(new ArrayBuffer(4));

/** The bits of the f16 nearest to `value` (ties to even; overflow to infinity; NaN stays NaN). */
export function f16Bits(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  // Work on the f32 bits: a GPU converts an f32, so rounding through a double would differ.
  const unbiased = exponent - 127;
  if (unbiased > 15) return sign | 0x7c00;
  if (unbiased >= -14) {
    let half = ((unbiased + 15) << 10) | (mantissa >>> 13);
    const rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
    return sign | half;
  }
  if (unbiased < -25) return sign;
  // Subnormal f16: value / 2^-24, with the 24-bit significand shifted right by 14..24 bits.
  mantissa |= 0x800000;
  const dropBits = -unbiased - 1;
  let result = mantissa >>> dropBits;
  const remainder = mantissa & ((1 << dropBits) - 1);
  const halfway = 1 << (dropBits - 1);
  if (remainder > halfway || (remainder === halfway && (result & 1) === 1)) result++;
  return sign | result;
}

/**
 * The u32 word holding `lo` in its low 16 bits and `hi` in its high 16 bits, each as the nearest f16
 * (the IR's `pack_half`; `unpack_half` reads them back).
 */
export function packHalfBits(lo: number, hi: number): number {
  return (f16Bits(lo) | (f16Bits(hi) << 16)) >>> 0;
}

/** The value of f16 bits as a number. */
export function f16FromBits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : Number.NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** `value` rounded to the nearest f16 (through f32, as a GPU's cvt.rn.f16.f32 sees an f32 input). */
export function roundToF16(value: number): number {
  return f16FromBits(f16Bits(value));
}
