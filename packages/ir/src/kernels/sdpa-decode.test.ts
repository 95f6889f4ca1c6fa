import { describe, expect, it } from 'vitest';
import { bindConstants } from '../bind-constants.js';
import { walkBody } from '../rewrite.js';
import { interpret } from '../interpreter/run.js';
import type { KernelSpec } from '../spec.js';
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
  readonly heads?: number;
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
    ...(at.heads === undefined ? {} : { heads: at.heads }),
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

  it('gives the same result on 1, 2 and 8 warps, and over an f32 cache', () => {
    for (const warps of [1, 2, 8])
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

  // A split takes at least a tile a warp (128 positions by default): later splits may be empty.
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

  // The combine loads every split's value with the stats, 8 a batch, skipping batches past the
  // splits in use: 34 (a partly used batch) and 64 splits in use.
  it.each([1057, 2048])('merges up to 64 splits, batch by batch (n_kv %i)', (nKv) => {
    const at = { n_head: 4, n_kv_head: 1, head_dim: 32, n_kv: nKv, warps: 1, heads: 1, splits: 64 };
    expect(nmseOf(at)).toBeLessThanOrEqual(1e-10);
    expect(nmseOf({ ...at, window: 1040, family: 'dominant' })).toBeLessThanOrEqual(1e-10);
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

// Groups of 1, 4, 7 and 8 query heads a KV head (MHA, Llama-3-8B-like, Qwen 28/4, Llama-3-70B-like).
const GROUPS = [
  [8, 8],
  [8, 2],
  [28, 4],
  [16, 2],
] as const;
const SIZES = [
  [32, 700],
  [64, 33],
  [128, 257],
] as const;

describe('sdpa-decode with the heads knob', () => {
  it.each([1, 2, 4, 8])('matches the reference at heads=%i on groups of 1, 4, 7 and 8', (heads) => {
    GROUPS.forEach(([n, g], index) => {
      // Each group at a different (head_dim, n_kv) per heads value: all 3 sizes get covered.
      const [headDim, nKv] = SIZES[(index + heads) % SIZES.length]!;
      expect(
        nmseOf({ n_head: n, n_kv_head: g, head_dim: headDim, n_kv: nKv, heads }),
      ).toBeLessThanOrEqual(1e-10);
    });
  });

  it.each([1, 2, 8])('stays within 1e-10 at heads=%i under a window and on dominant', (heads) => {
    const window = { n_head: 16, n_kv_head: 2, head_dim: 64, n_kv: 257, window: 100, heads };
    expect(nmseOf({ ...window, splits: 4 })).toBeLessThanOrEqual(1e-10);
    for (const cache of ['f16', 'f32'] as const)
      expect(
        nmseOf({
          n_head: 28,
          n_kv_head: 4,
          head_dim: 128,
          n_kv: 70,
          cache,
          family: 'dominant',
          heads,
        }),
      ).toBeLessThanOrEqual(1e-10);
  });

  it('keeps only the heads a schedule carries once it is bound', () => {
    const locals = (heads: number): Set<string> => {
      const schedule = resolveSchedule(sdpaDecode.spec, 'ptx', { heads });
      const names = new Set<string>();
      walkBody(bindConstants(sdpaDecode.spec.body, schedule, 128, sdpaDecode.spec.shared), {
        statement: (statement) => {
          if (statement.op === 'let') names.add(statement.name);
        },
      });
      return names;
    };
    for (const heads of [1, 2, 4, 8]) {
      const names = [...locals(heads)];
      // Each head's running max and rescale factor (`m`, `m_1`, …; `alpha`, `alpha_1`, …).
      for (const hint of ['m', 'alpha'])
        expect(names.filter((name) => new RegExp(`^${hint}(_\\d+)?$`).test(name))).toHaveLength(
          heads,
        );
    }
  });

  // The interpreter runs the unbound spec (a `schedule` expression reads the knob): it must agree
  // bit for bit with the bound body the backends get.
  it.each([1, 8])('gives the same bits from the bound body at heads=%i', (heads) => {
    const shape = { n_head: 16, n_kv_head: 2, head_dim: 64, n_kv: 300, max_ctx: 300, window: 0 };
    const { buffers } = sdpaInputs(shape, {
      cache: 'f16',
      rng: new Rng(9),
      magnitude: 1,
      family: 'uniform',
      poisonInvisible: false,
    });
    const schedule = resolveSchedule(sdpaDecode.spec, 'ptx', { heads, warps: 2 });
    const body = bindConstants(sdpaDecode.spec.body, schedule, 64, sdpaDecode.spec.shared);
    const bound: KernelSpec = { ...sdpaDecode.spec, body };
    const outs = [sdpaDecode.spec, bound].map((spec) => {
      const out = new Float32Array(16 * 64);
      interpret(spec, { schedule, params: sdpaDecode.params(shape), buffers: { ...buffers, out } });
      return out;
    });
    expect(outs[1]).toEqual(outs[0]);
  });
});
