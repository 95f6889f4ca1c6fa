// Float32 arithmetic helpers that reproduce ggml's reference quantizers bit for bit.
import { f16Bits, f16FromBits } from '../f16.js';

/** Rounds to float32; every float operation of ggml's C code goes through this, in its order. */
export const fr = Math.fround;

/** ggml's GROUP_MAX_EPS (1e-15f): below it a group counts as all zeros. */
export const GROUP_MAX_EPS = Math.fround(1e-15);

const magic = new Float32Array(1);
const magicBits = new Int32Array(magic.buffer);

/**
 * ggml's nearest_int: adds 1.5 * 2^23 in float32 and reads the low mantissa bits, so it rounds
 * half to even and (for |value| > 2^22) wraps exactly as the C code does.
 */
export function nearestInt(value: number): number {
  magic[0] = value + 12582912;
  return ((magicBits[0] ?? 0) & 0x007fffff) - 0x00400000;
}

/** C's `(int8_t)f` on x86-64: truncate toward zero to int32, keep the low byte as signed. */
export function toInt8(value: number): number {
  return (Math.trunc(value) << 24) >> 24;
}

/** C's roundf: half away from zero. */
export function roundAwayFromZero(value: number): number {
  return value < 0 ? -Math.floor(-value + 0.5) : Math.floor(value + 0.5);
}

/** The f16 at `offset` (little-endian) as a number. */
export function readF16(bytes: Uint8Array, offset: number): number {
  return f16FromBits((bytes[offset] ?? 0) | ((bytes[offset + 1] ?? 0) << 8));
}

/** Stores `value` as f16 (round to nearest even) at `offset` and returns the stored value. */
export function writeF16(bytes: Uint8Array, offset: number, value: number): number {
  const bits = f16Bits(value);
  bytes[offset] = bits & 0xff;
  bytes[offset + 1] = bits >>> 8;
  return f16FromBits(bits);
}
