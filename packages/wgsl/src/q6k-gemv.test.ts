import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizedMse, packWords, q6kGemv as kernel, type WgslFeature } from '@forge/ir';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';

afterAll(closeSharedWebGpu);

const ORACLE = new URL('../../../../shared/oracle/', import.meta.url);
const floats = (name: string): Float32Array =>
  new Float32Array(new Uint8Array(readFileSync(new URL(name, ORACLE))).buffer);

describe("q6k-gemv on WebGPU against ggml's oracle", () => {
  for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
    it(`64 x 512, features ${features.join(',') || 'none'}: exact y within 1e-10 NMSE`, async () => {
      const shader = emitWgsl(kernel.spec, {}, wgslTarget(features));
      // f16 scales are read as u32 words and unpacked, so no feature needs shader-f16.
      expect(shader.launch.requiredFeatures ?? []).not.toContain('shader-f16');
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      const w = packWords(new Uint8Array(readFileSync(new URL('Q6_K_64x512.w.bin', ORACLE))));
      const buffers = { w, x: floats('Q6_K_64x512.x.f32'), y: new Float32Array(64) };
      await runWgsl(context, shader, { buffers, params: { n_in: 512, n_out: 64 } });
      expect(normalizedMse(buffers.y, floats('Q6_K_64x512.y.f32'))).toBeLessThanOrEqual(
        kernel.tolerance,
      );
    });
  }
});
