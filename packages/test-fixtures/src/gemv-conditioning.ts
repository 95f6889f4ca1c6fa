import type { Shape } from '@forge/ir/kernels';
import { dequantize, quantizedBytes, unpackWords, type QuantType } from '@forge/ir/gguf';

/**
 * sum_r (sum_c |w x|)^2 / sum_r y_r^2 over the dequantized matrix: an f32 dot product errs by
 * ~eps * sum |w x|, so a case far above ~n_in tests the data's cancellation, not the kernel.
 */
export function gemvConditioning(
  type: QuantType,
  shape: Shape,
  words: ArrayLike<number>,
  x: ArrayLike<number>,
): number {
  const nIn = shape['n_in'] ?? 0;
  const nOut = shape['n_out'] ?? 0;
  const weights = dequantize(type, unpackWords(words, quantizedBytes(type, nOut, nIn)), nOut, nIn);
  let absolute = 0;
  let energy = 0;
  for (let r = 0; r < nOut; r++) {
    let sum = 0;
    let magnitude = 0;
    for (let c = 0; c < nIn; c++) {
      const term = (weights[r * nIn + c] ?? 0) * (x[c] ?? 0);
      sum += term;
      magnitude += Math.abs(term);
    }
    absolute += magnitude ** 2;
    energy += sum ** 2;
  }
  return absolute / energy;
}
