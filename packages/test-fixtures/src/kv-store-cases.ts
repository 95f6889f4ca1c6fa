import { getKernel, seedFromString, uniformF32 } from '@forge/ir/kernels';
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

/** A word no kv-store case writes: an f16 NaN pair, or as an f32 about 4.3e37. */
export const KV_STORE_SENTINEL = 0x7e017e01;

/**
 * Test data: a kv-store run whose caches start filled with KV_STORE_SENTINEL, so a test can tell
 * what the kernel wrote: the buffers (k and v uniform in [-2, 2)), the params, and `problems`,
 * which lists each cache word that differs from the reference after the run: row pos rounded
 * another way, or any word outside it changed.
 */
export function kvStoreSentinelRun(
  kernelId: 'kv-store' | 'kv-store-f32',
  shape: Readonly<Record<'n_kv_head' | 'head_dim' | 'pos' | 'max_ctx', number>>,
): {
  buffers: Record<string, Float32Array | Uint32Array>;
  params: Readonly<Record<string, number>>;
  problems: () => string[];
} {
  const kernel = getKernel(kernelId);
  const lengths = kernel.bufferLengths(shape);
  const row = shape.n_kv_head * shape.head_dim;
  const sentinel = (): Uint32Array => new Uint32Array(lengths['k_cache'] ?? 0).fill(KV_STORE_SENTINEL); // prettier-ignore
  const cache = (bits: Uint32Array): Float32Array | Uint32Array =>
    kernelId === 'kv-store' ? bits : new Float32Array(bits.buffer);
  const buffers = {
    k: uniformF32(row, seedFromString(`${kernelId} k`), 2),
    v: uniformF32(row, seedFromString(`${kernelId} v`), 2),
    k_cache: cache(sentinel()),
    v_cache: cache(sentinel()),
  };
  const params = kernel.params(shape);
  // The reference keeps what the caches held outside row pos: here the sentinel, bit for bit.
  const before = { k_cache: cache(sentinel()), v_cache: cache(sentinel()) };
  const expected = kernel.reference({ ...buffers, ...before }, params);
  const problems = (): string[] =>
    (['k_cache', 'v_cache'] as const).flatMap((name) => {
      const values = expected[name] ?? [];
      const want =
        kernelId === 'kv-store'
          ? Uint32Array.from(values)
          : new Uint32Array(Float32Array.from(values).buffer);
      const got = new Uint32Array(buffers[name].buffer);
      return [...got.keys()]
        .filter((index) => got[index] !== want[index])
        .map((index) => `${name}[${index}] = 0x${got[index]?.toString(16)}, want 0x${want[index]?.toString(16)}`); // prettier-ignore
    });
  return { buffers, params, problems };
}
