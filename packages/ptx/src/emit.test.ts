import { describe, expect, it } from 'vitest';
import { ValidationError, blake3Hex, evaluateSizeExpression } from '@forge/ir';
import { CATALOG, rmsnorm, affineF32 } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { printPtxIr } from './printed-ir.js';
import { assemblePtx, entryRegisters } from './ptxas.js';
import { ptxTarget, PTX_VERSIONS } from './targets.js';
import { PTX_ARCHS } from './targets.js';

const kernels = [...CATALOG.values()];

describe('emitPtx on the catalog', () => {
  for (const kernel of kernels) {
    for (const arch of PTX_ARCHS) {
      it(`${kernel.spec.id} on ${arch} assembles with ptxas and no spills`, () => {
        const shader = emitPtx(kernel.spec, {}, ptxTarget(arch));
        expect(shader.source).toContain(`.version ${PTX_VERSIONS[arch]}\n.target ${arch}\n`);
        const result = assemblePtx(shader.source, arch);
        expect(result.diagnostics).toBe('');
        expect(result.ok).toBe(true);
        expect(result.spillStores).toBe(0);
        expect(result.spillLoads).toBe(0);
        expect(result.registers).toBeGreaterThan(0);
      });
    }
  }

  it('is deterministic and hashes what it returns', () => {
    const first = emitPtx(rmsnorm.spec, {}, ptxTarget('sm_80'));
    const second = emitPtx(JSON.parse(JSON.stringify(rmsnorm.spec)), {}, ptxTarget('sm_80'));
    expect(second).toEqual(first);
    expect(first.sourceHash).toBe(blake3Hex(first.source));
    expect(first.semanticHash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.kernelId).toBe('rmsnorm');
  });

  it('changes the cache key with arch and schedule but not the semantic hash', () => {
    const base = emitPtx(rmsnorm.spec, {}, ptxTarget('sm_80'));
    const otherArch = emitPtx(rmsnorm.spec, {}, ptxTarget('sm_86'));
    const otherSchedule = emitPtx(rmsnorm.spec, { workgroupSize: 512 }, ptxTarget('sm_80'));
    expect(new Set([base.cacheKey, otherArch.cacheKey, otherSchedule.cacheKey]).size).toBe(3);
    expect(otherArch.semanticHash).toBe(base.semanticHash);
    expect(otherSchedule.source).toContain('.reqntid 512, 1, 1');
    expect(otherSchedule.source).toContain('.shared .align 4 .f32 shared_partial[16];');
  });
});

describe('launch metadata', () => {
  it('describes the parameter block in order with offsets', () => {
    const { launch } = emitPtx(rmsnorm.spec, {}, ptxTarget('sm_80'));
    expect(
      launch.parameters.map((parameter) => [
        parameter.name,
        parameter.sourceName,
        parameter.type,
        parameter.offset,
        parameter.size,
      ]),
    ).toEqual([
      ['x', 'param_x', 'u64', 0, 8],
      ['w', 'param_w', 'u64', 8, 8],
      ['y', 'param_y', 'u64', 16, 8],
      ['n_embd', 'param_n_embd', 'u32', 24, 4],
      ['rows', 'param_rows', 'u32', 28, 4],
      ['eps', 'param_eps', 'f32', 32, 4],
    ]);
    expect(launch.parameterBytes).toBe(40);
    expect(launch.sharedBytes).toBe(32);
    expect(launch.workgroupSize).toEqual([256, 1, 1]);
    expect(launch.grid).toEqual(['rows', '1', '1']);
  });

  it('caps a dispatch at its launch.maxRegisters with .maxnreg, and says so in the printed IR', () => {
    const q4k = CATALOG.get('q4k-gemv')?.spec;
    if (q4k === undefined) throw new Error('no q4k-gemv');
    expect(q4k.stages?.[0]?.launch.maxRegisters).toBe('96');
    const shader = emitPtx(q4k, {}, ptxTarget('sm_90'));
    const [quantize = '', rows = ''] = shader.source.split('.visible .entry ').slice(1);
    expect(quantize).not.toContain('.maxnreg');
    expect(rows).toContain('.minnctapersm 1\n.maxnreg 96\n{');
    const result = assemblePtx(shader.source, 'sm_90');
    expect(entryRegisters(result, 'q4k_gemv_rows')).toBeLessThanOrEqual(96);
    expect(result.spillStores + result.spillLoads).toBe(0);
    expect(printPtxIr(q4k, {}, ptxTarget('sm_90')).text).toContain(', at most 96 registers\n');
    // Without a cap there is no .maxnreg: ptxas takes what it wants.
    const q6k = CATALOG.get('q6k-gemv')?.spec;
    expect(q6k?.stages?.[0]?.launch.maxRegisters).toBeUndefined();
    expect(emitPtx(q6k ?? rmsnorm.spec, {}, ptxTarget('sm_90')).source).not.toContain('.maxnreg');
  });

  it('binds schedule knobs into grid expressions that engines can evaluate', () => {
    const { launch } = emitPtx(affineF32.spec, { workgroupSize: 128 }, ptxTarget('sm_90'));
    expect(launch.grid[0]).toBe('min(ceil_div(n, 128), 65535)');
    expect(evaluateSizeExpression(launch.grid[0], { n: 1000 })).toBe(8);
    expect(evaluateSizeExpression(launch.grid[0], { n: 1e9 })).toBe(65535);
  });
});

describe('bad input', () => {
  it('rejects a schedule outside the PTX bounds with the knob path', () => {
    const attempt = (schedule: Record<string, number>) => () =>
      emitPtx(rmsnorm.spec, schedule, ptxTarget('sm_80'));
    expect(attempt({ workgroupSize: 2048 })).toThrow(ValidationError);
    expect(attempt({ workgroupSize: 2048 })).toThrow(
      /^schedule\.workgroupSize: 2048 is outside \[32, 1024\]/,
    );
    expect(attempt({ workgroupSize: 100 })).toThrow(
      /schedule\.workgroupSize: 100 is not a multiple of 32/,
    );
    expect(attempt({ tile: 4 })).toThrow(/schedule\.tile: unknown schedule knob/);
  });

  it('rejects an identifier that would inject PTX text', () => {
    const spec = JSON.parse(JSON.stringify(affineF32.spec));
    spec.buffers[0].name = 'x_ptr) ; ret; //';
    try {
      emitPtx(spec, {}, ptxTarget('sm_80'));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toBe('buffers[0].name');
    }
  });

  it('rejects an unknown arch', () => {
    expect(() => ptxTarget('sm_70')).toThrow(/^arch: unknown arch 'sm_70'/);
  });
});
