import { describe, expect, it } from 'vitest';
import { interpret } from '../interpreter/run.js';
import { quantize } from '../quant/formats.js';
import { packWords, unpackWords } from '../quant/words.js';
import { resolveSchedule } from '../schedule.js';
import { Rng } from './random.js';
import { describeGemv, gemvOracle } from './gemv-suite.test-support.js';
import { q8_0Gemv as kernel } from './q8-0-gemv.js';

describeGemv({ kernel, type: 'q8_0', prefix: 'Q8_0', exactReference: true });

describe('q8_0-gemv', () => {
  it('gives row 63 of the oracle, all zeros, as exactly zero, not a rounding residue', () => {
    const { shape, buffers } = gemvOracle('Q8_0');
    const schedule = resolveSchedule(kernel.spec, 'ptx', {});
    interpret(kernel.spec, { schedule, params: kernel.params(shape), buffers });
    expect(buffers.y[63]).toBe(0);
  });

  it('packs the row-major blocks little-endian into zero-padded words', () => {
    const { w, buffers } = gemvOracle('Q8_0');
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
});
