import { describe, expect, it } from 'vitest';
import {
  EXECUTION_CASES,
  checkCase,
  evaluateSizeExpression,
  getKernel,
  makeCaseInputs,
  type PtxArch,
} from '@forge/ir';
import { parsePtx, simulate, type KernelArgument } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { ptxTarget } from './targets.js';

// The execution suite shared by every engine, instantiated for the PTX simulator on each golden arch.
const ARCHS: readonly PtxArch[] = ['sm_75', 'sm_80', 'sm_90'];

for (const arch of ARCHS) {
  describe(`execution cases on the PTX simulator, ${arch}`, () => {
    it.each(EXECUTION_CASES.map((testCase) => [testCase.name, testCase] as const))(
      '%s',
      (_name, testCase) => {
        const kernel = getKernel(testCase.kernelId);
        const shader = emitPtx(kernel.spec, testCase.schedule, ptxTarget(arch));
        const buffers = makeCaseInputs(kernel, testCase);
        const params = kernel.params(testCase.shape);
        const args: Record<string, KernelArgument> = {};
        for (const parameter of shader.launch.parameters) {
          const buffer = buffers[parameter.name];
          args[parameter.sourceName] =
            buffer === undefined
              ? { kind: 'scalar', value: params[parameter.name] ?? 0 }
              : { kind: 'buffer', bytes: new Uint8Array(buffer.buffer) };
        }
        const grid = shader.launch.grid.map((axis) => evaluateSizeExpression(axis, params)) as [
          number,
          number,
          number,
        ];
        const result = simulate(parsePtx(shader.source), {
          grid,
          block: [shader.launch.workgroupSize[0], 1, 1],
          args,
        });
        expect(result.findings).toEqual([]);
        const check = checkCase(kernel, testCase, buffers);
        expect(check.nmse).toBeLessThanOrEqual(kernel.tolerance);
        // Every input and output element moves exactly once through global memory.
        for (const [name, data] of Object.entries(buffers)) {
          const traffic = result.counters.buffers[`param_${name}`];
          const bytes = kernel.outputs.includes(name) ? traffic?.bytesWritten : traffic?.bytesRead;
          expect(bytes).toBeGreaterThanOrEqual(data.byteLength);
        }
      },
    );
  });
}
