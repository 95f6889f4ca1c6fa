import { seedFromString } from '@forge/ir/kernels';
import { magnitudeLabel, scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

interface KvStoreOptions {
  readonly magnitude?: number;
  readonly family?: string;
  readonly schedule?: Readonly<Record<string, number>>;
}

/** One kv-store case: `heads` KV heads of `headDim` into row `pos` of a `maxCtx`-position cache. */
function kvStoreCase(
  kernelId: 'kv-store' | 'kv-store-f32',
  [heads, headDim, pos, maxCtx]: readonly [number, number, number, number],
  options: KvStoreOptions = {},
): ExecutionCase {
  const magnitude = options.magnitude ?? 1;
  const schedule = options.schedule ?? {};
  const inputs = options.family ?? `|x|<=${magnitudeLabel(magnitude)}`;
  const name = `${kernelId} n_kv_head=${heads} head_dim=${headDim} pos=${pos} max_ctx=${maxCtx} ${inputs} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n_kv_head: heads, head_dim: headDim, pos, max_ctx: maxCtx },
    seed: seedFromString(name),
    magnitude,
    ...(options.family === undefined ? {} : { family: options.family }),
    // Only row pos of each cache is written; the rest must keep what it held.
    partlyWritten: ['k_cache', 'v_cache'],
  };
}

const both = (
  shape: readonly [number, number, number, number],
  options?: KvStoreOptions,
): ExecutionCase[] => [
  kvStoreCase('kv-store', shape, options),
  kvStoreCase('kv-store-f32', shape, options),
];

/**
 * kv-store and kv-store-f32: the first, a middle and the last row; a Llama-like 8 × 128 row, a
 * small GQA one and an odd one (9 pairs, a part-filled workgroup); values from 1e-3 (f16
 * subnormals) to 6e4 (near f16's largest), and exact f16 ties, which only nearest-even rounds
 * right; the smallest workgroup.
 */
export const KV_STORE_CASES: readonly ExecutionCase[] = [
  ...both([8, 128, 37, 64]),
  ...both([8, 128, 0, 64]),
  ...both([2, 64, 15, 16]),
  ...both([3, 6, 4, 5]),
  ...both([2, 64, 3, 8], { magnitude: 1e-3 }),
  ...both([2, 64, 3, 8], { magnitude: 6e4 }),
  ...both([8, 128, 63, 64], { family: 'f16-ties' }),
  ...both([8, 128, 1, 4], { schedule: { workgroupSize: 32 } }),
];
