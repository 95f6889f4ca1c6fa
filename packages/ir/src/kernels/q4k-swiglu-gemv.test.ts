import { describe, expect, it } from 'vitest';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { normalizedMse } from './catalog-kernel.js';
import { siluMul, siluMulReference } from './elementwise.js';
import { gemvOracle } from './gemv-suite.test-support.js';
import { q4kGemv, q4kSwigluGemv } from './q4k-gemv.js';
import { randomQ4kWords } from './gemv-catalog.js';
import { Rng, fillUniform } from './random.js';

const run = (
  kernel: typeof q4kGemv,
  shape: { n_in: number; n_out: number },
  buffers: Record<string, Float32Array | Uint32Array>,
  grid?: readonly [number, number, number],
) => {
  const schedule = resolveSchedule(kernel.spec, 'ptx', {});
  const where = grid === undefined ? {} : { dispatchGrids: [undefined, grid] };
  interpret(kernel.spec, { schedule, params: kernel.params(shape), buffers, ...where });
};

describe('q4k-swiglu-gemv', () => {
  it("matches silu(y)·y from ggml's exact y on the oracle (gate = up), all rows by a 3-workgroup grid", () => {
    const { shape, buffers, y } = gemvOracle('Q4_K');
    const expected = Float64Array.from(y, (value) => siluMulReference(value, value));
    const reference = q4kSwigluGemv.reference({ ...buffers, w_up: buffers.w }, q4kSwigluGemv.params(shape))['y']; // prettier-ignore
    expect(normalizedMse(Float32Array.from(reference ?? []), expected)).toBeLessThanOrEqual(1e-12);
    for (const grid of [undefined, [3, 1, 1] as const]) {
      const fused = { ...buffers, w_up: buffers.w, y: new Float32Array(shape.n_out) };
      run(q4kSwigluGemv, shape, fused, grid);
      expect(normalizedMse(fused.y, expected)).toBeLessThanOrEqual(q4kSwigluGemv.tolerance);
    }
  });

  it('equals q4k-gemv on W and on W_up, then silu-mul, bit for bit', () => {
    const shape = { n_in: 768, n_out: 37 };
    const rng = new Rng(11);
    const [w, wUp] = [0, 1].map(() => randomQ4kWords(shape.n_out, shape.n_in, rng, 1));
    const x = fillUniform(new Float32Array(shape.n_in), rng, 1);
    const fused = { w: w!, w_up: wUp!, x, y: new Float32Array(shape.n_out) };
    run(q4kSwigluGemv, shape, fused);
    const [gate, up] = [w!, wUp!].map((matrix) => {
      const buffers = { w: matrix, x, y: new Float32Array(shape.n_out) };
      run(q4kGemv, shape, buffers);
      return buffers.y;
    });
    const chained = { gate: gate!, up: up!, y: new Float32Array(shape.n_out) };
    const n = { n: shape.n_out };
    interpret(siluMul.spec, {
      schedule: resolveSchedule(siluMul.spec, 'ptx', {}),
      params: siluMul.params(n),
      buffers: chained,
    });
    expect([...fused.y]).toEqual([...chained.y]);
    // Gate and up differ, so a kernel reading W twice (or W_up twice) would not match.
    expect([...gate!]).not.toEqual([...up!]);
  });

  it('declares w_up beside w, both sized and generated as Q4_K rows', () => {
    const shape = { n_in: 256, n_out: 3 };
    const lengths = q4kSwigluGemv.bufferLengths(shape);
    expect(lengths['w_up']).toBe(lengths['w']);
    expect(lengths['w']).toBe(q4kGemv.bufferLengths(shape)['w']);
    const request = { length: lengths['w'] ?? 0, shape, magnitude: 1, rng: new Rng(2) };
    expect(q4kSwigluGemv.generateInput?.({ ...request, buffer: 'w_up' })?.length).toBe(
      lengths['w'],
    );
    expect(q4kSwigluGemv.spec.buffers.map(({ name, binding }) => `${name}@${binding}`)).toEqual([
      'w@0',
      'x@1',
      'y@2',
      'w_up@5',
    ]);
  });
});
