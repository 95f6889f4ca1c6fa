import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { makeCaseInputs, compareWithReference } from './case-inputs.js';
import { q4kSoaWmma as kernel } from './q4k-soa-wmma-catalog.js';
import { seedFromString } from './random.js';

/** Runs the kernel on the interpreter for a shape and schedule; returns NMSE against the reference. */
function run(shape: Record<string, number>, warps?: number): number {
  const name = `q4k-wmma ${JSON.stringify(shape)} ${warps ?? ''}`;
  const testCase = { name, kernelId: 'q4k-soa-wmma', schedule: {}, shape, seed: seedFromString(name), magnitude: 1 }; // prettier-ignore
  const buffers = makeCaseInputs(kernel, testCase);
  const params = kernel.params(shape);
  const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
  // y starts as NaN: every element must be written, and only those.
  const y = new Float32Array(buffers['y']!.length).fill(Number.NaN);
  const schedule: Record<string, number> = warps === undefined ? {} : { warps };
  interpret(kernel.spec, { params, schedule, buffers: { ...inputs, y } });
  return compareWithReference(kernel, inputs, params, { y }).nmse;
}

describe('q4k-soa-wmma on the interpreter', () => {
  const shapes = [
    { n_cols: 1, n_out: 1, n_in: 256 },
    { n_cols: 2, n_out: 15, n_in: 768 },
    { n_cols: 7, n_out: 17, n_in: 512 },
    { n_cols: 8, n_out: 16, n_in: 256 },
    { n_cols: 16, n_out: 33, n_in: 1280 },
  ];
  for (const shape of shapes)
    for (const warps of [1, 3])
      it(`matches the float64 product at ${JSON.stringify(shape)}, ${warps} warps`, () => {
        expect(run(shape, warps)).toBeLessThanOrEqual(1e-6);
      });
});

describe('q4k-soa-wmma shapes and knobs', () => {
  it('names the shape field it cannot run, in one line', () => {
    const cases: [Record<string, number>, string][] = [
      [{ n_cols: 0, n_out: 4, n_in: 256 }, 'n_cols: 0 is not between 1 and 16'],
      [{ n_cols: 17, n_out: 4, n_in: 256 }, 'n_cols: 17 is not between 1 and 16'],
      [{ n_cols: 1, n_out: 0, n_in: 256 }, 'n_out: 0 is not at least 1'],
      [
        { n_cols: 1, n_out: 4, n_in: 384 },
        'n_in: 384 is not a multiple of 256, the q4_K block size',
      ],
    ];
    for (const [shape, message] of cases) {
      expect(() => kernel.checkShape?.(shape)).toThrow(ValidationError);
      expect(() => kernel.checkShape?.(shape)).toThrow(message);
    }
    expect(() => kernel.checkShape?.({ n_cols: 16, n_out: 1, n_in: 256 })).not.toThrow();
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
});
