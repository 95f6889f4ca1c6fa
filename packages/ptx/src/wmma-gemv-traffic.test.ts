import { describe, expect, it } from 'vitest';
import { compareWithReference, makeCaseInputs, wmmaGemv } from '@forge/ir/kernels';
import { dramBytesRead, sectorEfficiency, totalWarpInstructions } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';

/** The simulator's counters for one shape at the default schedule, sm_80, after checking results. */
function simulateCase(shape: Readonly<Record<string, number>>) {
  const name = `wmma traffic ${JSON.stringify(shape)}`;
  const testCase = { name, kernelId: 'wmma-gemv', schedule: {}, shape, seed: 11, magnitude: 1 };
  const buffers = makeCaseInputs(wmmaGemv, testCase);
  const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
  const params = wmmaGemv.params(shape);
  const shader = emitPtx(wmmaGemv.spec, {}, ptxTarget('sm_80'));
  const result = simulateShader(shader, buffers, params);
  expect(result.findings).toEqual([]);
  expect(compareWithReference(wmmaGemv, inputs, params, buffers).nmse).toBeLessThanOrEqual(1e-10);
  const bytes = (name: string) => buffers[name]!.byteLength;
  return {
    counters: result.counters,
    wBytes: bytes('w'),
    all: bytes('w') + bytes('x') + bytes('y'),
  };
}

// Issue #14: W read once (every byte loaded once), in ≥ 95% efficient sectors, DRAM ≤ 1.02 × (W + X
// + Y); at n_out 256, n_in 4096 the warp instructions per weight byte at n_cols 8 ≤ 1.3 × n_cols 1.
describe('wmma-gemv traffic on the PTX simulator (sm_80)', () => {
  const perByte = new Map<number, number>();
  it.each([1, 2, 7, 8, 16])('n_cols %i at 256 × 4096', (nCols) => {
    const { counters, wBytes, all } = simulateCase({ n_cols: nCols, n_out: 256, n_in: 4096 });
    expect(counters.buffers['param_w']?.bytesRead).toBe(wBytes);
    expect(sectorEfficiency(counters, ['param_w'])).toBeGreaterThanOrEqual(0.95);
    expect(dramBytesRead(counters)).toBeLessThanOrEqual(1.02 * all);
    perByte.set(nCols, totalWarpInstructions(counters) / wBytes);
  });

  it('spends at most 1.3 × the instructions per weight byte at 8 columns as at 1', () => {
    const [one, eight] = [perByte.get(1), perByte.get(8)];
    expect(one).toBeGreaterThan(0);
    expect(eight).toBeLessThanOrEqual(1.3 * (one ?? 0));
  });

  it.each([
    { n_cols: 7, n_out: 17, n_in: 272 },
    { n_cols: 2, n_out: 1, n_in: 16 },
  ])('reads W once at the edges, $n_cols × $n_out × $n_in', (shape) => {
    const { counters, wBytes, all } = simulateCase(shape);
    expect(counters.buffers['param_w']?.bytesRead).toBe(wBytes);
    expect(sectorEfficiency(counters, ['param_w'])).toBeGreaterThanOrEqual(0.95);
    expect(dramBytesRead(counters)).toBeLessThanOrEqual(1.02 * all);
  });
});
