import { afterAll, describe, expect, it } from 'vitest';
import { checkCase, getKernel, makeCaseInputs, seedFromString } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';

afterAll(closeSharedWebGpu);

// Issue #14's whole grid on WebGPU, where a case is milliseconds once the shader is built (the
// shared execution cases take each value on every engine). The kernels use no f16 value and only
// warp exchanges that work without subgroups, so the featureless module is the one to build.
const N_COLS = [1, 2, 7, 8, 16];
const N_OUT = [1, 15, 16, 17, 256];
const GRIDS = [
  { kernelId: 'wmma-gemv', nIn: [16, 256, 4096], tolerance: 1e-10 },
  { kernelId: 'q4k-soa-wmma', nIn: [256, 4096], tolerance: 1e-6 },
];

for (const { kernelId, nIn, tolerance } of GRIDS) {
  const shapes = N_COLS.flatMap((nCols) =>
    N_OUT.flatMap((nOut) => nIn.map((k) => ({ n_cols: nCols, n_out: nOut, n_in: k }))),
  );
  describe(`${kernelId} on WebGPU over every n_cols × n_out × n_in of issue #14`, () => {
    it.each(shapes.map((shape) => [JSON.stringify(shape), shape] as const))(
      '%s',
      async (_label, shape) => {
        const kernel = getKernel(kernelId);
        const shader = emitWgsl(kernel.spec, {}, wgslTarget([]));
        const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
        const name = `${kernelId} grid ${JSON.stringify(shape)}`;
        const testCase = { name, kernelId, schedule: {}, shape, seed: seedFromString(name), magnitude: 1 }; // prettier-ignore
        const buffers = makeCaseInputs(kernel, testCase);
        // Y starts as NaN, so a row or column the kernel misses fails the check.
        buffers['y']?.fill(Number.NaN);
        await runWgsl(context, shader, { buffers, params: kernel.params(shape) });
        expect(checkCase(kernel, testCase, buffers).nmse).toBeLessThanOrEqual(tolerance);
      },
    );
  });
}
