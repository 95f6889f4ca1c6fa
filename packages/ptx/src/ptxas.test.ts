import { afterEach, describe, expect, it } from 'vitest';
import {
  PtxasMissingError,
  assemblePtx,
  assemblePtxAsync,
  entryRegisters,
  ptxTargetArch,
  type PtxasResult,
} from './ptxas.js';

const BROKEN =
  '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tadd.f32 %f1, %f2;\n\tret;\n}\n';

// A module that assembles on sm_80 and sm_90 (ptxas keeps a PTX 7.0 module for either).
const VALID =
  '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n';

// A visible entry and a static one (`.entry` alone, as nvcc writes a static __global__) that keeps
// 32 loaded values live: each gets its own register count.
const TWO_ENTRIES = `${VALID}.entry wide(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .f32 %f<33>;\n\tld.param.u64 %rd1, [p];\n\tmov.f32 %f0, 0f00000000;\n\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+0];\n\tld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd1+16];\n\tld.global.v4.f32 {%f9, %f10, %f11, %f12}, [%rd1+32];\n\tld.global.v4.f32 {%f13, %f14, %f15, %f16}, [%rd1+48];\n\tld.global.v4.f32 {%f17, %f18, %f19, %f20}, [%rd1+64];\n\tld.global.v4.f32 {%f21, %f22, %f23, %f24}, [%rd1+80];\n\tld.global.v4.f32 {%f25, %f26, %f27, %f28}, [%rd1+96];\n\tld.global.v4.f32 {%f29, %f30, %f31, %f32}, [%rd1+112];\n\tadd.f32 %f0, %f0, %f1;\n\tadd.f32 %f0, %f0, %f2;\n\tadd.f32 %f0, %f0, %f3;\n\tadd.f32 %f0, %f0, %f4;\n\tadd.f32 %f0, %f0, %f5;\n\tadd.f32 %f0, %f0, %f6;\n\tadd.f32 %f0, %f0, %f7;\n\tadd.f32 %f0, %f0, %f8;\n\tadd.f32 %f0, %f0, %f9;\n\tadd.f32 %f0, %f0, %f10;\n\tadd.f32 %f0, %f0, %f11;\n\tadd.f32 %f0, %f0, %f12;\n\tadd.f32 %f0, %f0, %f13;\n\tadd.f32 %f0, %f0, %f14;\n\tadd.f32 %f0, %f0, %f15;\n\tadd.f32 %f0, %f0, %f16;\n\tadd.f32 %f0, %f0, %f17;\n\tadd.f32 %f0, %f0, %f18;\n\tadd.f32 %f0, %f0, %f19;\n\tadd.f32 %f0, %f0, %f20;\n\tadd.f32 %f0, %f0, %f21;\n\tadd.f32 %f0, %f0, %f22;\n\tadd.f32 %f0, %f0, %f23;\n\tadd.f32 %f0, %f0, %f24;\n\tadd.f32 %f0, %f0, %f25;\n\tadd.f32 %f0, %f0, %f26;\n\tadd.f32 %f0, %f0, %f27;\n\tadd.f32 %f0, %f0, %f28;\n\tadd.f32 %f0, %f0, %f29;\n\tadd.f32 %f0, %f0, %f30;\n\tadd.f32 %f0, %f0, %f31;\n\tadd.f32 %f0, %f0, %f32;\n\tst.global.f32 [%rd1], %f0;\n\tret;\n}\n`;

describe('assemblePtx', () => {
  const saved = process.env['PTXAS'];
  afterEach(() => {
    if (saved === undefined) delete process.env['PTXAS'];
    else process.env['PTXAS'] = saved;
  });

  it('reports ptxas errors as a failed verdict with diagnostics', () => {
    const result = assemblePtx(BROKEN, 'sm_80');
    expect(result.ok).toBe(false);
    expect(result.diagnostics).toMatch(/error/i);
  });

  it('says how to install ptxas when it is missing', () => {
    process.env['PTXAS'] = '/nonexistent/ptxas';
    expect(() => assemblePtx(BROKEN, 'sm_80')).toThrow(PtxasMissingError);
    expect(() => assemblePtx(BROKEN, 'sm_80')).toThrow(/install the CUDA toolkit/);
  });

  it('gives the same report without blocking, several at once', async () => {
    // Diagnostics name the temporary file, which differs from run to run.
    const anonymous = (report: PtxasResult): PtxasResult => ({
      ...report,
      diagnostics: report.diagnostics.replace(/\S*kernel\.ptx/g, 'kernel.ptx'),
    });
    const reports = await Promise.all([
      assemblePtxAsync(VALID, 'sm_80'),
      assemblePtxAsync(VALID, 'sm_90'),
      assemblePtxAsync(BROKEN, 'sm_80'),
    ]);
    expect(reports.map(anonymous)).toEqual(
      [assemblePtx(VALID, 'sm_80'), assemblePtx(VALID, 'sm_90'), assemblePtx(BROKEN, 'sm_80')].map(
        anonymous,
      ),
    );
    expect(reports[0]).toMatchObject({ ok: true, spillStores: 0, spillLoads: 0 });
    expect(reports[0]?.registers).toBeGreaterThan(0);
    expect(reports[2]?.ok).toBe(false);
  });

  it('rejects with the install hint when ptxas is missing, without blocking', async () => {
    process.env['PTXAS'] = '/nonexistent/ptxas';
    await expect(assemblePtxAsync(BROKEN, 'sm_80')).rejects.toThrow(PtxasMissingError);
  });

  it('reports each entry of a module, static ones too, and entryRegisters picks its own', () => {
    const result = assemblePtx(TWO_ENTRIES, 'sm_80');
    expect(result.ok).toBe(true);
    expect(result.entries?.map((entry) => entry.name)).toEqual(['k', 'wide']);
    const [narrow, wide] = [entryRegisters(result, 'k'), entryRegisters(result, 'wide')];
    expect(wide).toBeGreaterThan(narrow);
    expect(result.registers).toBe(wide);
    expect(entryRegisters(assemblePtx(VALID, 'sm_80'), 'k')).toBe(narrow);
  });

  it('reads the target arch of a module', () => {
    expect(ptxTargetArch(BROKEN)).toBe('sm_80');
    expect(ptxTargetArch('.version 7.0')).toBeUndefined();
  });
});
