import { afterEach, describe, expect, it } from 'vitest';
import { PtxasMissingError, assemblePtx, ptxTargetArch } from './ptxas.js';

const BROKEN =
  '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tadd.f32 %f1, %f2;\n\tret;\n}\n';

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

  it('reads the target arch of a module', () => {
    expect(ptxTargetArch(BROKEN)).toBe('sm_80');
    expect(ptxTargetArch('.version 7.0')).toBeUndefined();
  });
});
