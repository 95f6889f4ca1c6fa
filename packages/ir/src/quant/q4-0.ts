// Q4_0: 32 values in 18 bytes — f16 d @0, qs[16] @2; value l = ((qs[l] & 15) - 8) * d, l + 16 uses the high nibble.
import { BLOCK_GEOMETRY } from './geometry.js';
import { fr, readF16, toInt8, writeF16 } from './scalar.js';

/** Values per Q4_0 block. */
export const Q4_0_BLOCK_SIZE = BLOCK_GEOMETRY.q4_0.blockSize;
/** Bytes per Q4_0 block: an f16 scale and 16 bytes of 4-bit values. */
export const Q4_0_BLOCK_BYTES = BLOCK_GEOMETRY.q4_0.blockBytes;

/** ggml's quantize_row_q4_0_ref for one block: d = -(value of largest magnitude) / 8. */
export function quantizeBlockQ4_0(
  src: Float32Array,
  srcOffset: number,
  dst: Uint8Array,
  dstOffset: number,
): void {
  let amax = 0;
  let max = 0;
  for (let j = 0; j < 32; j++) {
    const v = src[srcOffset + j] ?? 0;
    if (amax < Math.abs(v)) {
      amax = Math.abs(v);
      max = v;
    }
  }
  const d = fr(max / -8);
  const id = d !== 0 ? fr(1 / d) : 0;
  writeF16(dst, dstOffset, d);
  for (let j = 0; j < 16; j++) {
    const x0 = fr((src[srcOffset + j] ?? 0) * id);
    const x1 = fr((src[srcOffset + 16 + j] ?? 0) * id);
    const q0 = Math.min(15, toInt8(fr(x0 + 8.5))) & 0xff;
    const q1 = Math.min(15, toInt8(fr(x1 + 8.5))) & 0xff;
    dst[dstOffset + 2 + j] = (q0 | (q1 << 4)) & 0xff;
  }
}

/** ggml's dequantize_row_q4_0 for one block. */
export function dequantizeBlockQ4_0(
  src: Uint8Array,
  srcOffset: number,
  dst: Float32Array,
  dstOffset: number,
): void {
  const d = readF16(src, srcOffset);
  for (let j = 0; j < 16; j++) {
    const q = src[srcOffset + 2 + j] ?? 0;
    dst[dstOffset + j] = ((q & 15) - 8) * d;
    dst[dstOffset + 16 + j] = ((q >> 4) - 8) * d;
  }
}
