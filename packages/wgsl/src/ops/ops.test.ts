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

  it('expands funnel shifts with shifts Tint accepts, folding their constant parts', async () => {
    const zoo = emitWgsl(OP_ZOO, {}, wgslTarget(['f16'])).source;
    // `(hi << 1) << (31 - s)` is exact at s = 0, where WGSL would take `hi << 32` as `hi << 0`.
    expect(zoo).toContain('((v_vu >> v_amount) | (((v_vu ^ v_t) << 1u) << (31u - v_amount)))');
    // Constant hi 0xffffffff becomes 0xfffffffe; 0x80000001 by 7 becomes 0x02000000 outright.
    expect(zoo).toContain('| (4294967294u << (31u - v_amount))) >> 7u) | 33554432u)');
    // The unfolded form shifts a 1 bit out of a constant, which Tint rejects (measured).
    const context = await sharedWebGpu([]);
    const unfolded = '@compute @workgroup_size(1) fn main() { var x = 3u; x = (x >> 4u) | ((4294967295u << 1u) << (31u - 4u)); }'; // prettier-ignore
    const [error] = (await wgslDiagnostics(context, unfolded)).filter((d) => d.type === 'error');
    expect(error?.message).toBe("'4294967295 << 1' cannot be represented as 'u32'");
  });

  it('expands bit selects to masks, folding the complement of a constant mask', () => {
    const zoo = emitWgsl(OP_ZOO, {}, wgslTarget(['f16'])).source;
    // 0xc0c0c0c0 picks the shifted word's bits; its complement 0x3f3f3f3f is one literal.
    expect(zoo).toMatch(/\(\(\(v_vu << 2u\) & 3233857728u\) \| \(.* & 1061109567u\)\)/);
    expect(zoo).not.toContain('~3233857728u');
    // A computed mask is complemented in the shader.
    expect(zoo).toContain('& (v_vu ^ v_t)) | (v_vu & (~(v_vu ^ v_t))))');
  });

  it('exchanges warp values through workgroup memory unless subgroups may serve', () => {
    const plain = emitWgsl(OP_ZOO, {}, wgslTarget(['f16'])).source;
    const subgroups = emitWgsl(OP_ZOO, {}, wgslTarget(['f16', 'subgroups'])).source;
    expect(plain).not.toMatch(/subgroupShuffleXor/);
    // 9 reductions, 5 butterfly steps each, use subgroup shuffles when the offset fits a subgroup
    expect(subgroups.match(/subgroupShuffleXor/g)?.length).toBe(9 * 5);
  });
});
