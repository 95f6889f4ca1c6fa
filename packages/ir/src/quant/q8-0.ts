// Q8_0: 32 values in 34 bytes — f16 d @0, int8 qs[32] @2; value = d * q.
import { BLOCK_GEOMETRY } from './geometry.js';
import { fr, readF16, roundAwayFromZero, toInt8, writeF16 } from './scalar.js';

/** Values per Q8_0 block. */
export const Q8_0_BLOCK_SIZE = BLOCK_GEOMETRY.q8_0.blockSize;
/**
 * Bytes per Q8_0 block: an f16 scale and 32 signed bytes, so every other block of a row starts 2
 * bytes into a word.
 */
export const Q8_0_BLOCK_BYTES = BLOCK_GEOMETRY.q8_0.blockBytes;

/** ggml's quantize_row_q8_0_ref for one block: d = max|x| / 127, q = roundf(x / d). */
export function quantizeBlockQ8_0(
  src: Float32Array,
  srcOffset: number,
  dst: Uint8Array,
  dstOffset: number,
): void {
  let amax = 0;
  for (let j = 0; j < 32; j++) {
    const a = Math.abs(src[srcOffset + j] ?? 0);
    amax = amax > a ? amax : a;
  }
  const d = fr(amax / 127);
  const id = d !== 0 ? fr(1 / d) : 0;
  writeF16(dst, dstOffset, d);
  for (let j = 0; j < 32; j++) {
    const x0 = fr((src[srcOffset + j] ?? 0) * id);
    dst[dstOffset + 2 + j] = toInt8(roundAwayFromZero(x0)) & 0xff;
  }
}

/** ggml's dequantize_row_q8_0 for one block. */
export function dequantizeBlockQ8_0(
  src: Uint8Array,
  srcOffset: number,
  dst: Float32Array,
  dstOffset: number,
): void {
  const d = readF16(src, srcOffset);
  for (let j = 0; j < 32; j++) {
    const q = ((src[srcOffset + 2 + j] ?? 0) << 24) >> 24;
    dst[dstOffset + j] = q * d;
  }
}
