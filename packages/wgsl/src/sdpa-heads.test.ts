import { describe, expect, it } from 'vitest';
import { ValidationError } from '@forge/ir';
import { sdpaDecode, sdpaDecodeF32 } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { wgslTarget } from './targets.js';

/** The issues emitting `schedule` raises (none when it emits), as `path: message`. */
function problems(
  schedule: Record<string, number>,
  kernel = sdpaDecode,
  features: readonly string[] = [],
): string[] {
  try {
    const shader = emitWgsl(kernel.spec, schedule, wgslTarget(features));
    expect(shader.launch.dispatches[0]?.sharedBytes).toBeLessThanOrEqual(32 * 1024);
    return [];
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
}

// 32 KiB of workgroup memory: k_stage 4 KiB and probs 128·heads bytes a warp, q 1 KiB a head (and
// without subgroups 4 bytes a thread for warp exchanges).
describe('sdpa-decode heads on WGSL', () => {
  it.each([sdpaDecode, sdpaDecodeF32])('fits every in-bounds warps and heads', (kernel) => {
    for (const features of [[], ['f16', 'subgroups']])
      for (const heads of [1, 2, 4, 8])
        for (const warps of [1, 2, 4])
          expect(problems({ heads, warps }, kernel, features)).toEqual([]);
  });

  it('names the warps knob past 4 warps or off the powers of two', () => {
    for (const warps of [3, 8])
      expect(problems({ warps })).toEqual([expect.stringMatching(/^schedule\.warps: /)]);
  });

  it('names the knob for a heads value off its bounds', () => {
    expect(problems({ heads: 3 })).toEqual([expect.stringMatching(/^schedule\.heads: /)]);
    expect(problems({ heads: 16 })).toEqual([expect.stringMatching(/^schedule\.heads: /)]);
  });
});
