import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { f16Bits } from '../f16.js';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { makeCaseInputs, compareWithReference } from './case-inputs.js';
import { seedFromString } from './random.js';
import { wmmaGemv as kernel } from './wmma-gemv-catalog.js';

/** Runs the kernel on the interpreter for a shape and schedule; returns NMSE against the reference. */
function run(shape: Record<string, number>, warps?: number): number {
  const name = `wmma ${JSON.stringify(shape)} ${warps ?? ''}`;
  const testCase = { name, kernelId: 'wmma-gemv', schedule: {}, shape, seed: seedFromString(name), magnitude: 1 }; // prettier-ignore
  const buffers = makeCaseInputs(kernel, testCase);
  const params = kernel.params(shape);
  const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
  // y starts as NaN: every element must be written, and only those.
  const y = new Float32Array(buffers['y']!.length).fill(Number.NaN);
  const schedule: Record<string, number> = warps === undefined ? {} : { warps };
  interpret(kernel.spec, { params, schedule, buffers: { ...inputs, y } });
  return compareWithReference(kernel, inputs, params, { y }).nmse;
}

describe('wmma-gemv on the interpreter', () => {
  const shapes = [
    { n_cols: 1, n_out: 1, n_in: 16 },
    { n_cols: 2, n_out: 15, n_in: 48 },
    { n_cols: 7, n_out: 17, n_in: 256 },
    { n_cols: 8, n_out: 16, n_in: 144 },
    { n_cols: 16, n_out: 33, n_in: 208 },
    { n_cols: 9, n_out: 40, n_in: 96 },
  ];
  for (const shape of shapes)
    for (const warps of [1, 3, 4])
      it(`matches the float64 product at ${JSON.stringify(shape)}, ${warps} warps`, () => {
        expect(run(shape, warps)).toBeLessThanOrEqual(1e-10);
      });

  it('stores nothing past n_out rows and n_cols columns', () => {
    const shape = { n_cols: 3, n_out: 5, n_in: 32 };
    const w = new Uint32Array((5 * 32) / 2).fill(f16Bits(1) * 0x10001);
    const x = new Uint32Array((3 * 32) / 2).fill(f16Bits(0.5) * 0x10001);
    // y is 3 × 5; the guard words around it would be overwritten by a stray store.
    const y = new Float32Array(15).fill(-7);
    interpret(kernel.spec, { params: kernel.params(shape), buffers: { w, x, y } });
    expect([...y]).toEqual(new Array(15).fill(16));
  });
});

describe('wmma-gemv shapes and knobs', () => {
  it('names the shape field it cannot run, in one line', () => {
    const cases: [Record<string, number>, string][] = [
      [{ n_cols: 0, n_out: 4, n_in: 32 }, 'n_cols: 0 is not between 1 and 16'],
      [{ n_cols: 17, n_out: 4, n_in: 32 }, 'n_cols: 17 is not between 1 and 16'],
      [{ n_cols: 1, n_out: 0, n_in: 32 }, 'n_out: 0 is not at least 1'],
      [{ n_cols: 1, n_out: 4, n_in: 24 }, "n_in: 24 is not a multiple of 16, the mma's K"],
      [{ n_cols: 1, n_out: 2 ** 20, n_in: 2 ** 14 }, 'n_out: 1048576 rows of 16384 halves exceed'],
    ];
    for (const [shape, message] of cases) {
      expect(() => kernel.checkShape?.(shape)).toThrow(ValidationError);
      expect(() => kernel.checkShape?.(shape)).toThrow(message);
    }
    expect(() => kernel.checkShape?.({ n_cols: 16, n_out: 1, n_in: 16 })).not.toThrow();
  });

  it('takes 1 to 8 warps on both targets', () => {
    for (const target of ['ptx', 'wgsl'] as const) {
      for (const warps of [0, 9])
        expect(() => resolveSchedule(kernel.spec, target, { warps })).toThrow(
          `schedule.warps: ${warps} is outside [1, 8] for ${target}`,
        );
      expect(resolveSchedule(kernel.spec, target, { warps: 8 })['warps']).toBe(8);
    }
  });

  it('describes its f16 input files by layout', () => {
    const shape = { n_cols: 3, n_out: 5, n_in: 32 };
    expect(kernel.describeInput?.('w', shape)).toBe(
      '[n_out 5][n_in 32] raw IEEE halves, little-endian, row-major',
    );
    expect(kernel.describeInput?.('x', shape)).toContain('[n_cols 3][n_in 32] raw IEEE halves');
    expect(kernel.describeInput?.('y', shape)).toBeUndefined();
  });
});
