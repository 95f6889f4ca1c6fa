import { afterAll, describe, expect, it } from 'vitest';
import { PACK_HALF_IN_RANGE, PACK_HALF_PROBE, packHalfProbeData } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

// WGSL leaves pack2x16float indeterminate outside f16's finite range, so only values within
// ±65504 are checked here (the op probes document what lavapipe does with the rest).
describe('pack_half on WebGPU', () => {
  it('renders as pack2x16float and needs no f16 feature', () => {
    const shader = emitWgsl(PACK_HALF_PROBE, {}, wgslTarget([]));
    expect(shader.source).toContain('pack2x16float(vec2<f32>(v_low, v_high))');
    expect(shader.launch.requiredFeatures ?? []).toEqual([]);
  });

  for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
    it(`computes the nearest-even halves in range, features ${features.join(',') || 'none'}`, async () => {
      const shader = emitWgsl(PACK_HALF_PROBE, {}, wgslTarget(features));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      const { values, words } = packHalfProbeData(PACK_HALF_IN_RANGE);
      const out = new Uint32Array(words.length);
      await runWgsl(context, shader, { buffers: { values, out }, params: { n: words.length } });
      const hex = (array: Uint32Array): string[] => [...array].map((word) => word.toString(16));
      expect(hex(out)).toEqual(hex(words));
    });
  }
});
