import { describe, expect, it } from 'vitest';
import { defineKernel, ir } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { type ExecutionCase } from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { printPtxIr } from './printed-ir.js';
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

// Thread i copies x[i + 1] to y[i]: the last thread reads one element past x.
const SHIFTED_COPY = defineKernel(
  {
    id: 'shifted-copy',
    semanticVersion: 1,
    entryPoint: 'shifted_copy',
    description: 'y[i] = x[i + 1], one element too far for the last thread',
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'y', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '64', grid: ['ceil_div(n, 64)', '1', '1'] },
  },
  (b) => {
    const { i } = b.let({ i: ir.add(ir.mul(b.workgroupId('x'), ir.u32(64)), b.localId()) });
    b.if(ir.lt(i, b.param('n')), (then) =>
      then.store('y', i, then.load('x', ir.add(i, ir.u32(1)))),
    );
  },
);

describe('sanitizer findings in Forge PTX', () => {
  it("name the printed IR's file and the line of the statement that faulted", () => {
    const target = ptxTarget('sm_80');
    const shader = emitPtx(SHIFTED_COPY, {}, target);
    const printed = printPtxIr(SHIFTED_COPY, {}, target);
    const x = new Float32Array(64);
    const result = simulateShader(shader, { x, y: new Float32Array(64) }, { n: 64 });
    expect(result.findings).toHaveLength(1);
    const [finding] = result.findings;
    expect(finding?.category).toBe('out-of-bounds');
    const [file, line, column] = (finding?.source ?? '').split(':');
    expect([file, column]).toEqual(['shifted-copy.forge', '1']);
    expect(printed.text.split('\n')[Number(line) - 1]).toBe('    y[i] = x[(i + 1u32)]');
  });
});
