// Catalog kernel `add-rmsnorm-quantize` and its float64 reference: add-rmsnorm with y quantized as
// the row-streaming mat-vecs quantize x.
import { ValidationError } from '../errors.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { four } from './locals.js';
import { addRmsnorm, addRmsnormReference, rmsnormSpec, rowDims, rowsShape } from './rmsnorm.js';
import { ROUNDING, X_RANGE } from './x-quantize.js';

/**
 * The row-streaming mat-vecs' x quantization of `y` (n values a row) in f32 arithmetic, from the
 * math in x-quantize.ts: per 32 values s = max|y| / 32639, v = round(y / s) kept as the low 16 bits
 * of y / s + 1.5·2^23 + 128, x_high byte i = those bits >> 8, x_low byte = their low byte with its
 * top bit flipped, and the f32 sums of each 8 (scales of a row, then its sums, as the kernel lays
 * them out).
 */
export function quantizeXRows(
  y: Float64Array,
  n: number,
  rows: number,
): { x_quant: Float64Array; x_factors: Float64Array } {
  const groups = n / 32;
  const quant = new Float64Array((rows * n) / 2);
  const factors = new Float64Array(rows * groups * 5);
  const bits = new DataView(new ArrayBuffer(4));
  for (let r = 0; r < rows; r++)
    for (let g = 0; g < groups; g++) {
      const values = Array.from(y.subarray(r * n + 32 * g, r * n + 32 * g + 32), Math.fround);
      const amax = values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const sums = four((j) => values.slice(8 * j, 8 * j + 8).reduce((t, v) => Math.fround(t + v)));
      const total = Math.fround(Math.fround(sums[0] + sums[1]) + Math.fround(sums[2] + sums[3]));
      const inverse = amax > 0 ? Math.fround(X_RANGE / amax) : 0;
      const factorRow = r * groups * 5;
      factors[factorRow + g] = Math.fround(Math.fround(amax / X_RANGE) + total * 0);
      sums.forEach((sum, j) => (factors[factorRow + groups + 4 * g + j] = sum));
      for (let k = 0; k < 8; k++) {
        let [high, low] = [0, 0];
        values.slice(4 * k, 4 * k + 4).forEach((value, i) => {
          bits.setFloat32(0, value * inverse + ROUNDING, true);
          const word = bits.getUint32(0, true);
          high |= ((word >>> 8) & 255) << (8 * i);
          low |= ((word & 255) ^ 0x80) << (8 * i);
        });
        quant[(r * n) / 2 + 16 * g + k] = high >>> 0;
        quant[(r * n) / 2 + 16 * g + 8 + k] = low >>> 0;
      }
    }
  return { x_quant: quant, x_factors: factors };
}

/**
 * Catalog kernel `add-rmsnorm-quantize`: `add-rmsnorm`, then y quantized into x_quant and
 * x_factors exactly as a row-streaming mat-vec's first dispatch would quantize it (`n_embd` a
 * multiple of 128), so the mat-vecs after it run their row dispatch alone.
 */
export const addRmsnormQuantize: CatalogKernel = {
  spec: rmsnormSpec('add-rmsnorm-quantize'),
  ...rowsShape,
  bufferLengths: (shape) => {
    const { values } = rowDims(shape);
    return {
      ...addRmsnorm.bufferLengths(shape),
      x_quant: values / 2,
      x_factors: (values / 32) * 5,
    };
  },
  outputs: ['s', 'y', 'x_quant', 'x_factors'],
  // A value whose y / s lands within y's last bit of a rounding tie may round the other way than
  // from float64 y: v off by one moves a word by up to 2^24 (~6e-8 NMSE a flip at n_embd 4096),
  // where words out of place or wrongly packed give an NMSE near 1.
  outputTolerance: { x_quant: 1e-4 },
  checkShape(shape) {
    const { n } = rowDims(shape);
    if (!Number.isSafeInteger(n) || n < 128 || n % 128 !== 0)
      throw new ValidationError([
        { path: 'n_embd', message: `${n} is not a multiple of 128 (4 quantized groups of 32)` },
      ]);
  },
  reference(inputs, params) {
    const { n, rows } = rowDims(params);
    const { s, y } = addRmsnormReference(inputs, params);
    return { s, y, ...quantizeXRows(y, n, rows) };
  },
};
