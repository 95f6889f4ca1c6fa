import { describe, expect, it } from 'vitest';
import { type KernelSpec, type ScheduleKnob } from '@forge/ir';
import { affineF32, rmsnorm } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { WGSL_FEATURES, WGSL_LIMITS, wgslTarget } from './targets.js';

/** A kernel with its only knob's bounds replaced. */
function withBounds(spec: KernelSpec, bounds: ScheduleKnob['bounds']): KernelSpec {
  const [knob] = spec.schedule;
  if (knob === undefined) throw new Error(`${spec.id} has no knob`);
  return { ...spec, schedule: [{ ...knob, bounds }] };
}

describe('the WGSL feature list and limits', () => {
  it('builds targets from the features, and names its kind in its limits', () => {
    expect(wgslTarget([...WGSL_FEATURES].reverse())).toEqual({
      kind: 'wgsl',
      features: [...WGSL_FEATURES],
    });
    expect(WGSL_LIMITS).toEqual({ kind: 'wgsl', maxWorkgroupSize: 1024, maxSharedBytes: 32768 });
  });

  it('checks a knob without wgsl bounds against WGSL_LIMITS only', () => {
    const ptxOnly = withBounds(rmsnorm.spec, { ptx: { min: 32, max: 256, multipleOf: 32 } });
    // rmsnorm's wgsl bounds stop at 1024 like the limit; without them the limit still holds.
    expect(emitWgsl(ptxOnly, { workgroupSize: 1024 }, wgslTarget()).source).toContain(
      '@workgroup_size(1024)',
    );
    expect(() => emitWgsl(ptxOnly, { workgroupSize: 1056 }, wgslTarget())).toThrow(
      'launch.workgroupSize: 1056 is outside [1, 1024] for wgsl',
    );
    // The body's reductions still need whole warps.
    expect(() => emitWgsl(ptxOnly, { workgroupSize: 48 }, wgslTarget())).toThrow(
      /48 is not a multiple of the 32-lane warp/,
    );
  });

  it('emits the same bytes whatever the bounds, other kinds included', () => {
    const plain = emitWgsl(affineF32.spec, {}, wgslTarget(['f16']));
    for (const bounds of [undefined, {}, { metal: { min: 1, max: 256 } }]) {
      const shader = emitWgsl(withBounds(affineF32.spec, bounds), {}, wgslTarget(['f16']));
      expect(shader.source).toBe(plain.source);
      expect(shader.cacheKey).toBe(plain.cacheKey);
    }
  });
});
