import { describe, expect, it } from 'vitest';
import { UnsupportedError, ir } from '@forge/ir';
import { OP_ZOO as zoo } from '@forge/test-fixtures';
import { emitPtx } from '../emit.js';
import { assemblePtx } from '../ptxas.js';
import { ptxTarget } from '../targets.js';
import { PtxBodyWriter } from '../render-body.js';
import { PTX_ARCHS } from '../targets.js';

describe('op tables', () => {
  for (const arch of PTX_ARCHS) {
    it(`every op assembles on ${arch}`, () => {
      const shader = emitPtx(zoo, {}, ptxTarget(arch));
      const result = assemblePtx(shader.source, arch);
      expect(result.diagnostics).toBe('');
      expect(result.ok).toBe(true);
    });
  }

  it('widens f16 min/max to f32 before sm_80 and keeps them native on sm_80', () => {
    const old = emitPtx(zoo, {}, ptxTarget('sm_75')).source;
    const current = emitPtx(zoo, {}, ptxTarget('sm_80')).source;
    expect(old).not.toMatch(/\bmin\.f16\b/);
    expect(old).toMatch(/cvt\.f32\.f16/);
    expect(current).toMatch(/\bmin\.f16\b/);
    expect(current).not.toMatch(/div\.\w*\.?f16/);
  });

  it('lowers warp reductions into five xor shuffles each', () => {
    const source = emitPtx(zoo, {}, ptxTarget('sm_80')).source;
    const shuffles = source.match(/shfl\.sync\.bfly\.b32/g) ?? [];
    // 9 reductions x 5 butterfly steps + 3 explicit xor shuffles
    expect(shuffles.length).toBe(9 * 5 + 3);
  });

  it('refuses an op the target cannot print with an UnsupportedError naming target and op', () => {
    const writer = new PtxBodyWriter(zoo, ptxTarget('sm_80'));
    try {
      writer.block([{ op: 'reduce', reduction: 'add', name: 'r', type: 'f32', value: ir.f32(1) }]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UnsupportedError);
      expect((error as UnsupportedError).target).toBe('ptx sm_80');
      expect((error as UnsupportedError).op).toBe('reduce');
    }
  });
});
