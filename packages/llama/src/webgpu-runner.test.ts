import { describe, expect, it } from 'vitest';
import { openWebGpu } from '@forge/wgsl/runner';
import { buildDecodePlan, openWebGpuDecoder, readLlamaModel } from './index.js';
import { fixturePath } from './model-files.test-support.js';

describe('the WebGPU decoder', () => {
  it('profiles a step launch by launch with the same results as one submission', async () => {
    const model = await readLlamaModel(fixturePath('q'));
    const plan = buildDecodePlan(model, { kv: 'f16' });
    const [plain, profiled] = await Promise.all(
      [0, 1].map(async () => openWebGpuDecoder(model, plan, await openWebGpu())),
    );
    try {
      expect(profiled?.adapter).not.toBe('');
      for (const [position, token] of [1, 17, 42].entries()) {
        const one = await plain!.step(token, position);
        const each = await profiled!.profileStep(token, position);
        expect(Array.from(each.logits)).toEqual(Array.from(one.logits));
        expect(each.token).toBe(one.token);
        expect(each.launches.map((launch) => launch.label)).toEqual(
          plan.launches.map((launch) => launch.label),
        );
        expect(each.launches.every((launch) => launch.milliseconds >= 0)).toBe(true);
      }
    } finally {
      plain?.close();
      profiled?.close();
    }
    // Two devices compile every pipeline of the model: 58 s on an idle 2-core machine with Mesa's
    // shader cache off (as CI runs), past the 60 s default.
  }, 300_000);
});
