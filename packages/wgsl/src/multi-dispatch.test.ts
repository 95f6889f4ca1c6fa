import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '@forge/ir';
import { emitWgsl } from './emit.js';
import { wgslDiagnostics } from './runner/compile.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget, type WgslFeature } from './targets.js';
import { TWO_STAGE_SUM } from '@forge/test-fixtures';

afterAll(closeSharedWebGpu);

function xs(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, index) => (index % 7) - 3 + index / 8);
}

describe('emitWgsl of a multi-dispatch kernel', () => {
  const shader = emitWgsl(TWO_STAGE_SUM, {}, wgslTarget([]));

  it('renders one module with a compute function per dispatch and per-dispatch workgroup arrays', () => {
    const { source } = shader;
    expect(source).toMatch(/@compute @workgroup_size\(64\)\nfn partial_sums\(/);
    expect(source).toMatch(/@compute @workgroup_size\(32\)\nfn combine\(/);
    expect(source).toContain(
      '@group(0) @binding(2) var<storage, read_write> buf_partials: array<f32>;',
    );
    expect(source).toContain('@group(0) @binding(3) var<uniform> forge_params: ForgeParams;');
    expect(source).toContain('var<workgroup> wg_sums: array<f32, 64>;');
    expect(source).toContain('var<workgroup> wg1_sums: array<f32, 32>;');
    // Only the second dispatch exchanges across its warp; the array fits its 32 threads.
    expect(source).toContain('var<workgroup> forge_warp_scratch: array<u32, 32>;');
    const combine = source.slice(source.indexOf('fn combine('));
    expect(combine).toContain('wg1_sums[');
    expect(combine).not.toContain('wg_sums[');
  });

  it('lists every dispatch, the scratch sizes and the scratch binding in the launch metadata', () => {
    const { launch } = shader;
    expect(launch.dispatches).toEqual([
      {
        entryPoint: 'partial_sums',
        workgroupSize: [64, 1, 1],
        grid: ['ceil_div(n, 64)', '1', '1'],
        sharedBytes: 256,
      },
      {
        entryPoint: 'combine',
        workgroupSize: [32, 1, 1],
        grid: ['1', '1', '1'],
        sharedBytes: 128 + 128,
      },
    ]);
    expect(launch.scratch).toEqual([
      {
        name: 'partials',
        group: 0,
        binding: 2,
        element: 'f32',
        length: 'ceil_div(n, 64)',
        bytes: '4 * ceil_div(n, 64)',
      },
    ]);
    expect(
      launch.bindings?.map((binding) => `${binding.name}:${binding.kind}@${binding.binding}`),
    ).toEqual(['x:buffer@0', 'y:buffer@1', 'partials:scratch@2', 'params:params@3']);
  });

  it('rejects a stage entry point that collides with generated names, at its path', () => {
    const spec = JSON.parse(JSON.stringify(TWO_STAGE_SUM)) as { stages: { entryPoint: string }[] };
    (spec.stages[0] as { entryPoint: string }).entryPoint = 'wg1_sums';
    expect(() => emitWgsl(spec, {}, wgslTarget([]))).toThrow(ValidationError);
    expect(() => emitWgsl(spec, {}, wgslTarget([]))).toThrow(/wg1_sums/);
  });

  for (const features of [[], ['subgroups']] as (readonly WgslFeature[])[]) {
    it(`compiles in Tint and runs the sequence on WebGPU, features ${features.join(',') || 'none'}`, async () => {
      const emitted = emitWgsl(TWO_STAGE_SUM, { chunk: 128 }, wgslTarget(features));
      const context = await sharedWebGpu(emitted.launch.requiredFeatures ?? []);
      expect(await wgslDiagnostics(context, emitted.source)).toEqual([]);
      for (const n of [1, 127, 128, 129, 5000]) {
        const x = xs(n);
        const y = new Float32Array(1);
        const result = await runWgsl(context, emitted, { buffers: { x, y }, params: { n } });
        expect(result.grid).toEqual([Math.ceil(n / 128), 1, 1]);
        expect(y[0]).toBeCloseTo(
          x.reduce((sum, value) => sum + value, 0),
          1,
        );
      }
    });
  }
});
