import { describe, expect, it } from 'vitest';
import { compareWithReference, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { dramBytesRead, sectorEfficiency, totalWarpInstructions } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';

// Issue #14, for both tensor-core mat-vec kernels: W read once (every byte of the buffer loaded
// once; q4k-soa-wmma's odd block counts' 16 padding bytes a row complete their last meta sector),
// in ≥ 95% efficient sectors, DRAM ≤ 1.02 × (W + X + Y) at every n_cols; at n_out 256, n_in 4096
// the warp instructions per weight byte at n_cols 8 ≤ 1.3 × n_cols 1.
const KERNELS = [
  { id: 'wmma-gemv', tolerance: 1e-10, edges: [{ n_cols: 7, n_out: 17, n_in: 272 }, { n_cols: 2, n_out: 1, n_in: 16 }] }, // prettier-ignore
  { id: 'q4k-soa-wmma', tolerance: 1e-6, edges: [{ n_cols: 7, n_out: 17, n_in: 768 }, { n_cols: 2, n_out: 1, n_in: 256 }] }, // prettier-ignore
];

/** The simulator's counters for one shape at the default schedule, sm_80, after checking results. */
function simulateCase(id: string, tolerance: number, shape: Readonly<Record<string, number>>) {
  const kernel = getKernel(id);
  const name = `${id} traffic ${JSON.stringify(shape)}`;
  const testCase = { name, kernelId: id, schedule: {}, shape, seed: 11, magnitude: 1 };
  const buffers = makeCaseInputs(kernel, testCase);
  const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
  const params = kernel.params(shape);
  const result = simulateShader(emitPtx(kernel.spec, {}, ptxTarget('sm_80')), buffers, params);
  expect(result.findings).toEqual([]);
  expect(compareWithReference(kernel, inputs, params, buffers).nmse).toBeLessThanOrEqual(tolerance);
  const counters = result.counters;
  const bytes = (buffer: string) => buffers[buffer]!.byteLength;
  expect(counters.buffers['param_w']?.bytesRead).toBe(bytes('w'));
  expect(sectorEfficiency(counters, ['param_w'])).toBeGreaterThanOrEqual(0.95);
  expect(dramBytesRead(counters)).toBeLessThanOrEqual(
    1.02 * (bytes('w') + bytes('x') + bytes('y')),
  );
  return totalWarpInstructions(counters) / bytes('w');
}

for (const { id, tolerance, edges } of KERNELS) {
  describe(`${id} traffic on the PTX simulator (sm_80)`, () => {
    const perByte = new Map<number, number>();
    it.each([1, 2, 7, 8, 16])('n_cols %i at 256 × 4096', (nCols) => {
      perByte.set(nCols, simulateCase(id, tolerance, { n_cols: nCols, n_out: 256, n_in: 4096 }));
    });

    it('spends at most 1.3 × the instructions per weight byte at 8 columns as at 1', () => {
      const [one, eight] = [perByte.get(1), perByte.get(8)];
      expect(one).toBeGreaterThan(0);
      expect(eight).toBeLessThanOrEqual(1.3 * (one ?? 0));
    });

    it.each(edges)('reads W once at the edges, $n_cols × $n_out × $n_in', (shape) => {
      simulateCase(id, tolerance, shape);
    });
  });
}
