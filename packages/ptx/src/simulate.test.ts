import { describe, expect, it } from 'vitest';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { type ExecutionCase } from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';

// 1000 elements: not a whole number of 256-thread blocks, so the grid and the bounds guard count.
const AFFINE: ExecutionCase = {
  name: 'simulateShader affine-f32',
  kernelId: 'affine-f32',
  schedule: {},
  shape: { n: 1000 },
  seed: 7,
  magnitude: 2,
};

describe('simulateShader', () => {
  const kernel = getKernel(AFFINE.kernelId);
  const shader = emitPtx(kernel.spec, AFFINE.schedule, ptxTarget('sm_80'));

  it("binds the shader's buffers, scalars and grid, and writes the outputs in place", () => {
    const buffers = makeCaseInputs(kernel, AFFINE);
    const before = Float32Array.from(buffers['y'] ?? []);
    const result = simulateShader(shader, buffers, kernel.params(AFFINE.shape));
    expect(result.findings).toEqual([]);
    expect(buffers['y']).not.toEqual(before);
    expect(checkCase(kernel, AFFINE, buffers).nmse).toBeLessThanOrEqual(kernel.tolerance);
    expect(result.counters.buffers['param_y']?.bytesWritten).toBe(4 * 1000);
  });

  it('passes simulator settings through and runs `source` in place of the shader text', () => {
    const buffers = makeCaseInputs(kernel, AFFINE);
    const params = kernel.params(AFFINE.shape);
    const renamed = shader.source.replaceAll(shader.launch.entryPoint, 'renamed_entry');
    expect(() => simulateShader(shader, buffers, params, { source: renamed })).toThrow(
      /renamed_entry|entry/,
    );
    // 1000 threads run more than 10 instructions: the budget stops the run.
    expect(() => simulateShader(shader, buffers, params, { maxThreadInstructions: 10 })).toThrow(
      /more than 10 thread instructions/,
    );
    const unsanitized = simulateShader(shader, buffers, params, { sanitize: false });
    expect(unsanitized.findings).toEqual([]);
    expect(checkCase(kernel, AFFINE, buffers).nmse).toBeLessThanOrEqual(kernel.tolerance);
  });
});
