import { describe, expect, it } from 'vitest';
import { interpret } from '../interpreter/run.js';
import { compareWithReference, makeCaseInputs } from './case-inputs.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { SILU_EXTREME_GATES, addF32, siluMul, siluMulReference } from './elementwise.js';
import { seedFromString, uniformF32 } from './random.js';

interface Run {
  readonly n: number;
  readonly workgroupSize?: number;
  /** Fewer workgroups than n needs, so the grid-stride loop takes several rounds. */
  readonly grid?: number;
  readonly family?: string;
  readonly magnitude?: number;
}

/** Runs `kernel` on the interpreter with y starting as NaN; the inputs and y. */
function run(
  kernel: CatalogKernel,
  at: Run,
): { inputs: Record<string, Float32Array>; y: Float32Array } {
  const name = `${kernel.spec.id} ${JSON.stringify(at)}`;
  const testCase = { name, kernelId: kernel.spec.id, schedule: {}, shape: { n: at.n }, seed: seedFromString(name), magnitude: at.magnitude ?? 1, ...(at.family === undefined ? {} : { family: at.family }) }; // prettier-ignore
  const buffers = makeCaseInputs(kernel, testCase);
  const [first, second] = kernel.spec.buffers.map((buffer) => buffer.name);
  const inputs = {
    [first as string]: buffers[first as string] as Float32Array,
    [second as string]: buffers[second as string] as Float32Array,
  };
  const y = new Float32Array(at.n).fill(Number.NaN);
  interpret(kernel.spec, {
    params: kernel.params({ n: at.n }),
    schedule: at.workgroupSize === undefined ? {} : { workgroupSize: at.workgroupSize },
    buffers: { ...inputs, y },
    ...(at.grid === undefined ? {} : { grid: [at.grid, 1, 1] as const }),
  });
  return { inputs, y };
}

const RUNS: readonly Run[] = [
  { n: 1 },
  { n: 3, workgroupSize: 32 },
  { n: 4 },
  { n: 7, workgroupSize: 32 },
  { n: 255 },
  { n: 1029, workgroupSize: 64 },
  { n: 1031, workgroupSize: 32, grid: 3 },
];

describe('add on the interpreter', () => {
  for (const at of RUNS)
    it(`writes Math.fround(a + b) exactly at ${JSON.stringify(at)}`, () => {
      const { inputs, y } = run(addF32, at);
      const [a, b] = [inputs['a'] ?? [], inputs['b'] ?? []];
      const want = Float32Array.from({ length: at.n }, (_, i) => (a[i] ?? 0) + (b[i] ?? 0));
      expect(y).toEqual(want);
      expect(compareWithReference(addF32, inputs, { n: at.n }, { y }).nmse).toBeLessThan(1e-14);
    });

  it('launches a quarter as many threads as elements, capped at 65535 workgroups', () => {
    const grid = addF32.spec.launch.grid[0];
    expect(grid).toBe('min(ceil_div(n, workgroupSize * 4), 65535)');
  });
});

describe('silu-mul on the interpreter', () => {
  for (const at of RUNS)
    it(`is within 1e-10 NMSE of the float64 SwiGLU at ${JSON.stringify(at)}`, () => {
      const { inputs, y } = run(siluMul, { ...at, magnitude: 8 });
      expect(compareWithReference(siluMul, inputs, { n: at.n }, { y }).nmse).toBeLessThan(1e-12);
    });

  it('saturates without NaN: silu(-100)·u is -0, silu(+100)·u is 100·u, exactly', () => {
    const gate = Float32Array.from(SILU_EXTREME_GATES);
    const up = uniformF32(gate.length, 5, 3);
    const y = new Float32Array(gate.length).fill(Number.NaN);
    interpret(siluMul.spec, { params: { n: gate.length }, buffers: { gate, up, y } });
    for (const value of y) expect(Number.isFinite(value)).toBe(true);
    expect(Object.is(y[0], (up[0] ?? 0) > 0 ? -0 : 0)).toBe(true);
    expect(y[1]).toBe(Math.fround(100 * (up[1] ?? 0)));
    // g = 0 (and -0): silu is exactly 0.
    expect(Math.abs(y[12] ?? 1) + Math.abs(y[13] ?? 1)).toBe(0);
    // -g·log2 e rounded to f32 is off by up to half an ulp of 128, 4e-6 relative in e^-g for g near
    // -88; past g = -88.7 e^-g overflows f32, so y is ±0 where |silu(g)·u| < 1e-36.
    for (let i = 0; i < gate.length; i++) {
      const want = siluMulReference(gate[i] ?? 0, up[i] ?? 0);
      expect(Math.abs((y[i] ?? 0) - want)).toBeLessThanOrEqual(5e-6 * Math.abs(want) + 1e-36);
    }
  });

  it('meets its tolerance on the extremes family, gates up to ±100', () => {
    for (const n of [16, 1000]) {
      const { inputs, y } = run(siluMul, { n, family: 'extremes' });
      const check = compareWithReference(siluMul, inputs, { n }, { y });
      expect(check.nmse).toBeLessThan(1e-12);
      expect(check.maxAbsError).toBeLessThan(1e-4);
    }
  });

  // The engines here round exp2 once (the simulator too); GPUs may not: PTX ex2.approx.f32 is
  // within 2 ulp, WGSL's exp2 within 3 + 2·|t| ulp. This model of the kernel's f32 arithmetic with
  // exp2 off by that much, all one way, must still meet the tolerance on the execution cases' data.
  it('meets its tolerance with exp2 off by the most PTX and WGSL allow', () => {
    const f = Math.fround;
    const bounds = [() => 2, (t: number) => 3 + 2 * Math.abs(t)];
    const model = (g: number, u: number, ulps: (t: number) => number, sign: number): number => {
      const t = f(g * f(-Math.LOG2E));
      const e = f(2 ** t * (1 + sign * ulps(t) * 2 ** -23));
      return f(f(g / f(e + 1)) * u);
    };
    for (const at of [
      { n: 32000, magnitude: 8 },
      { n: 32000, family: 'extremes' },
    ]) {
      const { inputs } = run(siluMul, at);
      const [gate, up] = [inputs['gate'] ?? [], inputs['up'] ?? []];
      for (const ulps of bounds)
        for (const sign of [1, -1]) {
          const y = Float32Array.from(gate, (g, i) => model(g, up[i] ?? 0, ulps, sign));
          const { nmse } = compareWithReference(siluMul, inputs, { n: at.n }, { y });
          expect(nmse).toBeLessThan(1e-12);
          expect(nmse).toBeGreaterThan(0);
        }
    }
  });

  it('reference: no NaN where e^-g overflows float64', () => {
    expect(Object.is(siluMulReference(-1000, 2), -0)).toBe(true);
    expect(siluMulReference(1000, 2)).toBe(2000);
    expect(siluMulReference(0, 2)).toBe(0);
    expect(siluMulReference(1, 1)).toBeCloseTo(1 / (1 + Math.exp(-1)), 15);
  });
});
