import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import { compareWithReference, makeCaseInputs } from './case-inputs.js';
import { f16Gemv, f32Gemv } from './dense-gemv-catalog.js';
import { packF16Words } from './half-words.js';
import { seedFromString } from './random.js';

/** The ValidationError `checkShape` throws for a shape, or undefined when it accepts it. */
function shapeError(kernel: typeof f32Gemv, shape: Record<string, number>) {
  try {
    kernel.checkShape?.(shape);
    return undefined;
  } catch (error) {
    if (error instanceof ValidationError) return { path: error.path, message: error.message };
    throw error;
  }
}

describe('f32-gemv and f16-gemv shapes', () => {
  it('takes any n_in for f32 and even n_in for f16, naming the field it refuses', () => {
    expect(shapeError(f32Gemv, { n_out: 1, n_in: 1 })).toBeUndefined();
    expect(shapeError(f32Gemv, { n_out: 17, n_in: 255 })).toBeUndefined();
    expect(shapeError(f16Gemv, { n_out: 17, n_in: 254 })).toBeUndefined();
    expect(shapeError(f16Gemv, { n_out: 1, n_in: 255 })).toEqual({
      path: 'n_in',
      message: 'n_in: 255 is not even: f16 rows are whole u32 words of two halves',
    });
    expect(shapeError(f32Gemv, { n_out: 4, n_in: 0 })?.path).toBe('n_in');
    expect(shapeError(f16Gemv, { n_out: 0, n_in: 8 })?.path).toBe('n_out');
    expect(shapeError(f32Gemv, { n_out: 2 ** 20, n_in: 2 ** 12 })?.path).toBe('n_out');
    expect(shapeError(f16Gemv, { n_out: 2 ** 19, n_in: 2 ** 12 })).toBeUndefined();
  });

  it('sizes W as n_out × n_in values, one or two a word', () => {
    expect(f32Gemv.bufferLengths({ n_out: 3, n_in: 5 })).toEqual({ w: 15, x: 5, y: 3 });
    expect(f16Gemv.bufferLengths({ n_out: 3, n_in: 6 })).toEqual({ w: 9, x: 6, y: 3 });
    expect(f16Gemv.describeInput?.('w', { n_out: 3, n_in: 6 })).toContain('[n_out 3][n_in 6]');
  });

  it('computes the reference from W exactly (f16 halves low first)', () => {
    const x = [1, -2, 0.5];
    const w = [1, 2, 3, 0.25, -1, 4];
    const params = { n_out: 2, n_in: 3 };
    const expected = [1 - 4 + 1.5, 0.25 + 2 + 2];
    expect(Array.from(f32Gemv.reference({ w, x }, params)['y']!)).toEqual(expected);
    const halves = packF16Words([1, 2, 3, 0.25, -1, 4, 0.5, 1e-3]);
    const f16Params = { n_out: 2, n_in: 4 };
    const f16y = f16Gemv.reference({ w: halves, x: [1, 1, 1, 1] }, f16Params)['y']!;
    // 1e-3 rounds to the nearest half, 0.0010004043579101562.
    expect(Array.from(f16y)).toEqual([6.25, 3.5 + 0.0010004043579101562]);
  });
});

describe('f32-gemv and f16-gemv on the interpreter', () => {
  const runs = [
    [f32Gemv, { n_out: 5, n_in: 13 }, { workgroupSize: 64, vectors: 1 }],
    [f32Gemv, { n_out: 9, n_in: 1030 }, { workgroupSize: 96, vectors: 3 }],
    [f16Gemv, { n_out: 9, n_in: 1030 }, { workgroupSize: 32, vectors: 2 }],
    [f16Gemv, { n_out: 70, n_in: 36 }, { workgroupSize: 64, vectors: 4 }],
  ] as const;
  it.each(runs)(
    '%#: writes every row, and only those, to the float64 product',
    (kernel, shape, schedule) => {
      const kernelId = kernel.spec.id;
      const name = `${kernelId} ${JSON.stringify(shape)} ${JSON.stringify(schedule)}`;
      const testCase = {
        name,
        kernelId,
        schedule,
        shape,
        seed: seedFromString(name),
        magnitude: 1,
      };
      const buffers = makeCaseInputs(kernel, testCase);
      const inputs = { w: buffers['w']!.slice(), x: buffers['x']!.slice() };
      // One more y than rows, NaN: every row written, nothing past them.
      const y = new Float32Array(kernel.bufferLengths(shape)['y']! + 1).fill(Number.NaN);
      interpret(kernel.spec, { params: kernel.params(shape), schedule, buffers: { ...inputs, y } });
      expect(Number.isNaN(y[y.length - 1])).toBe(true);
      const written = { y: y.subarray(0, y.length - 1) };
      expect(
        compareWithReference(kernel, inputs, kernel.params(shape), written).nmse,
      ).toBeLessThanOrEqual(1e-10);
    },
  );
});
