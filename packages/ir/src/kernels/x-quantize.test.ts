// The x quantization every gemv kernel shares, run on q8_0-gemv (one 32-value group a block).
import { describe, expect, it } from 'vitest';
import { interpret } from '../interpreter/run.js';
import { quantize } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { resolveSchedule } from '../schedule.js';
import { normalizedMse } from './catalog-kernel.js';
import { q8_0Gemv } from './q8-0-gemv.js';
import { Rng, fillUniform } from './random.js';

const [nOut, nIn] = [8, 256];

function run(x: Float32Array) {
  const values = fillUniform(new Float32Array(nOut * nIn), new Rng(3), 1);
  const buffers = {
    w: packWords(quantize('q8_0', values, nOut, nIn)),
    x,
    y: new Float32Array(nOut),
  };
  const params = q8_0Gemv.params({ n_in: nIn, n_out: nOut });
  const schedule = resolveSchedule(q8_0Gemv.spec, 'ptx', {});
  const exact = Float32Array.from(q8_0Gemv.reference(buffers, params)['y'] ?? []);
  interpret(q8_0Gemv.spec, { schedule, params, buffers });
  return { y: buffers.y, exact };
}

describe('x quantization (16 bits a value against its 32-value group)', () => {
  it('keeps 1e-9 NMSE on uniform x', () => {
    const { y, exact } = run(fillUniform(new Float32Array(nIn), new Rng(4), 1));
    expect(normalizedMse(y, exact)).toBeLessThan(1e-9);
  });

  it('keeps 1e-6 NMSE when each group mixes magnitudes from 1e-6 to 1e3', () => {
    const rng = new Rng(5);
    const x = Float32Array.from({ length: nIn }, () => {
      const magnitude = 10 ** rng.uniform(-6, 3);
      return rng.uniform(-1, 1) < 0 ? -magnitude : magnitude;
    });
    const { y, exact } = run(x);
    expect(normalizedMse(y, exact)).toBeLessThan(1e-6);
  });

  it('gives all-zero groups a zero scale (no NaN from 0 / 0) and keeps the others', () => {
    const x = new Float32Array(nIn);
    for (let i = 64; i < 96; i++) x[i] = (i - 80) / 16;
    const { y, exact } = run(x);
    expect([...y].some(Number.isNaN)).toBe(false);
    expect(normalizedMse(y, exact)).toBeLessThan(1e-9);
  });

  it('turns a NaN or an infinity in x into NaN in every y', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const x = fillUniform(new Float32Array(nIn), new Rng(6), 1);
      x[100] = bad;
      const { y } = run(x);
      expect([...y].every(Number.isNaN)).toBe(true);
    }
  });
});
