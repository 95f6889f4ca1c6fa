import { describe, expect, it } from 'vitest';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { compareWithReference } from './case-inputs.js';
import { Rng } from './random.js';
import { sdpaDecode, sdpaDecodeF32 } from './sdpa-decode.js';
import { sdpaInputs, type SdpaInputFamily } from './sdpa-inputs.js';
import type { SdpaCache } from './sdpa-shape.js';

interface Case {
  readonly n_head: number;
  readonly n_kv_head: number;
  readonly head_dim: number;
  readonly n_kv: number;
  readonly window?: number;
  readonly cache?: SdpaCache;
  readonly family?: SdpaInputFamily;
  readonly warps?: number;
  readonly splits?: number;
}

/** Runs a case on the interpreter (invisible positions poisoned with NaN); its NMSE. */
function nmseOf(at: Case): number {
  const cache = at.cache ?? 'f16';
  const kernel = cache === 'f16' ? sdpaDecode : sdpaDecodeF32;
  const shape = {
    n_head: at.n_head,
    n_kv_head: at.n_kv_head,
    head_dim: at.head_dim,
    n_kv: at.n_kv,
    max_ctx: at.n_kv + 3,
    window: at.window ?? 0,
  };
  const { buffers: inputs } = sdpaInputs(shape, {
    cache,
    rng: new Rng(7),
    magnitude: 1,
    family: at.family ?? 'uniform',
    poisonInvisible: true,
  });
  const params = kernel.params(shape);
  const out = new Float32Array(shape.n_head * shape.head_dim).fill(Number.NaN);
  const buffers = { ...inputs, out };
  const schedule = resolveSchedule(kernel.spec, 'ptx', {
    ...(at.warps === undefined ? {} : { warps: at.warps }),
    ...(at.splits === undefined ? {} : { splits: at.splits }),
  });
  interpret(kernel.spec, { schedule, params, buffers });
  return compareWithReference(kernel, inputs, params, { out }).nmse;
}

const HEADS = [
  [8, 8],
  [8, 2],
  [32, 8],
  [4, 1],
] as const;

describe('sdpa-decode on the interpreter', () => {
  it.each([1, 2, 31, 32, 33, 257])('matches the reference at n_kv %i, 8/2 heads of 128', (nKv) => {
    expect(nmseOf({ n_head: 8, n_kv_head: 2, head_dim: 128, n_kv: nKv })).toBeLessThanOrEqual(
      1e-10,
    );
  });

  it.each(HEADS)('matches the reference with %i/%i heads at head_dim 32, 64 and 128', (n, g) => {
    for (const headDim of [32, 64, 128])
      expect(nmseOf({ n_head: n, n_kv_head: g, head_dim: headDim, n_kv: 45 })).toBeLessThanOrEqual(
        1e-10,
      );
  });

  it.each([
    [100, 1],
    [100, 30],
    [100, 64],
    [33, 40],
    [257, 200],
  ])('sees only the last window positions at n_kv %i, window %i', (nKv, window) => {
    expect(
      nmseOf({ n_head: 8, n_kv_head: 2, head_dim: 64, n_kv: nKv, window }),
    ).toBeLessThanOrEqual(1e-10);
  });

  it.each(['dominant', 'equal-scores', 'large-q'] as const)(
    'stays within 1e-10 on the %s family, f16 and f32',
    (family) => {
      for (const cache of ['f16', 'f32'] as const)
        for (const [nKv, window] of [
          [70, 0],
          [257, 100],
        ] as const)
          expect(
            nmseOf({ n_head: 8, n_kv_head: 2, head_dim: 128, n_kv: nKv, window, cache, family }),
          ).toBeLessThanOrEqual(1e-10);
    },
  );

  it('gives the same result on 1 to 8 warps, and over an f32 cache', () => {
    for (const warps of [1, 3, 8])
      expect(
        nmseOf({ n_head: 8, n_kv_head: 2, head_dim: 64, n_kv: 130, warps }),
      ).toBeLessThanOrEqual(1e-10);
    for (const [n, g] of HEADS)
      expect(
        nmseOf({ n_head: n, n_kv_head: g, head_dim: 32, n_kv: 33, cache: 'f32' }),
      ).toBeLessThanOrEqual(1e-10);
  });

  it('takes a GQA group of more than 4 heads in several workgroups', () => {
    expect(nmseOf({ n_head: 12, n_kv_head: 2, head_dim: 64, n_kv: 40 })).toBeLessThanOrEqual(1e-10);
    expect(nmseOf({ n_head: 6, n_kv_head: 1, head_dim: 32, n_kv: 40 })).toBeLessThanOrEqual(1e-10);
  });

  // A split takes at least 256 positions, so short ranges leave the later splits empty.
  it.each([1, 4, 8])('merges %i splits, some of them empty', (splits) => {
    for (const [nKv, window] of [
      [1, 0],
      [33, 0],
      [100, 0],
      [1000, 0],
      [257, 70],
      [600, 0],
      [1000, 600],
    ] as const)
      expect(
        nmseOf({ n_head: 8, n_kv_head: 2, head_dim: 64, n_kv: nKv, window, splits }),
      ).toBeLessThanOrEqual(1e-10);
    expect(
      nmseOf({ n_head: 32, n_kv_head: 8, head_dim: 32, n_kv: 700, splits, family: 'dominant' }),
    ).toBeLessThanOrEqual(1e-10);
  });

  it('writes every output element whatever the split count (none left NaN)', () => {
    const shape = { n_head: 4, n_kv_head: 1, head_dim: 32, n_kv: 5, max_ctx: 5, window: 0 };
    const { buffers } = sdpaInputs(shape, {
      cache: 'f16',
      rng: new Rng(3),
      magnitude: 1,
      family: 'uniform',
      poisonInvisible: false,
    });
    for (const splits of [1, 2, 64]) {
      const out = new Float32Array(4 * 32).fill(Number.NaN);
      const schedule = resolveSchedule(sdpaDecode.spec, 'wgsl', { splits });
      interpret(sdpaDecode.spec, {
        schedule,
        params: sdpaDecode.params(shape),
        buffers: { ...buffers, out },
      });
      expect(out.every((value) => Number.isFinite(value))).toBe(true);
    }
  });

  it('really splits 1000 positions: 4 splits sum in another order than 1', () => {
    const shape = { n_head: 8, n_kv_head: 2, head_dim: 64, n_kv: 1000, max_ctx: 1000, window: 0 };
    const { buffers } = sdpaInputs(shape, {
      cache: 'f16',
      rng: new Rng(5),
      magnitude: 1,
      family: 'uniform',
      poisonInvisible: false,
    });
    const outs = [1, 4].map((splits) => {
      const out = new Float32Array(8 * 64);
      const schedule = resolveSchedule(sdpaDecode.spec, 'ptx', { splits });
      interpret(sdpaDecode.spec, {
        schedule,
        params: sdpaDecode.params(shape),
        buffers: { ...buffers, out },
      });
      return out;
    });
    expect(outs[0]!.some((value, i) => value !== outs[1]![i])).toBe(true);
  });
});
