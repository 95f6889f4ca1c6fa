// Q4_K: 256 values in 144 bytes — f16 d @0, f16 dmin @2, scales[12] @4 (eight 6-bit scales and
// mins), qs[128] @16; value = d*sc*q - dmin*m per 32-value sub-block.
import { BLOCK_GEOMETRY } from './geometry.js';
import { fr, nearestInt, readF16, writeF16 } from './scalar.js';

/** Values per Q4_K super-block (8 sub-blocks of 32). */
export const Q4_K_BLOCK_SIZE = BLOCK_GEOMETRY.q4_K.blockSize;
/**
 * Bytes per Q4_K super-block: f16 d and dmin, 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit
 * values.
 */
export const Q4_K_BLOCK_BYTES = BLOCK_GEOMETRY.q4_K.blockBytes;

/** The 6-bit scale and min of sub-block `j` from the 12 packed bytes at `offset`. */
export function q4kScaleMin(bytes: Uint8Array, offset: number, j: number): [number, number] {
  const at = (i: number): number => bytes[offset + i] ?? 0;
  if (j < 4) return [at(j) & 63, at(j + 4) & 63];
  return [(at(j + 4) & 0xf) | ((at(j - 4) >> 6) << 4), (at(j + 4) >> 4) | ((at(j) >> 6) << 4)];
}

// Scratch for one block; the codecs are synchronous, so sharing them is safe.
const levels = new Uint8Array(256);
const trial = new Uint8Array(32);
const weights = new Float32Array(32);
const scales = new Float32Array(8);
const mins = new Float32Array(8);
const packed = new Uint8Array(12);

const RMIN = -1;
const RDELTA = Math.fround(0.1);
const NSTEP = 20;

/**
 * ggml's make_qkx2_quants(32, 15, x, weights, L, &min, Laux, -1.f, 0.1f, 20, false): fits
 * x ≈ scale*L - min by weighted least squares over 21 candidate scales. Returns the scale and
 * stores the min (as a non-negative offset) in mins[sub].
 */
function fitScaleAndMin(x: Float32Array, xo: number, sub: number): number {
  const lo = 32 * sub;
  let min = x[xo] ?? 0;
  let max = min;
  let sumW = weights[0] ?? 0;
  let sumX = fr(sumW * min);
  for (let i = 1; i < 32; i++) {
    const xi = x[xo + i] ?? 0;
    if (xi < min) min = xi;
    if (xi > max) max = xi;
    const w = weights[i] ?? 0;
    sumW = fr(sumW + w);
    sumX = fr(sumX + fr(w * xi));
  }
  if (min > 0) min = 0;
  if (max === min) {
    levels.fill(0, lo, lo + 32);
    mins[sub] = -min;
    return 0;
  }
  let iscale = fr(15 / fr(max - min));
  let scale = fr(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < 32; i++) {
    const xi = x[xo + i] ?? 0;
    const l = Math.max(0, Math.min(15, nearestInt(fr(iscale * fr(xi - min)))));
    levels[lo + i] = l;
    const diff = fr(fr(fr(scale * l) + min) - xi);
    bestError = fr(bestError + fr((weights[i] ?? 0) * fr(diff * diff)));
  }
  for (let is = 0; is <= NSTEP; is++) {
    // `min` moves when a candidate wins, and ggml re-reads it here and below.
    iscale = fr(fr(fr(RMIN + fr(RDELTA * is)) + 15) / fr(max - min));
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < 32; i++) {
      const xi = x[xo + i] ?? 0;
      const l = Math.max(0, Math.min(15, nearestInt(fr(iscale * fr(xi - min)))));
      trial[i] = l;
      const wl = fr((weights[i] ?? 0) * l);
      sumL = fr(sumL + wl);
      sumL2 = fr(sumL2 + fr(wl * l));
      sumXL = fr(sumXL + fr(wl * xi));
    }
    const det = fr(fr(sumW * sumL2) - fr(sumL * sumL));
    if (!(det > 0)) continue;
    let thisScale = fr(fr(fr(sumW * sumXL) - fr(sumX * sumL)) / det);
    let thisMin = fr(fr(fr(sumL2 * sumX) - fr(sumL * sumXL)) / det);
    if (thisMin > 0) {
      thisMin = 0;
      thisScale = fr(sumXL / sumL2);
    }
    let error = 0;
    for (let i = 0; i < 32; i++) {
      const diff = fr(fr(fr(thisScale * (trial[i] ?? 0)) + thisMin) - (x[xo + i] ?? 0));
      error = fr(error + fr((weights[i] ?? 0) * fr(diff * diff)));
    }
    if (error < bestError) {
      levels.set(trial, lo);
      bestError = error;
      scale = thisScale;
      min = thisMin;
    }
  }
  mins[sub] = -min;
  return scale;
}

/** ggml's quantize_row_q4_K_ref for one block of 256 values. */
export function quantizeBlockQ4_K(
  src: Float32Array,
  srcOffset: number,
  dst: Uint8Array,
  dstOffset: number,
): void {
  let maxScale = 0;
  let maxMin = 0;
  for (let j = 0; j < 8; j++) {
    const xo = srcOffset + 32 * j;
    let sumX2 = 0;
    for (let l = 0; l < 32; l++) {
      const v = src[xo + l] ?? 0;
      sumX2 = fr(sumX2 + fr(v * v));
    }
    const avX = fr(Math.sqrt(fr(sumX2 / 32)));
    for (let l = 0; l < 32; l++) weights[l] = avX + Math.abs(src[xo + l] ?? 0);
    const scale = fitScaleAndMin(src, xo, j);
    scales[j] = scale;
    if (scale > maxScale) maxScale = scale;
    const min = mins[j] ?? 0;
    if (min > maxMin) maxMin = min;
  }
  const invScale = maxScale > 0 ? fr(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? fr(63 / maxMin) : 0;
  packed.fill(0);
  for (let j = 0; j < 8; j++) {
    // C stores nearest_int's int in a uint8_t before clamping to 63.
    const ls = Math.min(63, nearestInt(fr(invScale * (scales[j] ?? 0))) & 0xff);
    const lm = Math.min(63, nearestInt(fr(invMin * (mins[j] ?? 0))) & 0xff);
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      packed[j - 4] = (packed[j - 4] ?? 0) | ((ls >> 4) << 6);
      packed[j] = (packed[j] ?? 0) | ((lm >> 4) << 6);
    }
  }
  const d = writeF16(dst, dstOffset, fr(maxScale / 63));
  const dmin = writeF16(dst, dstOffset + 2, fr(maxMin / 63));
  dst.set(packed, dstOffset + 4);
  for (let j = 0; j < 8; j++) {
    const [sc, m] = q4kScaleMin(packed, 0, j);
    const dj = fr(d * sc);
    // A zero scale keeps make_qkx2_quants's levels, as ggml does.
    if (dj === 0) continue;
    const dm = fr(dmin * m);
    for (let i = 0; i < 32; i++) {
      const l = nearestInt(fr(fr((src[srcOffset + 32 * j + i] ?? 0) + dm) / dj));
      levels[32 * j + i] = Math.max(0, Math.min(15, l));
    }
  }
  const qs = dstOffset + 16;
  for (let c = 0; c < 4; c++) {
    for (let l = 0; l < 32; l++) {
      dst[qs + 32 * c + l] = (levels[64 * c + l] ?? 0) | ((levels[64 * c + 32 + l] ?? 0) << 4);
    }
  }
}

/** ggml's dequantize_row_q4_K for one block: round(round(d*sc*q) - dmin*m), no fused multiply-add. */
export function dequantizeBlockQ4_K(
  src: Uint8Array,
  srcOffset: number,
  dst: Float32Array,
  dstOffset: number,
): void {
  const d = readF16(src, srcOffset);
  const dmin = readF16(src, srcOffset + 2);
  for (let c = 0; c < 4; c++) {
    const [sc1, m1] = q4kScaleMin(src, srcOffset + 4, 2 * c);
    const [sc2, m2] = q4kScaleMin(src, srcOffset + 4, 2 * c + 1);
    const d1 = fr(d * sc1);
    const min1 = fr(dmin * m1);
    const d2 = fr(d * sc2);
    const min2 = fr(dmin * m2);
    const q = srcOffset + 16 + 32 * c;
    const y = dstOffset + 64 * c;
    for (let l = 0; l < 32; l++) {
      const byte = src[q + l] ?? 0;
      dst[y + l] = fr(d1 * (byte & 0xf)) - min1;
      dst[y + 32 + l] = fr(d2 * (byte >> 4)) - min2;
    }
  }
}
