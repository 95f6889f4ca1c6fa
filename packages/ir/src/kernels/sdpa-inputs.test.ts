import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { roundToF16 } from '../f16.js';
import { f16BitsFromWords, unpackF16Words } from './half-words.js';
import { Rng } from './random.js';
import {
  SDPA_LARGE_Q_FACTOR,
  sdpaGenerateInput,
  sdpaInputs,
  type SdpaInputOptions,
} from './sdpa-inputs.js';
import { sdpaReference } from './sdpa-reference.js';
import { checkSdpaShape, sdpaBufferLengths, sdpaParams, type SdpaCache } from './sdpa-shape.js';

const shape = { n_head: 8, n_kv_head: 2, head_dim: 64, n_kv: 100, max_ctx: 128, window: 0 };

const draw = (options: Partial<SdpaInputOptions> & { seed?: number } = {}, at = shape) =>
  sdpaInputs(at, { cache: 'f16', magnitude: 1, ...options, rng: new Rng(options.seed ?? 11) });

/** Every visible score of every query head, per head. */
function scores(at: typeof shape, cache: SdpaCache, options: Partial<SdpaInputOptions>) {
  const inputs = draw({ ...options, cache }, at);
  const count = at.max_ctx * at.n_kv_head * at.head_dim;
  const k = cache === 'f16' ? unpackF16Words(inputs.buffers.k, count) : inputs.buffers.k;
  const scale = sdpaParams(at)['scale'] ?? 0;
  const start = at.window > 0 ? Math.max(0, at.n_kv - at.window) : 0;
  const perHead: number[][] = [];
  for (let j = 0; j < at.n_head; j++) {
    const g = Math.floor(j / (at.n_head / at.n_kv_head));
    const row: number[] = [];
    for (let t = start; t < at.n_kv; t++) {
      let dot = 0;
      for (let d = 0; d < at.head_dim; d++)
        dot +=
          (inputs.buffers.q[j * at.head_dim + d] ?? 0) *
          (k[(t * at.n_kv_head + g) * at.head_dim + d] ?? 0);
      row.push(scale * dot);
    }
    perHead.push(row);
  }
  return { inputs, perHead, start };
}

describe('sdpaInputs', () => {
  it('is deterministic per seed, and differs between seeds', () => {
    expect(draw()).toEqual(draw());
    expect(draw({ seed: 12 }).buffers.q).not.toEqual(draw().buffers.q);
  });

  it('draws q, K, V uniform from one generator in that order, K/V rounded to f16 and packed', () => {
    const inputs = draw({ magnitude: 3 });
    const rng = new Rng(11);
    const heads = 8 * 64;
    const cached = 128 * 2 * 64;
    const q = Float32Array.from({ length: heads }, () => rng.uniform(-3, 3));
    const k = Array.from({ length: cached }, () => roundToF16(rng.uniform(-3, 3)));
    const v = Array.from({ length: cached }, () => roundToF16(rng.uniform(-3, 3)));
    expect(inputs.buffers.q).toEqual(q);
    expect(inputs.buffers.k).toBeInstanceOf(Uint32Array);
    expect(inputs.buffers.k.length).toBe(cached / 2);
    expect([...unpackF16Words(inputs.buffers.k, cached)]).toEqual(k);
    expect([...unpackF16Words(inputs.buffers.v, cached)]).toEqual(v);
    // Element 2i is the low half of word i.
    expect(f16BitsFromWords(inputs.buffers.k, 2)[0]).toBe((inputs.buffers.k[0] ?? 0) & 0xffff);
    const f32 = draw({ magnitude: 3, cache: 'f32' });
    expect(f32.buffers.k).toBeInstanceOf(Float32Array);
    expect(f32.buffers.k.length).toBe(cached);
    expect(Math.max(...f32.buffers.k.map(Math.abs))).toBeLessThanOrEqual(3);
  });

  it('gives buffer by buffer through generateInput the same uniform case', () => {
    for (const cache of ['f16', 'f32'] as const) {
      const lengths = sdpaBufferLengths(shape, cache);
      const generate = sdpaGenerateInput(cache);
      const rng = new Rng(11);
      const request = (buffer: string) =>
        generate({ buffer, length: lengths[buffer] ?? 0, shape, rng, magnitude: 2 });
      const [q, k, v] = [request('q'), request('k'), request('v')];
      expect(request('out')).toBeUndefined();
      const whole = draw({ cache, magnitude: 2 });
      expect(q).toEqual(whole.buffers.q);
      expect(k).toEqual(whole.buffers.k);
      expect(v).toEqual(whole.buffers.v);
    }
  });

  it('makes one visible position dominate every head by 80 in logit, just about', () => {
    for (const cache of ['f16', 'f32'] as const)
      for (const at of [
        shape,
        { ...shape, n_kv_head: 8, window: 30 },
        { ...shape, n_head: 4, n_kv_head: 1 },
      ]) {
        const { inputs, perHead, start } = scores(at, cache, { family: 'dominant' });
        const position = inputs.dominantPosition ?? -1;
        expect(position).toBeGreaterThanOrEqual(start);
        expect(position).toBeLessThan(at.n_kv);
        const gaps = perHead.map((row) => {
          const others = row.filter((_, index) => index !== position - start);
          return (row[position - start] ?? 0) - Math.max(...others);
        });
        expect(Math.min(...gaps)).toBeGreaterThanOrEqual(80 - 1e-9);
        // The key is the least that does it: the tightest head is within f16 rounding of 80.
        expect(Math.min(...gaps)).toBeLessThan(cache === 'f16' ? 80.1 : 80 + 1e-5);
      }
    const given = draw({ family: 'dominant', dominantPosition: 99, gap: 30 });
    expect(given.dominantPosition).toBe(99);
  });

  it('makes every score of a head equal for equal-scores', () => {
    const { perHead } = scores(shape, 'f16', { family: 'equal-scores' });
    for (const row of perHead) expect(new Set(row).size).toBe(1);
    expect(new Set(perHead.map((row) => row[0])).size).toBeGreaterThan(1);
  });

  it('draws q 256× larger for large-q, scores beyond f32 exp range', () => {
    const { inputs, perHead } = scores(shape, 'f32', { family: 'large-q' });
    const largest = Math.max(...inputs.buffers.q.map(Math.abs));
    expect(largest).toBeLessThanOrEqual(SDPA_LARGE_Q_FACTOR);
    expect(largest).toBeGreaterThan(0.9 * SDPA_LARGE_Q_FACTOR);
    expect(Math.max(...perHead.flat())).toBeGreaterThan(Math.log(3.4e38));
    expect(
      draw({ family: 'large-q', qMagnitude: 5 }).buffers.q.every((value) => Math.abs(value) <= 5),
    ).toBe(true);
  });

  it('poisons only the positions no query sees, and the reference never reads them', () => {
    const at = { ...shape, n_kv: 90, window: 40 };
    const clean = draw({}, at);
    const poisoned = draw({ poisonInvisible: true }, at);
    const count = 128 * 2 * 64;
    const k = unpackF16Words(poisoned.buffers.k, count);
    const row = 2 * 64;
    expect(k.subarray(0, 50 * row).every(Number.isNaN)).toBe(true);
    expect(k.subarray(50 * row, 90 * row).some(Number.isNaN)).toBe(false);
    expect(k.subarray(90 * row).every(Number.isNaN)).toBe(true);
    const reference = sdpaReference('f16');
    const params = sdpaParams(at);
    expect(reference(poisoned.buffers, params)['out']).toEqual(
      reference(clean.buffers, params)['out'],
    );
  });

  it('names the option or field at fault', () => {
    const fault = (
      options: Partial<SdpaInputOptions>,
      at: Record<string, number> = shape,
    ): string => {
      try {
        draw(options, at as typeof shape);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).path;
      }
      return 'none';
    };
    expect(fault({ magnitude: 70000 })).toBe('magnitude');
    expect(fault({ magnitude: 70000, cache: 'f32' })).toBe('none');
    expect(fault({ magnitude: -1 })).toBe('magnitude');
    expect(fault({ magnitude: Number.NaN })).toBe('magnitude');
    expect(fault({ family: 'dominant', dominantPosition: 100 })).toBe('dominantPosition');
    expect(fault({ family: 'dominant', dominantPosition: 10 }, { ...shape, window: 50 })).toBe(
      'dominantPosition',
    );
    expect(fault({ family: 'dominant', gap: 1e7 })).toBe('gap');
    expect(fault({ family: 'dominant', qMagnitude: 0 })).toBe('qMagnitude');
    expect(fault({}, { ...shape, head_dim: 40 })).toBe('head_dim');
    expect(checkSdpaShape(shape, 'f16')).toEqual(shape);
  });
});
