import { afterAll, describe, expect, it } from 'vitest';
import { UNPACK_HALF_PROBE, UNPACK_HALF_VALUES, unpackHalfProbeWords } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

describe('unpack_half on WebGPU', () => {
  it('renders as unpack2x16float and needs no f16 feature', () => {
    const shader = emitWgsl(UNPACK_HALF_PROBE, {}, wgslTarget([]));
    expect(shader.source).toContain('unpack2x16float(v_word).x');
    expect(shader.source).toContain('unpack2x16float(v_word).y');
    expect(shader.launch.requiredFeatures ?? []).toEqual([]);
  });

  for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
    it(`computes exact values, features ${features.join(',') || 'none'}`, async () => {
      const shader = emitWgsl(UNPACK_HALF_PROBE, {}, wgslTarget(features));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      const words = unpackHalfProbeWords();
      const out = new Float32Array(2 * words.length);
      await runWgsl(context, shader, { buffers: { words, out }, params: { n: words.length } });
      expect([...out]).toEqual(UNPACK_HALF_VALUES.map(([, value]) => value));
    });
  }
});
