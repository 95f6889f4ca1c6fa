import { afterAll, describe, expect, it } from 'vitest';
import { OP_PROBES, OP_ZOO } from '@forge/test-fixtures';
import { emitWgsl } from '../emit.js';
import { closeSharedWebGpu, sharedWebGpu, wgslDiagnostics } from '../runner/index.js';
import { wgslTarget } from '../targets.js';
import type { WgslFeature } from '../targets.js';

afterAll(closeSharedWebGpu);

describe('op templates', () => {
  const featureSets: readonly (readonly WgslFeature[])[] = [['f16'], ['f16', 'subgroups']];
  for (const features of featureSets) {
    it(`every op compiles in Tint with features ${features.join(',')}`, async () => {
      const shader = emitWgsl(OP_ZOO, {}, wgslTarget(features));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      const diagnostics = await wgslDiagnostics(context, shader.source);
      expect(diagnostics.filter((diagnostic) => diagnostic.type === 'error')).toEqual([]);
    });
  }

  it('requires the dot-product extension only in a module that uses dot4I8Packed', () => {
    const zoo = emitWgsl(OP_ZOO, {}, wgslTarget(['f16'])).source;
    expect(zoo).toMatch(/^enable f16;\nrequires packed_4x8_integer_dot_product;$/m);
    expect(zoo).toMatch(/= \(v_vi \+ dot4I8Packed\(v_vu, \(v_vu \^ v_t\)\)\);/);
    const probe = OP_PROBES.find((candidate) => candidate.type === 'i32');
    if (probe === undefined) throw new Error('no i32 probe');
    expect(emitWgsl(probe.spec, {}, wgslTarget([])).source).not.toMatch(/requires|dot4I8Packed/);
  });

  it('exchanges warp values through workgroup memory unless subgroups may serve', () => {
    const plain = emitWgsl(OP_ZOO, {}, wgslTarget(['f16'])).source;
    const subgroups = emitWgsl(OP_ZOO, {}, wgslTarget(['f16', 'subgroups'])).source;
    expect(plain).not.toMatch(/subgroupShuffleXor/);
    // 9 reductions, 5 butterfly steps each, use subgroup shuffles when the offset fits a subgroup
    expect(subgroups.match(/subgroupShuffleXor/g)?.length).toBe(9 * 5);
  });
});
