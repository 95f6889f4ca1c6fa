// Issue #16 point 2 for the subgroup sizes no adapter here gives, 16, 32, 64 and 128 lanes (4 and 8
// run on real lanes in subgroup-sizes.test.ts): every shared execution case whose shader uses
// subgroup operations, on the WGSL interpreter (src/wgsl-interpreter, checked against Dawn and
// SwiftShader at their own sizes in the execution suites), against its float64 reference.
import { describe, expect, it } from 'vitest';
import { ELEMENT_BYTES } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { executionCasesFor } from '@forge/test-fixtures';
import { caseShader } from './execution-case.test-support.js';
import { runWgslOnCpu } from './wgsl-interpreter/run.test-support.js';

describe('subgroup kernels on the interpreter at the sizes no adapter here gives', () => {
  const subgroupCases = executionCasesFor('webgpu')
    .map((testCase) => ({ testCase, shader: caseShader(testCase, ['f16', 'subgroups']) }))
    .filter(({ shader }) => (shader.launch.requiredFeatures ?? []).includes('subgroups'));
  // Inputs over 4 MiB (8 of 210 cases: the 1000×8192 and 256×4096 mat-vecs, argmax over 16M values,
  // attention over 4096 positions) stay with the devices: they test indexing at scale, not lanes,
  // and would take half the time.
  // From the buffer lengths, so choosing the cases does not generate every case's inputs first.
  const inputBytes = ({ testCase }: (typeof subgroupCases)[number]): number => {
    const kernel = getKernel(testCase.kernelId);
    const lengths = kernel.bufferLengths(testCase.shape);
    return kernel.spec.buffers.reduce(
      (sum, buffer) => sum + (lengths[buffer.name] ?? 0) * ELEMENT_BYTES[buffer.element],
      0,
    );
  };
  const cases = subgroupCases.filter((entry) => inputBytes(entry) <= 4 << 20);

  it('covers every kernel that uses subgroups, and all but the largest cases', () => {
    // rmsnorm and its fused forms, seven mat-vecs, both decode attentions, argmax, and the Q4_K
    // tensor-core mat-vec (which enables subgroups but exchanges through workgroup memory only).
    const kernels = (list: typeof cases): Set<string> =>
      new Set(list.map(({ testCase }) => testCase.kernelId));
    expect(kernels(cases)).toEqual(kernels(subgroupCases));
    expect(kernels(cases).size).toBeGreaterThanOrEqual(11);
    expect(subgroupCases.length - cases.length).toBeLessThanOrEqual(8);
  });

  it.each([16, 32, 64, 128])(
    'subgroups of %i lanes: every case within its tolerance of the float64 reference',
    (subgroupSize) => {
      let shuffled = 0;
      let shuffles = 0;
      for (const { testCase, shader } of cases) {
        const kernel = getKernel(testCase.kernelId);
        const buffers = makeCaseInputs(kernel, testCase);
        const run = runWgslOnCpu(
          shader,
          { buffers, params: kernel.params(testCase.shape) },
          { subgroupSize },
        );
        // Not vacuous: a shader with shuffles took the shuffle path at this size.
        const shuffling = shader.source.includes('subgroupShuffleXor(');
        expect(run.shuffles > 0, `${testCase.name}: shuffles ran`).toBe(shuffling);
        if (shuffling) shuffled += 1;
        shuffles += run.shuffles;
        const { nmse, tolerance } = checkCase(kernel, testCase, buffers);
        expect(nmse, testCase.name).toBeLessThanOrEqual(tolerance);
        const written = kernel.outputs.some((name) =>
          Array.from(buffers[name] ?? []).some((value) => value !== 0),
        );
        expect(written, `${testCase.name}: outputs written`).toBe(true);
      }
      console.log(
        `interpreter, subgroups of ${subgroupSize}: ${cases.length} cases within tolerance, ${shuffled} of them shuffling (${shuffles} shuffled values)`,
      );
    },
    300_000,
  );
});
