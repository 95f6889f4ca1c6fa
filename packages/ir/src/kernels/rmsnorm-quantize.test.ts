import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { compareWithReference } from './case-inputs.js';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { Rng, fillUniform } from './random.js';
import { addRmsnorm } from './rmsnorm.js';
import { addRmsnormQuantize } from './rmsnorm-quantize.js';
import { gemvQuantized } from './x-quantize.test-support.js';

const [nEmbd, rows] = [768, 2];

/** add-rmsnorm-quantize on the interpreter over random a, b and w (|values| <= magnitude). */
function fused(magnitude: number, schedule: Readonly<Record<string, number>> = {}) {
  const rng = new Rng(21);
  const shape = { n_embd: nEmbd, rows };
  const lengths = addRmsnormQuantize.bufferLengths(shape);
  const buffers = {
    a: fillUniform(new Float32Array(nEmbd * rows), rng, magnitude),
    b: fillUniform(new Float32Array(nEmbd * rows), rng, magnitude),
    w: fillUniform(new Float32Array(nEmbd), rng, 1),
    y: new Float32Array(nEmbd * rows),
    s: new Float32Array(nEmbd * rows),
    x_quant: new Uint32Array(lengths['x_quant'] ?? 0),
    x_factors: new Float32Array(lengths['x_factors'] ?? 0),
  };
  const spec = addRmsnormQuantize.spec;
  const params = addRmsnormQuantize.params(shape);
  interpret(spec, { schedule: resolveSchedule(spec, 'ptx', schedule), params, buffers });
  return buffers;
}

describe('add-rmsnorm-quantize', () => {
  it.each([
    [1, {}],
    [1e-3, { workgroupSize: 32 }],
    [1e3, { workgroupSize: 1024 }],
    // A row in one workgroup; in 16 of 2 groups, 4 of them past its 24 groups (they store nothing).
    [1, { parts: 1 }],
    [1, { parts: 16 }],
    [1, { parts: 16, workgroupSize: 32 }],
  ])(
    'writes the words and factors q4k-gemv would quantize from its y, bit for bit (|a|,|b| <= %s, %j)',
    (magnitude, schedule) => {
      const out = fused(magnitude, schedule);
      for (let row = 0; row < rows; row++) {
        const expected = gemvQuantized(out.y.slice(row * nEmbd, (row + 1) * nEmbd));
        const words = out.x_quant.slice((row * nEmbd) / 2, ((row + 1) * nEmbd) / 2);
        const factors = out.x_factors.slice(row * (nEmbd / 32) * 5, (row + 1) * (nEmbd / 32) * 5);
        expect([...words]).toEqual([...expected.x_quant]);
        expect([...factors]).toEqual([...expected.x_factors]);
      }
    },
  );

  it.each([1, 8, 16])('writes s and y exactly as add-rmsnorm does (%i parts)', (parts) => {
    const out = fused(1, { parts });
    const plain = {
      a: out.a,
      b: out.b,
      w: out.w,
      y: new Float32Array(nEmbd * rows),
      s: new Float32Array(nEmbd * rows),
    };
    const shape = { n_embd: nEmbd, rows };
    const spec = addRmsnorm.spec;
    interpret(spec, {
      schedule: resolveSchedule(spec, 'ptx', {}),
      params: addRmsnorm.params(shape),
      buffers: plain,
    });
    expect([...out.y]).toEqual([...plain.y]);
    expect([...out.s]).toEqual([...plain.s]);
  });

  it('its float64 reference quantizes as the kernel does: scales and sums within f32 rounding, words within one step of v', () => {
    const out = fused(1);
    const params = addRmsnormQuantize.params({ n_embd: nEmbd, rows });
    const reference = addRmsnormQuantize.reference(out, params);
    const factors = reference['x_factors'] ?? [];
    const groups = nEmbd / 32;
    const largest = out.y.reduce((most, value) => Math.max(most, Math.abs(value)), 0);
    out.x_factors.forEach((value, index) => {
      // Scales within f32 rounding; sums of 8 within a few ulps of the row's largest |y|.
      const scale = index % (groups * 5) < groups;
      const bound = scale ? Math.abs(value) * 1e-5 : largest * 1e-6;
      expect(Math.abs(value - (factors[index] ?? 0))).toBeLessThanOrEqual(bound);
    });
    // Each 16-bit v = 256·h + l may differ by one where y's last bit differs from float64's.
    const words = reference['x_quant'] ?? [];
    const value = (high: number, low: number, byte: number) =>
      (((high >>> (8 * byte)) << 24) >> 24) * 256 + ((((low >>> (8 * byte)) & 255) ^ 128) - 128);
    for (let group = 0; group < out.x_quant.length / 16; group++)
      for (let k = 0; k < 8; k++)
        for (let byte = 0; byte < 4; byte++) {
          const at = 16 * group + k;
          const got = value(out.x_quant[at]!, out.x_quant[at + 8]!, byte);
          const want = value(words[at]!, words[at + 8]!, byte);
          expect(Math.abs(got - want)).toBeLessThanOrEqual(1);
        }
  });

  it('holds x_quant to its own tolerance: a rounding flip passes, words out of place fail', () => {
    const out = fused(1);
    const params = addRmsnormQuantize.params({ n_embd: nEmbd, rows });
    const check = (x_quant: Uint32Array) =>
      compareWithReference(addRmsnormQuantize, out, params, { ...out, x_quant });
    expect(check(out.x_quant).nmse).toBeLessThanOrEqual(addRmsnormQuantize.tolerance);
    // Value 3 of a word one step off (its x_low byte 3): within x_quant's tolerance, past the kernel's.
    const flipped = out.x_quant.slice();
    flipped[8] = (flipped[8]! ^ 0x01000000) >>> 0;
    expect(check(flipped).tolerance).toBe(1e-4);
    expect(check(flipped).nmse).toBeGreaterThan(addRmsnormQuantize.tolerance);
    expect(check(flipped).nmse).toBeLessThanOrEqual(1e-4);
    // x_high and x_low swapped in every group: far past it.
    const swapped = out.x_quant.map((_, index) => out.x_quant[index ^ 8]!);
    expect(check(swapped).nmse).toBeGreaterThan(1e-2);
  });

  it('refuses an n_embd that is not whole groups of 128, naming it', () => {
    for (const n of [0, 96, 4000]) {
      expect(() => addRmsnormQuantize.checkShape?.({ n_embd: n, rows: 1 })).toThrow(
        ValidationError,
      );
      try {
        addRmsnormQuantize.checkShape?.({ n_embd: n, rows: 1 });
      } catch (error) {
        expect((error as ValidationError).issues[0]?.path).toBe('n_embd');
      }
    }
  });
});
