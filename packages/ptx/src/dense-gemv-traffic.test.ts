import { describe, expect, it } from 'vitest';
import { compareWithReference, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { dramBytesRead, sectorEfficiency } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';

type Shape = Readonly<Record<string, number>>;

/** The simulator's W and DRAM figures for one shape and schedule on sm_80, after checking results. */
function simulateCase(kernelId: string, shape: Shape, schedule: Shape = {}) {
  const kernel = getKernel(kernelId);
  const name = `${kernelId} traffic ${JSON.stringify(shape)} ${JSON.stringify(schedule)}`;
  const testCase = { name, kernelId, schedule, shape, seed: 5, magnitude: 1 };
  const buffers = makeCaseInputs(kernel, testCase);
  const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
  const params = kernel.params(shape);
  const result = simulateShader(
    emitPtx(kernel.spec, schedule, ptxTarget('sm_80')),
    buffers,
    params,
  );
  expect(result.findings).toEqual([]);
  expect(compareWithReference(kernel, inputs, params, buffers).nmse).toBeLessThanOrEqual(1e-10);
  const bytes = (buffer: string) => buffers[buffer]!.byteLength;
  // DRAM moves whole 32-byte sectors: a buffer counts rounded up to one.
  const sectors = (buffer: string) => 32 * Math.ceil(bytes(buffer) / 32);
  return {
    wRead: result.counters.buffers['param_w']?.bytesRead,
    wBytes: bytes('w'),
    sectors: sectorEfficiency(result.counters, ['param_w']),
    dram: dramBytesRead(result.counters),
    all: sectors('w') + sectors('x') + sectors('y'),
  };
}

// Issue #15: every W byte loaded once, in ≥ 95% efficient sectors where rows start on a sector
// (n_in a multiple of 8 f32 or 16 f16 values), DRAM ≤ 1.02 × (W + x + y).
describe('f32-gemv and f16-gemv traffic on the PTX simulator (sm_80)', () => {
  it.each([
    ['f32-gemv', { n_out: 256, n_in: 4096 }, {}],
    ['f16-gemv', { n_out: 256, n_in: 4096 }, {}],
    ['f32-gemv', { n_out: 17, n_in: 11008 }, { vectors: 4 }],
    ['f16-gemv', { n_out: 17, n_in: 11008 }, { vectors: 1, workgroupSize: 32 }],
  ] as const)('%s %o %o reads W once in whole sectors', (kernelId, shape, schedule) => {
    const { wRead, wBytes, sectors, dram, all } = simulateCase(kernelId, shape, schedule);
    expect(wRead).toBe(wBytes);
    expect(sectors).toBeGreaterThanOrEqual(0.95);
    expect(dram).toBeLessThanOrEqual(1.02 * all);
  });

  // Rows off the sector grid split their edge sectors between two warps' loads: still read once.
  it.each([
    ['f32-gemv', { n_out: 16, n_in: 255 }],
    ['f32-gemv', { n_out: 256, n_in: 257 }],
    ['f32-gemv', { n_out: 17, n_in: 7 }],
    ['f16-gemv', { n_out: 17, n_in: 254 }],
    ['f16-gemv', { n_out: 3, n_in: 6 }],
  ] as const)('%s %o reads W once at the edges', (kernelId, shape) => {
    const { wRead, wBytes, dram, all } = simulateCase(kernelId, shape);
    expect(wRead).toBe(wBytes);
    expect(dram).toBeLessThanOrEqual(1.02 * all);
  });
});
