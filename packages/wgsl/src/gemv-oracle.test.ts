import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { packWords, repack } from '@forge/ir/gguf';
import {
  normalizedMse,
  q4kGemv,
  q6kGemv,
  q6kSoaGemv,
  q8_0Gemv,
  type CatalogKernel,
} from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';
import type { WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

const ORACLE = new URL('../../../fixtures/ggml/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const floats = (name: string): Float32Array => new Float32Array(bytes(name).buffer);

/** Each gemv kernel, its 64 × 512 oracle vectors and its weight layout from native GGUF rows. */
const CASES: readonly (readonly [CatalogKernel, string, (native: Uint8Array) => Uint8Array])[] = [
  [q8_0Gemv, 'Q8_0_64x512', (w) => w],
  [q4kGemv, 'Q4_K_64x512', (w) => w],
  [q6kGemv, 'Q6_K_64x512', (w) => w],
  [q6kSoaGemv, 'Q6_K_64x512', (w) => repack('q6_K', w, 64, 512)],
];

for (const [kernel, oracle, layout] of CASES) {
  describe(`${kernel.spec.id} on WebGPU against ggml's oracle`, () => {
    for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
      it(`64 x 512, features ${features.join(',') || 'none'}: exact y within 1e-10 NMSE`, async () => {
        const shader = emitWgsl(kernel.spec, {}, wgslTarget(features));
        // f16 scales are read inside u32 words and unpacked, so no kernel needs shader-f16.
        expect(shader.launch.requiredFeatures ?? []).not.toContain('shader-f16');
        // x is read only through vector loads: one 8- or 16-byte access each.
        expect(shader.source).toMatch(/var<storage, read> buf_x: array<vec[24]<f32>>;/);
        const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
        const w = packWords(layout(bytes(`${oracle}.w.bin`)));
        const buffers = { w, x: floats(`${oracle}.x.f32`), y: new Float32Array(64) };
        await runWgsl(context, shader, { buffers, params: { n_in: 512, n_out: 64 } });
        expect(normalizedMse(buffers.y, floats(`${oracle}.y.f32`))).toBeLessThanOrEqual(
          kernel.tolerance,
        );
      });
    }
  });
}
