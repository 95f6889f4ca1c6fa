import { describe, expect, it } from 'vitest';
import { ValidationError, type KernelSpec, type ScheduleKnob } from '@forge/ir';
import { affineF32 } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import {
  PTX_ARCHS,
  PTX_LIMITS,
  PTX_MIN_VERSIONS,
  PTX_VERSIONS,
  checkPtxTarget,
  ptxTarget,
} from './targets.js';

/** affine-f32 with its workgroupSize knob's bounds replaced. */
function withBounds(bounds: ScheduleKnob['bounds']): KernelSpec {
  const [knob] = affineF32.spec.schedule;
  if (knob === undefined) throw new Error('affine-f32 has no knob');
  return { ...affineF32.spec, schedule: [{ ...knob, bounds }] };
}

describe('the PTX target list and limits', () => {
  it('has a target for every arch, and the kind its limits name', () => {
    for (const arch of PTX_ARCHS)
      expect(ptxTarget(arch)).toEqual({ kind: 'ptx', arch, ptxVersion: PTX_VERSIONS[arch] });
    expect(Object.keys(PTX_VERSIONS)).toEqual([...PTX_ARCHS]);
    expect(PTX_LIMITS).toEqual({ kind: 'ptx', maxWorkgroupSize: 1024, maxSharedBytes: 49152 });
  });

  it('defaults sm_75 to ISA 6.5 (mma m16n8k8) and still accepts its minimum, 6.3', () => {
    expect(PTX_VERSIONS.sm_75).toBe('6.5');
    const oldest = { kind: 'ptx', arch: 'sm_75', ptxVersion: PTX_MIN_VERSIONS.sm_75 };
    expect(checkPtxTarget(oldest)).toEqual(oldest);
    expect(() => checkPtxTarget({ ...oldest, arch: 'sm_80' })).toThrow(
      'target.ptxVersion: 6.3 cannot target sm_80 (needs 7.0 or later)',
    );
  });

  it('checks a knob without ptx bounds against PTX_LIMITS only', () => {
    const wgslOnly = withBounds({ wgsl: { min: 1, max: 1024 } });
    // affine-f32's ptx bounds ask for multiples of 32; without them 48 is fine.
    expect(() => emitPtx(affineF32.spec, { workgroupSize: 48 }, ptxTarget('sm_80'))).toThrow(
      'schedule.workgroupSize: 48 is not a multiple of 32 for ptx',
    );
    expect(emitPtx(wgslOnly, { workgroupSize: 48 }, ptxTarget('sm_80')).source).toContain(
      '.reqntid 48, 1, 1',
    );
    const tooLarge = () => emitPtx(wgslOnly, { workgroupSize: 1025 }, ptxTarget('sm_80'));
    expect(tooLarge).toThrow(ValidationError);
    expect(tooLarge).toThrow('launch.workgroupSize: 1025 is outside [1, 1024] for ptx');
  });

  it('emits the same bytes whatever the bounds, other kinds included', () => {
    const plain = emitPtx(affineF32.spec, {}, ptxTarget('sm_90'));
    for (const bounds of [undefined, {}, { metal: { min: 1, max: 256 } }]) {
      const shader = emitPtx(withBounds(bounds), {}, ptxTarget('sm_90'));
      expect(shader.source).toBe(plain.source);
      expect(shader.cacheKey).toBe(plain.cacheKey);
    }
  });
});
