import { seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

type RopeKvStoreId = 'rope-kv-store' | 'rope-kv-store-f32';

/**
 * A rope-kv-store case: `nHead`/`nKvHead` heads of `headDim` rotated at `pos`, k and v stored into
 * row pos of a `maxCtx`-position cache (and table): both read and written in part.
 */
function ropeKvStoreCase(
  kernelId: RopeKvStoreId,
  [nHead, nKvHead, headDim, pos, maxCtx]: readonly [number, number, number, number, number],
  neox: boolean,
  schedule: Readonly<Record<string, number>> = {},
): ExecutionCase {
  const name = `${kernelId} heads=${nHead}/${nKvHead} head_dim=${headDim} pos=${pos} max_ctx=${maxCtx} mode=${neox ? 'neox' : 'normal'} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n_head: nHead, n_kv_head: nKvHead, head_dim: headDim, pos, max_ctx: maxCtx, neox: neox ? 1 : 0 }, // prettier-ignore
    seed: seedFromString(name),
    magnitude: 1,
    partlyRead: ['cos_sin'],
    partlyWritten: ['k_cache', 'v_cache'],
  };
}

/**
 * rope-kv-store on both caches and in both modes: Llama's 32/8 heads of 128 at the first, a middle
 * and the last row, an odd 3/1 GQA of 64, head_dim 80 (not a power of two) and 4 (one thread a
 * head); 32 threads (a grid-stride loop) and 1024 (more threads than values).
 */
export const ROPE_KV_STORE_CASES: readonly ExecutionCase[] = (
  ['rope-kv-store', 'rope-kv-store-f32'] as const
).flatMap((kernelId) => [
  ...[false, true].flatMap((neox) => [
    ropeKvStoreCase(kernelId, [32, 8, 128, 37, 64], neox),
    ropeKvStoreCase(kernelId, [3, 1, 64, 4095, 4096], neox),
    ropeKvStoreCase(kernelId, [5, 5, 80, 0, 8], neox),
  ]),
  ropeKvStoreCase(kernelId, [32, 8, 128, 63, 64], false, { workgroupSize: 32 }),
  ropeKvStoreCase(kernelId, [2, 1, 4, 6, 7], true, { workgroupSize: 1024 }),
]);
