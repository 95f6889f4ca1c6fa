import { getKernel, makeCaseInputs, unpackF16Words } from '@forge/ir/kernels';
import { describe, expect, it } from 'vitest';
import { DENSE_GEMV_CASES } from './dense-gemv-cases.js';

/**
 * sum_r (sum_k |w x|)^2 / sum_r y_r^2: an f32 dot product errs by ~eps · sum |w x|, so a case far
 * above ~n_in tests the data's cancellation (one row summing near zero), not the kernel.
 */
function conditioning(w: ArrayLike<number>, x: ArrayLike<number>, nOut: number, nIn: number) {
  let [absolute, energy] = [0, 0];
  for (let r = 0; r < nOut; r++) {
    let [sum, magnitude] = [0, 0];
    for (let k = 0; k < nIn; k++) {
      const term = (w[r * nIn + k] ?? 0) * (x[k] ?? 0);
      sum += term;
      magnitude += Math.abs(term);
    }
    absolute += magnitude ** 2;
    energy += sum ** 2;
  }
  return absolute / energy;
}

describe('f32-gemv and f16-gemv execution cases', () => {
  it.each(DENSE_GEMV_CASES.map((testCase) => [testCase.name, testCase] as const))(
    '%s is well-conditioned',
    (_name, testCase) => {
      const kernel = getKernel(testCase.kernelId);
      const inputs = makeCaseInputs(kernel, testCase);
      const [nOut, nIn] = [testCase.shape['n_out'] ?? 0, testCase.shape['n_in'] ?? 0];
      const stored = inputs['w'] ?? [];
      const w = testCase.kernelId === 'f16-gemv' ? unpackF16Words(stored, nOut * nIn) : stored;
      expect(w.length).toBe(nOut * nIn);
      expect(conditioning(w, inputs['x'] ?? [], nOut, nIn)).toBeLessThan(100 * nIn);
    },
  );
});
