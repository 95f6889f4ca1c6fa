import { afterAll, describe, expect, it } from 'vitest';
import { getKernel } from '@forge/ir/kernels';
import { kvStoreSentinelRun } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

const RUNS = (['kv-store', 'kv-store-f32'] as const).flatMap((kernelId) =>
  ([[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]).map(
    (features) => [`${kernelId}, features ${features.join(',') || 'none'}`, kernelId, features] as const, // prettier-ignore
  ),
);

describe('kv-store on WebGPU', () => {
  it.each(RUNS)('%s writes row pos exactly and nothing else', async (_name, kernelId, features) => {
    const run = kvStoreSentinelRun(kernelId, { n_kv_head: 8, head_dim: 128, pos: 5, max_ctx: 7 });
    const shader = emitWgsl(getKernel(kernelId).spec, {}, wgslTarget(features));
    const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
    await runWgsl(context, shader, { buffers: run.buffers, params: run.params });
    expect(run.problems()).toEqual([]);
  });
});
