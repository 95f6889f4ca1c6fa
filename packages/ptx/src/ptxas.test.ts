import { afterEach, describe, expect, it } from 'vitest';
import {
  PtxasMissingError,
  assemblePtx,
  assemblePtxAsync,
  ptxTargetArch,
  type PtxasResult,
} from './ptxas.js';

const BROKEN =
  '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tadd.f32 %f1, %f2;\n\tret;\n}\n';

// A module that assembles on sm_80 and sm_90 (ptxas keeps a PTX 7.0 module for either).
const VALID =
  '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n';

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

  it('reads the target arch of a module', () => {
    expect(ptxTargetArch(BROKEN)).toBe('sm_80');
    expect(ptxTargetArch('.version 7.0')).toBeUndefined();
  });
});
