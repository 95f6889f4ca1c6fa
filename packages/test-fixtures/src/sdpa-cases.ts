import { seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

interface SdpaCaseOptions {
  readonly nHead?: number;
  readonly nKvHead?: number;
  readonly headDim?: number;
  readonly window?: number;
  /** `uniform` by default (drawn buffer by buffer, nothing poisoned); others poison what no query sees. */
  readonly family?: 'uniform-poisoned' | 'dominant' | 'equal-scores' | 'large-q';
  readonly schedule?: Readonly<Record<string, number>>;
  readonly engines?: ExecutionCase['engines'];
}

/**
 * A decode-attention case over `nKv` positions (8 query heads over 2 KV heads of 128 by default).
 * Without a window the cache holds exactly the visible positions, so every engine's test sees each
 * K/V byte read; with one it holds 7 more, and the hidden positions are only partly read.
 */
function sdpaCase(id: string, nKv: number, options: SdpaCaseOptions = {}): ExecutionCase {
  const { nHead = 8, nKvHead = 2, headDim = 128, window = 0 } = options;
  const schedule = options.schedule ?? {};
  const family = options.family === 'uniform-poisoned' ? 'uniform' : options.family;
  const poisoned = options.family === undefined ? '' : ` ${options.family}`;
  const windowLabel = window === 0 ? '' : ` window=${window}`;
  const name = `${id} heads=${nHead}/${nKvHead} head_dim=${headDim} n_kv=${nKv}${windowLabel}${poisoned} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: id,
    schedule,
    shape: {
      n_head: nHead,
      n_kv_head: nKvHead,
      head_dim: headDim,
      n_kv: nKv,
      max_ctx: window === 0 ? nKv : nKv + 7,
      window,
    },
    seed: seedFromString(name),
    magnitude: 1,
    ...(family === undefined ? {} : { family }),
    ...(window === 0 ? {} : { partlyRead: ['k', 'v'] }),
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

const F16 = 'sdpa-decode';
const F32 = 'sdpa-decode-f32';
const QUANTIZE = 'sdpa-decode-quantize';

/**
 * Decode attention: the n_kv at 8/2 heads of 128; every head ratio and head_dim; windows
 * (one position, mid-tile, wider than n_kv); the adversarial families (with a window too); the
 * f32 cache; 1 and 6 warps (6 is WGSL's largest); 1, 2, 4 and 64 splits (a split takes ≥ 32
 * positions a warp, so most of 64 are empty, or 34 in use at 1057 positions); `heads` 1 (MHA), 2 (a
 * group of 7 in 4 passes) and 8 (a group of 8 in one workgroup).
 * 4096 positions only on WebGPU (the simulator takes ~8 s per arch for it).
 */
export const SDPA_DECODE_CASES: readonly ExecutionCase[] = [
  ...[1, 2, 31, 32, 33, 257, 1000].map((nKv) => sdpaCase(F16, nKv)),
  sdpaCase(F16, 4096, { engines: ['webgpu'] }),
  sdpaCase(F16, 33, { nHead: 8, nKvHead: 8, headDim: 64 }),
  sdpaCase(F16, 33, { nHead: 32, nKvHead: 8, headDim: 128 }),
  sdpaCase(F16, 33, { nHead: 4, nKvHead: 1, headDim: 32 }),
  sdpaCase(F16, 257, { headDim: 32 }),
  sdpaCase(F16, 257, { headDim: 64 }),
  sdpaCase(F16, 100, { headDim: 64, window: 1, family: 'uniform-poisoned' }),
  sdpaCase(F16, 257, { headDim: 64, window: 100, family: 'uniform-poisoned' }),
  sdpaCase(F16, 33, { nHead: 4, nKvHead: 1, headDim: 32, window: 40 }),
  sdpaCase(F16, 257, { family: 'dominant' }),
  sdpaCase(F16, 257, { family: 'dominant', window: 70 }),
  sdpaCase(F16, 257, { family: 'equal-scores' }),
  sdpaCase(F16, 257, { family: 'large-q' }),
  sdpaCase(F16, 257, { family: 'large-q', nHead: 32, nKvHead: 8, headDim: 64, window: 45 }),
  sdpaCase(F32, 257),
  sdpaCase(F32, 33, { nHead: 4, nKvHead: 1, headDim: 32, window: 20, family: 'dominant' }),
  sdpaCase(F32, 257, { family: 'large-q', headDim: 64 }),
  sdpaCase(F16, 257, { schedule: { warps: 1 } }),
  sdpaCase(F16, 1000, { headDim: 64, schedule: { warps: 2 } }),
  sdpaCase(F16, 257, { schedule: { splits: 1 } }),
  sdpaCase(F16, 1000, { headDim: 64, schedule: { splits: 4 } }),
  sdpaCase(F16, 33, { nHead: 4, nKvHead: 1, headDim: 32, schedule: { splits: 64 } }),
  // 34 splits in use: more than the combine loads with the stats (32), the last batch partial.
  sdpaCase(F16, 1057, { nHead: 4, nKvHead: 1, headDim: 32, schedule: { splits: 64, warps: 1, heads: 1 } }), // prettier-ignore
  sdpaCase(F32, 1000, {
    headDim: 64,
    window: 700,
    family: 'dominant',
    schedule: { splits: 2, warps: 2 },
  }),
  sdpaCase(F16, 33, { nHead: 8, nKvHead: 8, headDim: 64, window: 20, schedule: { heads: 1 } }),
  sdpaCase(F32, 257, {
    nHead: 28,
    nKvHead: 4,
    headDim: 32,
    family: 'dominant',
    schedule: { heads: 2 },
  }),
  sdpaCase(F16, 257, { nHead: 16, nKvHead: 2, headDim: 64, schedule: { heads: 8 } }),
  // The combine quantizing out for the output projection: Llama's 32/8 heads of 128, one
  // position, a window, head_dim 32 (a head one x group) and the large-q family's extremes.
  sdpaCase(QUANTIZE, 300, { nHead: 32, nKvHead: 8, headDim: 128 }),
  sdpaCase(QUANTIZE, 1),
  sdpaCase(QUANTIZE, 257, { headDim: 64, window: 100, family: 'uniform-poisoned' }),
  sdpaCase(QUANTIZE, 33, { nHead: 4, nKvHead: 1, headDim: 32, schedule: { splits: 64 } }),
  sdpaCase(QUANTIZE, 257, { family: 'large-q', schedule: { heads: 8, warps: 2 } }),
];
