// Q6_K: 256 values in 210 bytes — ql[128] @0 (low 4 bits), qh[64] @128 (high 2 bits),
// int8 scales[16] @192 (one per 16 values), f16 d @208; value = d * scale * (q - 32).
import { BLOCK_GEOMETRY } from './geometry.js';
import { GROUP_MAX_EPS, fr, nearestInt, readF16, writeF16 } from './scalar.js';

/** Values per Q6_K super-block (16 sub-blocks of 16). */
export const Q6_K_BLOCK_SIZE = BLOCK_GEOMETRY.q6_K.blockSize;
/**
 * Bytes per Q6_K super-block: 128 bytes of low 4 bits, 64 of high 2 bits, 16 signed scales and an
 * f16 d; every other block starts 2 bytes into a word.
 */
export const Q6_K_BLOCK_BYTES = BLOCK_GEOMETRY.q6_K.blockBytes;

// Scratch for one block; the codecs are synchronous, so sharing them is safe.
const levels = new Uint8Array(256);
const scales = new Float32Array(16);

const TENTH = Math.fround(0.1);

/** One pass of make_qx_quants at `iscale`: the weighted sums Σw·x·l and Σw·l² (w = x²). */
function sums(x: Float32Array, xo: number, iscale: number): [number, number] {
  let sumLX = 0;
  let sumL2 = 0;
  for (let i = 0; i < 16; i++) {
    const xi = x[xo + i] ?? 0;
    const l = Math.max(-32, Math.min(31, nearestInt(fr(iscale * xi))));
    const w = fr(xi * xi);
    sumLX = fr(sumLX + fr(fr(w * xi) * l));
    sumL2 = fr(sumL2 + fr(fr(w * l) * l));
  }
  return [sumLX, sumL2];
}

function setLevels(x: Float32Array, xo: number, iscale: number, lo: number): void {
  for (let i = 0; i < 16; i++) {
    const l = nearestInt(fr(iscale * (x[xo + i] ?? 0)));
    levels[lo + i] = 32 + Math.max(-32, Math.min(31, l));
  }
}

/**
 * ggml's make_qx_quants(16, 32, x, L, 1, NULL): signed 6-bit levels for 16 values, trying 19
 * scales near -32/max and keeping the one with the best x²-weighted least-squares fit.
 */
function fitScale(x: Float32Array, xo: number, lo: number): number {
  let max = 0;
  let amax = 0;
  for (let i = 0; i < 16; i++) {
    const v = x[xo + i] ?? 0;
    if (Math.abs(v) > amax) {
      amax = Math.abs(v);
      max = v;
    }
  }
  if (amax < GROUP_MAX_EPS) {
    levels.fill(0, lo, lo + 16);
    return 0;
  }
  let iscale = fr(-32 / max);
  setLevels(x, xo, iscale, lo);
  let [sumLX, sumL2] = sums(x, xo, iscale);
  let scale = sumL2 !== 0 ? fr(sumLX / sumL2) : 0;
  let best = fr(scale * sumLX);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = fr(-fr(32 + fr(TENTH * is)) / max);
    [sumLX, sumL2] = sums(x, xo, iscale);
    if (sumL2 > 0 && fr(sumLX * sumLX) > fr(best * sumL2)) {
      setLevels(x, xo, iscale, lo);
      scale = fr(sumLX / sumL2);
      best = fr(scale * sumLX);
    }
  }
  return scale;
}

/** ggml's quantize_row_q6_K_ref for one block of 256 values. */
export function quantizeBlockQ6_K(
  src: Float32Array,
  srcOffset: number,
  dst: Uint8Array,
  dstOffset: number,
): void {
  let maxScale = 0;
  let maxAbsScale = 0;
  for (let ib = 0; ib < 16; ib++) {
    const scale = fitScale(src, srcOffset + 16 * ib, 16 * ib);
    scales[ib] = scale;
    if (Math.abs(scale) > maxAbsScale) {
      maxAbsScale = Math.abs(scale);
      maxScale = scale;
    }
  }
  if (maxAbsScale < GROUP_MAX_EPS) {
    dst.fill(0, dstOffset, dstOffset + Q6_K_BLOCK_BYTES);
    return;
  }
  const iscale = fr(-128 / maxScale);
  const d = writeF16(dst, dstOffset + 208, fr(1 / iscale));
  for (let ib = 0; ib < 16; ib++) {
    // C stores the int in an int8_t: keep the low byte.
    dst[dstOffset + 192 + ib] = Math.min(127, nearestInt(fr(iscale * (scales[ib] ?? 0)))) & 0xff;
  }
  for (let j = 0; j < 16; j++) {
    const dj = fr(d * (((dst[dstOffset + 192 + j] ?? 0) << 24) >> 24));
    // A zero scale keeps make_qx_quants's levels, as ggml does.
    if (dj === 0) continue;
    for (let i = 0; i < 16; i++) {
      const l = nearestInt(fr((src[srcOffset + 16 * j + i] ?? 0) / dj));
      levels[16 * j + i] = 32 + Math.max(-32, Math.min(31, l));
    }
  }
  for (let h = 0; h < 2; h++) {
    const ql = dstOffset + 64 * h;
    const qh = dstOffset + 128 + 32 * h;
    const base = 128 * h;
    for (let l = 0; l < 32; l++) {
      const q1 = levels[base + l] ?? 0;
      const q2 = levels[base + l + 32] ?? 0;
      const q3 = levels[base + l + 64] ?? 0;
      const q4 = levels[base + l + 96] ?? 0;
      dst[ql + l] = (q1 & 0xf) | ((q3 & 0xf) << 4);
      dst[ql + l + 32] = (q2 & 0xf) | ((q4 & 0xf) << 4);
      dst[qh + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
    }
  }
}

/** ggml's dequantize_row_q6_K for one block. */
export function dequantizeBlockQ6_K(
  src: Uint8Array,
  srcOffset: number,
  dst: Float32Array,
  dstOffset: number,
): void {
  const d = readF16(src, srcOffset + 208);
  for (let h = 0; h < 2; h++) {
    const ql = srcOffset + 64 * h;
    const qh = srcOffset + 128 + 32 * h;
    const sc = srcOffset + 192 + 8 * h;
    const y = dstOffset + 128 * h;
    for (let l = 0; l < 32; l++) {
      const s = sc + (l >> 4);
      const low = src[ql + l] ?? 0;
      const high = src[ql + l + 32] ?? 0;
      const top = src[qh + l] ?? 0;
      dst[y + l] = fr(d * (((src[s] ?? 0) << 24) >> 24)) * (((low & 0xf) | ((top & 3) << 4)) - 32);
      dst[y + l + 32] =
        fr(d * (((src[s + 2] ?? 0) << 24) >> 24)) * (((high & 0xf) | (((top >> 2) & 3) << 4)) - 32);
      dst[y + l + 64] =
        fr(d * (((src[s + 4] ?? 0) << 24) >> 24)) * (((low >> 4) | (((top >> 4) & 3) << 4)) - 32);
      dst[y + l + 96] =
        fr(d * (((src[s + 6] ?? 0) << 24) >> 24)) * (((high >> 4) | (((top >> 6) & 3) << 4)) - 32);
    }
  }
}
