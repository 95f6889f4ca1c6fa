import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import { dequantize, quantize } from '../quant/formats.js';
import { packWords, unpackWords } from '../quant/words.js';
import { resolveSchedule } from '../schedule.js';
import { EXECUTION_CASES, makeCaseInputs } from '../testing/execution-cases.js';
import { Rng } from '../testing/random.js';
import { normalizedMse, type Shape } from './catalog-kernel.js';
import { q8_0Gemv as kernel } from './q8-0-gemv.js';

const ORACLE = new URL('../../../../../shared/oracle/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const floats = (name: string): Float32Array => {
  const data = bytes(name);
  return new Float32Array(data.buffer, data.byteOffset, data.byteLength / 4);
};

/** ggml's 64 x 512 Q8_0 matrix, its x and its exact y. */
function oracle() {
  const shape = { n_in: 512, n_out: 64 };
  const w = bytes('Q8_0_64x512.w.bin');
  return {
    shape,
    w,
    buffers: { w: packWords(w), x: floats('Q8_0_64x512.x.f32'), y: new Float32Array(64) },
    y: floats('Q8_0_64x512.y.f32'),
  };
}

describe('q8_0-gemv', () => {
  it("its float64 reference reproduces ggml's exact y on the oracle", () => {
    const { shape, buffers, y } = oracle();
    const reference = kernel.reference(buffers, kernel.params(shape))['y'] ?? [];
    expect(Float32Array.from(reference)).toEqual(y);
  });

  it("the interpreter matches ggml's exact y on the oracle within 1e-10 NMSE", () => {
    const { shape, buffers, y } = oracle();
    const schedule = resolveSchedule(kernel.spec, 'ptx', {});
    interpret(kernel.spec, { schedule, params: kernel.params(shape), buffers });
    expect(normalizedMse(buffers.y, y)).toBeLessThanOrEqual(kernel.tolerance);
    // Row 63 of the oracle is all zeros: exactly zero, not a rounding residue.
    expect(buffers.y[63]).toBe(0);
  });

  it('covers all rows through its grid-stride loop when the grid is smaller', () => {
    const { shape, buffers, y } = oracle();
    const schedule = resolveSchedule(kernel.spec, 'ptx', { rowsPerWarp: 2 });
    interpret(kernel.spec, { schedule, params: kernel.params(shape), buffers, grid: [3, 1, 1] });
    expect(normalizedMse(buffers.y, y)).toBeLessThanOrEqual(kernel.tolerance);
  });

  it('packs the row-major blocks little-endian into zero-padded words', () => {
    const { w, buffers } = oracle();
    expect(buffers.w.length).toBe(kernel.bufferLengths({ n_in: 512, n_out: 64 })['w']);
    expect(buffers.w[0]).toBe(
      ((w[0] ?? 0) | ((w[1] ?? 0) << 8) | ((w[2] ?? 0) << 16) | ((w[3] ?? 0) << 24)) >>> 0,
    );
    expect(unpackWords(buffers.w, w.length)).toEqual(w);
    const odd = packWords(Uint8Array.of(1, 2, 3, 4, 5, 6));
    expect([...odd]).toEqual([0x04030201, 0x0605]);
    expect(kernel.weights?.bytes({ n_in: 32, n_out: 3 })).toBe(102);
    expect(kernel.bufferLengths({ n_in: 32, n_out: 3 })['w']).toBe(26);
  });

  it('generates quantized weights from the case generator, deterministically', () => {
    const shape = { n_in: 64, n_out: 3 };
    const request = { buffer: 'w', length: 51, shape, magnitude: 2 };
    const words = kernel.generateInput?.({ ...request, rng: new Rng(5) });
    expect(words).toEqual(kernel.generateInput?.({ ...request, rng: new Rng(5) }));
    const values = new Float32Array(3 * 64);
    const rng = new Rng(5);
    for (let index = 0; index < values.length; index++) values[index] = rng.uniform(-2, 2);
    expect(words).toEqual(packWords(quantize('q8_0', values, 3, 64)));
    expect(kernel.generateInput?.({ ...request, buffer: 'x', rng: new Rng(5) })).toBeUndefined();
  });

  it.each([
    [{ n_in: 100, n_out: 3 }, 'n_in', '100 is not a multiple of 32, the q8_0 block size'],
    [{ n_in: 0, n_out: 3 }, 'n_in', '0 is not a multiple of 32, the q8_0 block size'],
    [{ n_in: 32, n_out: 0 }, 'n_out', '0 is not at least 1'],
    [{ n_in: 2 ** 28, n_out: 1000 }, 'n_out', /exceed 32-bit byte offsets/],
  ])('rejects the shape %j naming %s', (shape, path, message) => {
    try {
      kernel.checkShape?.(shape);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      const [issue] = (error as ValidationError).issues;
      expect(issue?.path).toBe(path);
      expect(issue?.message).toMatch(message);
    }
    const testCase = { name: 'bad', kernelId: 'q8_0-gemv', schedule: {}, shape, seed: 1 };
    expect(() => makeCaseInputs(kernel, { ...testCase, magnitude: 1 })).toThrow(ValidationError);
  });

  // An f32 dot product errs by ~eps * sum |w x|; a case whose rows cancel far below their typical
  // size (C >> 0.6 n_in for zero-mean data) would test the data's conditioning, not the kernel.
  it.each(
    EXECUTION_CASES.filter((testCase) => testCase.kernelId === kernel.spec.id)
      .filter(
        (testCase) => (testCase.shape['n_in'] ?? 0) * (testCase.shape['n_out'] ?? 0) <= 2 ** 20,
      )
      .map((testCase) => [testCase.name, testCase] as const),
  )('%s is well-conditioned', (_name, testCase) => {
    const inputs = makeCaseInputs(kernel, testCase);
    expect(conditioning(testCase.shape, inputs['w'] ?? [], inputs['x'] ?? [])).toBeLessThan(
      100 * (testCase.shape['n_in'] ?? 0),
    );
  });
});

/** sum_r (sum_c |w x|)^2 / sum_r y_r^2 over the dequantized matrix. */
function conditioning(shape: Shape, words: ArrayLike<number>, x: ArrayLike<number>): number {
  const nIn = shape['n_in'] ?? 0;
  const nOut = shape['n_out'] ?? 0;
  const weights = dequantize(
    'q8_0',
    unpackWords(words, kernel.weights?.bytes(shape) ?? 0),
    nOut,
    nIn,
  );
  let absolute = 0;
  let energy = 0;
  for (let r = 0; r < nOut; r++) {
    let sum = 0;
    let magnitude = 0;
    for (let c = 0; c < nIn; c++) {
      const term = (weights[r * nIn + c] ?? 0) * (x[c] ?? 0);
      sum += term;
      magnitude += Math.abs(term);
    }
    absolute += magnitude ** 2;
    energy += sum ** 2;
  }
  return absolute / energy;
}
