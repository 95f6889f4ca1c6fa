import { afterAll, describe, expect, it } from 'vitest';
import { LOAD_VECTOR_PROBE, loadVectorProbeCase } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

describe('load_vector on WebGPU', () => {
  it('declares a vector-only buffer as an array of vectors and splits mixed ones', () => {
    const source = emitWgsl(LOAD_VECTOR_PROBE, {}, wgslTarget([])).source;
    expect(source).toContain('var<storage, read> buf_a: array<vec4<f32>>;');
    expect(source).toContain('var<storage, read> buf_b: array<u32>;');
    expect(source).toMatch(
      /let (forge_t\d+) = buf_a\[\(\(v_k \* 4u\)\) \/ 4u\];\n\s+let v_a0: f32 = \1\.x;/,
    );
    expect(source).toMatch(/let v_b1: u32 = buf_b\[forge_t\d+ \+ 1u\];/);
  });

  for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
    it(`computes exact values, features ${features.join(',') || 'none'}`, async () => {
      const shader = emitWgsl(LOAD_VECTOR_PROBE, {}, wgslTarget(features));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      const n = 29;
      const { a, b, expected } = loadVectorProbeCase(n);
      const out = new Float32Array(expected.length);
      await runWgsl(context, shader, { buffers: { a, b, out }, params: { n } });
      expect([...out]).toEqual([...expected]);
    });
  }
});
