import { packWords, unpack, unpackWords } from '@forge/ir/gguf';
import { getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { describe, expect, it } from 'vitest';
import { EXECUTION_CASES } from './execution-cases.js';
import { gemvConditioning } from './gemv-conditioning.js';

// An f32 dot product errs by ~eps * sum |w x|; a case whose rows cancel far below their typical
// size would test the data's conditioning, not the kernel.
const GEMV_CASES = EXECUTION_CASES.filter(
  (testCase) =>
    getKernel(testCase.kernelId).weights !== undefined &&
    (testCase.shape['n_in'] ?? 0) * (testCase.shape['n_out'] ?? 0) <= 2 ** 20,
);

describe('gemv execution cases', () => {
  it('include cases of every gemv kernel', () => {
    const kernels = new Set(GEMV_CASES.map((testCase) => testCase.kernelId));
    expect([...kernels].sort()).toEqual([
      'q4k-gemv',
      'q4k-soa-wmma',
      'q4k-swiglu-gemv',
      'q6k-gemv',
      'q6k-soa-gemv',
      'q8_0-gemv',
    ]);
  });

  it.each(GEMV_CASES.map((testCase) => [testCase.name, testCase] as const))(
    '%s is well-conditioned',
    (_name, testCase) => {
      const kernel = getKernel(testCase.kernelId);
      const weights = kernel.weights;
      if (weights === undefined) throw new Error(`${testCase.kernelId} has no weight stream`);
      const inputs = makeCaseInputs(kernel, testCase);
      const { shape } = testCase;
      const nIn = shape['n_in'] ?? 0;
      const nOut = shape['n_out'] ?? 0;
      const stored = inputs[weights.buffer] ?? [];
      let native = stored;
      if (weights.fromNative !== undefined) {
        // Back to native rows, checked to be the inverse of the kernel's layout.
        const bytes = unpackWords(stored, weights.bytes(shape));
        const rows = unpack(weights.type, bytes, nOut, nIn);
        expect(weights.fromNative(rows, shape)).toEqual(bytes);
        native = packWords(rows);
      }
      const conditioning = gemvConditioning(weights.type, shape, native, inputs['x'] ?? []);
      expect(conditioning).toBeLessThan(100 * nIn);
    },
  );
});
