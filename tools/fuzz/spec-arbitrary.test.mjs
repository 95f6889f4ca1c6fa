import fc from 'fast-check';
import { ForgeError, checkSpec, ready } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { beforeAll, describe, expect, it } from 'vitest';
import { fuzzCaseArbitrary } from './spec-arbitrary.mjs';

// The generator alone (no vendor tools): it must keep producing the cases the issue lists.

let cases;
beforeAll(async () => {
  await ready();
  cases = fc.sample(fuzzCaseArbitrary(), { numRuns: 1500, seed: 20261201 });
});

const tagged = (prefix) => cases.filter((c) => c.tags.some((tag) => tag.startsWith(prefix)));

describe('fuzz case generator', () => {
  it('plants every edge category of issue #10 (items 1-7, 9, 10) and more', () => {
    const required = [
      'fold:int-div-zero', 'fold:shift-const-32', 'fold:float-div-zero', 'fold:sqrt-negative',
      'fold:log2-zero', 'fold:exp2-overflow', 'fold:f32-add-overflow', 'fold:bitcast-inf-nan',
      'fold:unpack-half-inf-nan', 'fold:convert-f16-range', 'fold:int-overflow',
      'fold:i32-min-div-minus-one', 'shared-const-index-oob', 'deep-expr-depth:64-126',
      'deep-if-depth:64-126', 'deep-for-depth:64-126', 'name:k', 'name:s', 'params:1080+',
      'binding:1000', 'many-buffers', 'dag:', 'negative-zero', 'grid', 'schedule-out-of-bounds',
      'mutation:entryPoint', 'mutation:foldTrap', 'mutation:manyParams', 'json:replace', 'json:delete',
      'json:extra', 'json:op',
    ]; // prettier-ignore
    const missing = required.filter((prefix) => tagged(prefix).length === 0);
    expect(missing).toEqual([]);
  });

  it('mutates every catalog kernel and builds a share through the API', () => {
    const kernels = new Set(cases.filter((c) => c.source === 'catalog').map((c) => c.spec.id));
    expect(kernels.size).toBe(CATALOG.size);
    const builder = cases.filter((c) => c.source === 'builder').length;
    expect(builder / cases.length).toBeGreaterThan(0.08);
  });

  it('never makes the validator throw a non-Forge error; specs without planted edges validate', () => {
    let plain = 0;
    let plainAccepted = 0;
    for (const fuzzCase of cases) {
      let issues;
      try {
        issues = checkSpec(fuzzCase.spec);
      } catch (error) {
        expect.unreachable(`checkSpec threw ${error instanceof ForgeError ? 'ForgeError' : error}`);
      }
      // Plain: no edge plan (catalog kernels unmutated or grammar specs without a plan).
      const edges = fuzzCase.tags.filter(
        (tag) => !tag.startsWith('catalog:') && tag !== 'negative-zero',
      );
      if (fuzzCase.source !== 'json' && edges.length === 0) {
        plain++;
        if (issues.length === 0) plainAccepted++;
      }
    }
    expect(plain / cases.length).toBeGreaterThan(0.25);
    expect(plainAccepted / plain).toBeGreaterThan(0.9);
  });

  it('replays a case exactly from its seed and path', () => {
    const [first] = fc.sample(fuzzCaseArbitrary(), { numRuns: 1, seed: 7, path: '5' });
    const [again] = fc.sample(fuzzCaseArbitrary(), { numRuns: 1, seed: 7, path: '5' });
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
  });
});
