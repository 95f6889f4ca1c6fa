import { afterAll, describe, expect, it } from 'vitest';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { executionCasesFor } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

// The execution suite shared by every engine, instantiated here for WebGPU (Dawn on lavapipe)
// once per pinned feature set: warps emulated in workgroup memory, and with subgroup shuffles.
const FEATURE_SETS: readonly (readonly WgslFeature[])[] = [[], ['f16', 'subgroups']];

for (const features of FEATURE_SETS) {
  describe(`execution cases on WebGPU, features ${features.join(',') || 'none'}`, () => {
    it.each(executionCasesFor('webgpu').map((testCase) => [testCase.name, testCase] as const))(
      '%s',
      async (_name, testCase) => {
        const kernel = getKernel(testCase.kernelId);
        const shader = emitWgsl(kernel.spec, testCase.schedule, wgslTarget(features));
        const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
        const buffers = makeCaseInputs(kernel, testCase);
        await runWgsl(context, shader, { buffers, params: kernel.params(testCase.shape) });
        const check = checkCase(kernel, testCase, buffers);
        expect(check.nmse).toBeLessThanOrEqual(kernel.tolerance);
        // Not vacuous: the kernel wrote its outputs.
        const energy = kernel.outputs.reduce(
          (sum, name) =>
            sum +
            Array.from(buffers[name] ?? []).reduce((total, value) => total + value * value, 0),
          0,
        );
        expect(energy).toBeGreaterThan(0);
      },
    );
  });
}
