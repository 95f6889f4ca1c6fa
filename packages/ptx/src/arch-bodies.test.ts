import { describe, expect, it } from 'vitest';
import { getKernel } from '@forge/ir/kernels';
import { OP_ZOO } from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { ptxTarget } from './targets.js';
import { bodyMismatches, distinctBodies, ptxBody } from './arch-bodies.test-support.js';

describe('grouping archs by PTX body', () => {
  it('puts archs whose modules differ only in the header into one group', () => {
    const rmsnorm = getKernel('rmsnorm').spec;
    const groups = distinctBodies((arch) => emitPtx(rmsnorm, {}, ptxTarget(arch)));
    expect(groups.map((group) => group.archs)).toEqual([['sm_75', 'sm_80', 'sm_90']]);
    expect(groups.map(bodyMismatches)).toEqual([[]]);
    expect(ptxBody(groups[0]?.shader.source ?? '')).not.toMatch(/^\.(version|target)/m);
  });

  it('gives an arch-specialized body a run of its own (f16 min/max widened before sm_80)', () => {
    const groups = distinctBodies((arch) => emitPtx(OP_ZOO, {}, ptxTarget(arch)));
    expect(groups.map((group) => group.archs)).toEqual([['sm_75'], ['sm_80', 'sm_90']]);
  });

  it('reports a group whose members differ beyond the header', () => {
    const rmsnorm = getKernel('rmsnorm').spec;
    const [group] = distinctBodies((arch) => emitPtx(rmsnorm, {}, ptxTarget(arch)));
    const [sm75, sm80, sm90] = group?.shaders ?? [];
    if (group === undefined || sm75 === undefined || sm80 === undefined || sm90 === undefined)
      throw new Error('expected one group of three');
    const doctored = { ...sm90, source: `${sm90.source}// extra\n` };
    expect(bodyMismatches({ ...group, shaders: [sm75, sm80, doctored] })).toEqual([
      "sm_90: body differs from sm_75's",
    ]);
    const headless = { ...sm80, source: ptxBody(sm80.source) };
    expect(bodyMismatches({ ...group, shaders: [sm75, headless, sm90] })).toEqual([
      'sm_80: header lines []',
    ]);
  });
});
