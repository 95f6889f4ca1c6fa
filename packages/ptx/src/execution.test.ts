import { describe, expect, it } from 'vitest';
import { evaluateSizeExpression } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { executionCasesFor, testTier } from '@forge/test-fixtures';
import { dramBytesRead, sectorEfficiency } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';
import { bodyMismatches, distinctBodies } from './arch-bodies.test-support.js';

// The execution suite shared by every engine, instantiated for the PTX simulator on each distinct
// PTX body the golden archs emit: archs whose modules differ only in `.version`/`.target` share a run.
// Every case in `pnpm test:full`, one a kernel in `pnpm test` (see executionCasesFor).
const RUNS = executionCasesFor('ptx-sim', testTier()).flatMap((testCase) => {
  const kernel = getKernel(testCase.kernelId);
  return distinctBodies((arch) => emitPtx(kernel.spec, testCase.schedule, ptxTarget(arch))).map(
    (group) => [`${testCase.name} on ${group.archs.join('+')}`, testCase, group] as const,
  );
});

describe('execution cases on the PTX simulator, once per distinct body', () => {
  it.each(RUNS)('%s', (_name, testCase, group) => {
    expect(bodyMismatches(group)).toEqual([]);
    const kernel = getKernel(testCase.kernelId);
    const shader = group.shader;
    const buffers = makeCaseInputs(kernel, testCase);
    const params = kernel.params(testCase.shape);
    const result = simulateShader(shader, buffers, params);
    expect(result.findings).toEqual([]);
    const check = checkCase(kernel, testCase, buffers);
    expect(check.nmse).toBeLessThanOrEqual(check.tolerance);
    // Every input and output element moves at least once through global memory (the weights'
    // alignment padding excepted: it is zero and never needed), but for what a case exempts.
    const weights = kernel.weights;
    const padding = weights?.paddingBytes?.(testCase.shape) ?? 0;
    const exempt = [...(testCase.partlyRead ?? []), ...(testCase.partlyWritten ?? [])];
    for (const [name, data] of Object.entries(buffers)) {
      const traffic = result.counters.buffers[`param_${name}`];
      const bytes = kernel.outputs.includes(name) ? traffic?.bytesWritten : traffic?.bytesRead;
      const skipped = name === weights?.buffer ? padding : 0;
      if (!exempt.includes(name)) expect(bytes).toBeGreaterThanOrEqual(data.byteLength - skipped);
    }
    // The weight stream is read once, in full sectors, where the shape allows it: counted as the
    // distinct bytes each warp-level load asks for, since lanes sharing bytes in one request (a
    // block's header, a ragged step's last block) cost no more traffic.
    const bounds = testCase.weightTraffic;
    if (weights !== undefined && bounds !== undefined) {
      const buffer = `param_${weights.buffer}`;
      const read = result.counters.buffers[buffer]?.requestedBytes ?? Infinity;
      const payload = weights.bytes(testCase.shape) - padding;
      expect(read / payload).toBeLessThanOrEqual(bounds.maxReadRatio);
      expect(sectorEfficiency(result.counters, [buffer])).toBeGreaterThanOrEqual(
        bounds.minSectorEfficiency,
      );
    }
    // Behind a modeled L2, DRAM reads stay within the weights as stored plus the other buffers;
    // DRAM moves whole 32-byte sectors, so a buffer's size counts rounded up to one.
    if (weights !== undefined) {
      const sectors = (size: number): number => 32 * Math.ceil(size / 32);
      // Scratch a later dispatch reads counts too: each dispatch runs behind a cold L2.
      const sizes = { ...params, ...shader.schedule };
      const scratch = (shader.launch.scratch ?? []).reduce(
        (sum, buffer) => sum + sectors(evaluateSizeExpression(buffer.bytes, sizes)),
        0,
      );
      const others = Object.entries(buffers)
        .filter(([name]) => name !== weights.buffer)
        .reduce((sum, [, data]) => sum + sectors(data.byteLength), scratch);
      expect(dramBytesRead(result.counters)).toBeLessThanOrEqual(
        1.02 * sectors(weights.bytes(testCase.shape)) + others,
      );
    }
  });
});
