import { ForgeError, ready } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyThrow, openOracle } from './oracle.mjs';

// The oracle's verdicts on hand-made cases: accepted, rejected, crash, and per-target results.

let oracle;
beforeAll(async () => {
  await ready();
  oracle = await openOracle();
});
afterAll(() => oracle?.close());

const caseOf = (spec, extra = {}) => ({
  source: 'grammar',
  tags: [],
  spec,
  schedule: { ptx: {}, wgsl: {} },
  ptxArchs: ['sm_80'],
  wgslFeatures: [],
  ...extra,
});

describe('fuzz oracle', () => {
  it('accepts a catalog kernel after ptxas, Tint and pipeline creation', async () => {
    const spec = JSON.parse(JSON.stringify(getKernel('rmsnorm').spec));
    const verdict = await oracle.check(caseOf(spec, { ptxArchs: ['sm_75', 'sm_90'] }));
    expect(verdict.outcome).toBe('accepted');
    expect(verdict.results.map((r) => `${r.target}:${r.stage}`)).toEqual([
      'sm_75:ptxas',
      'sm_90:ptxas',
      'wgsl:pipeline',
    ]);
  });

  it('counts a ForgeError from the validator as rejected, with its one-line message', async () => {
    const spec = { ...getKernel('affine-f32').spec, entryPoint: '9x' };
    const verdict = await oracle.check(caseOf(spec));
    expect(verdict.outcome).toBe('rejected');
    expect(verdict.results[0]).toMatchObject({ stage: 'validate', errorClass: 'ValidationError' });
    expect(verdict.results[0].message).toMatch(/^entryPoint: /);
  });

  it('counts a rejection at emission (an out-of-bounds schedule) as rejected', async () => {
    const spec = getKernel('affine-f32').spec;
    const schedule = { ptx: { workgroupSize: 33 }, wgsl: { workgroupSize: 2048 } };
    const verdict = await oracle.check(caseOf(spec, { schedule }));
    expect(verdict.outcome).toBe('rejected');
    expect(verdict.results.map((r) => r.stage)).toEqual(['emit-ptx', 'emit-wgsl']);
  });

  it('rejects a spec whose getter throws (validation snapshots the input)', async () => {
    const spec = {
      ...getKernel('affine-f32').spec,
      get body() {
        throw new TypeError('getter exploded');
      },
    };
    const verdict = await oracle.check(caseOf(spec));
    expect(verdict.outcome).toBe('rejected');
    expect(verdict.results[0].message).toMatch(/^body: could not be read: getter exploded/);
  });

  it('counts any other exception as a crash, a multi-line ForgeError as bad-message', () => {
    expect(classifyThrow(new TypeError('exploded'), 'validate')).toMatchObject({
      outcome: 'crash',
      stage: 'validate',
      message: expect.stringMatching(/^TypeError: exploded/),
    });
    expect(classifyThrow(new ForgeError('first line\nsecond line'), 'emit-ptx')).toEqual({
      outcome: 'bad-message',
      stage: 'emit-ptx',
      message: JSON.stringify('first line\nsecond line'),
    });
  });

  it('rebuilds builder cases through defineKernel', async () => {
    const spec = JSON.parse(JSON.stringify(getKernel('affine-f32').spec));
    const verdict = await oracle.check(caseOf(spec, { source: 'builder' }));
    expect(verdict.outcome).toBe('accepted');
  });
});
