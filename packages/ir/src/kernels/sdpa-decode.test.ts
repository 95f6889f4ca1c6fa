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
  const schedule = resolveSchedule(
    kernel.spec,
    'ptx',
    at.warps === undefined ? {} : { warps: at.warps },
  );
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
});
