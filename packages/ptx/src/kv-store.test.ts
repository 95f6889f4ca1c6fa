import { describe, expect, it } from 'vitest';
import { getKernel } from '@forge/ir/kernels';
import { kvStoreSentinelRun } from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { simulateShader } from './simulate.js';
import { PTX_ARCHS, ptxTarget } from './targets.js';

const KERNELS = ['kv-store', 'kv-store-f32'] as const;
const SHAPE = { n_kv_head: 8, head_dim: 128, pos: 5, max_ctx: 7 };

describe('kv-store on the PTX simulator', () => {
  it.each(KERNELS)('%s writes row pos exactly and nothing else, in whole sectors', (kernelId) => {
    const run = kvStoreSentinelRun(kernelId, SHAPE);
    const shader = emitPtx(getKernel(kernelId).spec, {}, ptxTarget('sm_80'));
    const result = simulateShader(shader, run.buffers, run.params);
    expect(result.findings).toEqual([]);
    expect(run.problems()).toEqual([]);
    // One row of each cache written once (2 or 4 bytes a value), k and v read once, nothing else.
    const row = SHAPE.n_kv_head * SHAPE.head_dim;
    const written = row * (kernelId === 'kv-store' ? 2 : 4);
    const traffic = result.counters.buffers;
    expect([traffic['param_k_cache']?.bytesWritten, traffic['param_v_cache']?.bytesWritten]).toEqual([written, written]); // prettier-ignore
    expect([traffic['param_k_cache']?.bytesRead, traffic['param_v_cache']?.bytesRead]).toEqual([0, 0]); // prettier-ignore
    expect([traffic['param_k']?.bytesRead, traffic['param_v']?.bytesRead]).toEqual([4 * row, 4 * row]); // prettier-ignore
  });

  const bounds = getKernel('kv-store').spec.schedule[0]?.bounds?.['ptx'];
  const RUNS = KERNELS.flatMap((kernelId) =>
    [bounds?.min ?? 0, bounds?.max ?? 0].flatMap(
      (workgroupSize) =>
      PTX_ARCHS.map((arch) => [`${kernelId} workgroupSize=${workgroupSize} on ${arch}`, kernelId, workgroupSize, arch] as const), // prettier-ignore
    ),
  );
  it.each(RUNS)('%s assembles without spills', (_name, kernelId, workgroupSize, arch) => {
    const shader = emitPtx(getKernel(kernelId).spec, { workgroupSize }, ptxTarget(arch));
    const result = assemblePtx(shader.source, arch);
    expect(result.ok).toBe(true);
    expect(result.spillStores + result.spillLoads).toBe(0);
  });
});
