import { afterAll, describe, expect, it } from 'vitest';
import { STORE_VECTOR_PROBE, storeVectorProbeCase } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { wgslDiagnostics } from './runner/compile.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

describe('store_vector on WebGPU', () => {
  it('writes a vector-only buffer as one vector and splits the others per element', () => {
    const source = emitWgsl(STORE_VECTOR_PROBE, {}, wgslTarget([])).source;
    expect(source).toContain('var<storage, read_write> buf_out: array<vec4<f32>>;');
    expect(source).toContain('var<storage, read_write> buf_pairs: array<u32>;');
    expect(source).toMatch(
      /buf_out\[\(v_first\) \/ 4u\] = vec4<f32>\(v_t0, \(v_t1 \+ 1\.0f\), \(v_t2 \* 2\.0f\), 5\.0f\);/,
    );
    expect(source).toMatch(
      /let (forge_t\d+): u32 = v_first;\n\s+wg_tile\[\1 \+ 0u\] = v_a3;\n\s+wg_tile\[\1 \+ 1u\] = v_a2;/,
    );
    expect(source).toMatch(/buf_pairs\[(forge_t\d+) \+ 1u\] = \(\(v_k \* 7u\) \+ 1u\);/);
  });

  for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
    it(`compiles in Tint and writes exact values, features ${features.join(',') || 'none'}`, async () => {
      const shader = emitWgsl(STORE_VECTOR_PROBE, {}, wgslTarget(features));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      expect(await wgslDiagnostics(context, shader.source)).toEqual([]);
      const n = 29;
      const expected = storeVectorProbeCase(n);
      const out = new Float32Array(4 * n);
      const pairs = new Uint32Array(2 * n + 1);
      await runWgsl(context, shader, {
        buffers: { a: expected.a, out, pairs },
        params: { n },
      });
      expect([...out]).toEqual([...expected.out]);
      expect([...pairs]).toEqual([...expected.pairs]);
    });
  }
});
