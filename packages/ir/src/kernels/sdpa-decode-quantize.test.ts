import { describe, expect, it } from 'vitest';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { compareWithReference } from './case-inputs.js';
import type { Shape } from './catalog-kernel.js';
import { Rng } from './random.js';
import { sdpaDecode, sdpaDecodeQuantize } from './sdpa-decode.js';
import { sdpaInputs } from './sdpa-inputs.js';
import { gemvQuantized } from './x-quantize.test-support.js';

/** Runs `kernel` on the interpreter over the same inputs; its buffers after the run. */
function run(
  kernel: typeof sdpaDecode,
  shape: Shape,
  schedule: Readonly<Record<string, number>>,
  magnitude: number,
) {
  const { buffers: inputs } = sdpaInputs(shape, { cache: 'f16', rng: new Rng(5), magnitude });
  const lengths = kernel.bufferLengths(shape);
  const buffers: Record<string, Float32Array | Uint32Array> = {
    ...inputs,
    out: new Float32Array(lengths['out'] ?? 0),
    ...(kernel.outputs.includes('x_quant') && {
      x_quant: new Uint32Array(lengths['x_quant'] ?? 0),
      x_factors: new Float32Array(lengths['x_factors'] ?? 0),
    }),
  };
  const resolved = resolveSchedule(kernel.spec, 'ptx', schedule);
  interpret(kernel.spec, { schedule: resolved, params: kernel.params(shape), buffers });
  return { inputs, buffers };
}

const shapeOf = (overrides: Partial<Record<string, number>>): Shape => ({
  n_head: 8,
  n_kv_head: 2,
  head_dim: 128,
  n_kv: 300,
  max_ctx: 300,
  window: 0,
  ...overrides,
});

describe('sdpa-decode-quantize', () => {
  it.each([
    [{}, {}, 1],
    [{ n_head: 4, n_kv_head: 4, head_dim: 64, n_kv: 33, max_ctx: 40 }, { warps: 1 }, 1e-3],
    [{ n_head: 6, n_kv_head: 2, head_dim: 256, n_kv: 1000, max_ctx: 1000 }, { heads: 2 }, 30],
    [{ n_kv: 40, max_ctx: 50, window: 17 }, { splits: 1 }, 1],
  ])(
    'writes out as sdpa-decode does and x_quant, x_factors as q4k-gemv would quantize it, bit for bit (%j, %j, |x| <= %s)',
    (overrides, schedule, magnitude) => {
      const shape = shapeOf(overrides);
      const fused = run(sdpaDecodeQuantize, shape, schedule, magnitude).buffers;
      const plain = run(sdpaDecode, shape, schedule, magnitude).buffers;
      expect([...(fused['out'] ?? [])]).toEqual([...(plain['out'] ?? [])]);
      const expected = gemvQuantized(fused['out'] as Float32Array);
      expect([...(fused['x_quant'] ?? [])]).toEqual([...expected.x_quant]);
      expect([...(fused['x_factors'] ?? [])]).toEqual([...expected.x_factors]);
      // Not vacuous: the words and scales hold values.
      expect(expected.x_quant.some((word) => word !== 0)).toBe(true);
    },
  );

  it('passes its float64 reference, and fails it with one word of x_quant changed', () => {
    const shape = shapeOf({});
    const { inputs, buffers } = run(sdpaDecodeQuantize, shape, {}, 1);
    const params = sdpaDecodeQuantize.params(shape);
    const check = compareWithReference(sdpaDecodeQuantize, inputs, params, buffers);
    expect(check.nmse).toBeLessThanOrEqual(check.tolerance);
    const words = buffers['x_quant'] as Uint32Array;
    words[5] = (words[5] ?? 0) ^ 0x7f000000;
    const broken = compareWithReference(sdpaDecodeQuantize, inputs, params, buffers);
    expect(broken.nmse).toBeGreaterThan(broken.tolerance);
  });
});
