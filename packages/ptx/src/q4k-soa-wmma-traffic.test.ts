import { describe, expect, it } from 'vitest';
import { compareWithReference, makeCaseInputs, q4kSoaWmma } from '@forge/ir/kernels';
import { dramBytesRead, sectorEfficiency, totalWarpInstructions } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';

/** The simulator's counters for one shape at the default schedule, sm_80, after checking results. */
function simulateCase(shape: Readonly<Record<string, number>>) {
  const name = `q4k wmma traffic ${JSON.stringify(shape)}`;
  const testCase = { name, kernelId: 'q4k-soa-wmma', schedule: {}, shape, seed: 11, magnitude: 1 };
  const buffers = makeCaseInputs(q4kSoaWmma, testCase);
  const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
  const params = q4kSoaWmma.params(shape);
  const shader = emitPtx(q4kSoaWmma.spec, {}, ptxTarget('sm_80'));
  const result = simulateShader(shader, buffers, params);
  expect(result.findings).toEqual([]);
  expect(compareWithReference(q4kSoaWmma, inputs, params, buffers).nmse).toBeLessThanOrEqual(1e-6);
  const bytes = (name: string) => buffers[name]!.byteLength;
  return {
    counters: result.counters,
    wBytes: bytes('w'),
    all: bytes('w') + bytes('x') + bytes('y'),
  };
}

// Issue #14: W read once (every byte of the buffer loaded once: an odd block count's 16 padding
// bytes a row complete its last meta sector), in ≥ 95% efficient sectors, DRAM ≤ 1.02 × (W + X
// + Y); at n_out 256, n_in 4096 the warp instructions per weight byte at n_cols 8 ≤ 1.3 × n_cols 1.
describe('q4k-soa-wmma traffic on the PTX simulator (sm_80)', () => {
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
    { n_cols: 7, n_out: 17, n_in: 768 },
    { n_cols: 2, n_out: 1, n_in: 256 },
  ])('reads W once at the edges, $n_cols × $n_out × $n_in', (shape) => {
    const { counters, wBytes, all } = simulateCase(shape);
    expect(counters.buffers['param_w']?.bytesRead).toBe(wBytes);
    expect(sectorEfficiency(counters, ['param_w'])).toBeGreaterThanOrEqual(0.95);
    expect(dramBytesRead(counters)).toBeLessThanOrEqual(1.02 * all);
  });
});
