import { afterAll, describe, expect, it } from 'vitest';
import { checkCase, getKernel, makeCaseInputs, seedFromString } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';

afterAll(closeSharedWebGpu);

// Issue #14's whole grid on WebGPU, where a case is milliseconds once the shader is built (the
// shared execution cases take each value on every engine). The kernel uses no f16 value and no
// subgroup operation, so every feature set renders the same body: one is enough.
const N_COLS = [1, 2, 7, 8, 16];
const N_OUT = [1, 15, 16, 17, 256];
const N_IN = [16, 256, 4096];
const GRID = N_COLS.flatMap((nCols) =>
  N_OUT.flatMap((nOut) => N_IN.map((nIn) => ({ n_cols: nCols, n_out: nOut, n_in: nIn }))),
);

describe('wmma-gemv on WebGPU over every n_cols × n_out × n_in of issue #14', () => {
  it.each(GRID.map((shape) => [JSON.stringify(shape), shape] as const))(
    '%s',
    async (_label, shape) => {
      const kernel = getKernel('wmma-gemv');
      const shader = emitWgsl(kernel.spec, {}, wgslTarget([]));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      const name = `wmma-gemv grid ${JSON.stringify(shape)}`;
      const testCase = { name, kernelId: 'wmma-gemv', schedule: {}, shape, seed: seedFromString(name), magnitude: 1 }; // prettier-ignore
      const buffers = makeCaseInputs(kernel, testCase);
      // Y starts as NaN, so a row or column the kernel misses fails the check.
      buffers['y']?.fill(Number.NaN);
      await runWgsl(context, shader, { buffers, params: kernel.params(shape) });
      expect(checkCase(kernel, testCase, buffers).nmse).toBeLessThanOrEqual(1e-10);
    },
  );
});
