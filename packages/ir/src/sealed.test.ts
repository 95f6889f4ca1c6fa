import { describe, expect, it } from 'vitest';
import { semanticHash } from './hash.js';
import { q4kGemv } from './kernels/q4k-gemv.js';
import { rmsnorm } from './kernels/rmsnorm.js';
import { memoizeSealed, seal } from './sealed.js';
import { checkSpec } from './validate.js';

describe('sealed specs', () => {
  it('catalog specs are deep-frozen: no part of them can change after validation', () => {
    const spec = q4kGemv.spec;
    expect(Object.isFrozen(spec)).toBe(true);
    expect(Object.isFrozen(spec.body)).toBe(true);
    expect(Object.isFrozen(spec.schedule[0])).toBe(true);
    expect(() => (spec.body as unknown[]).push({ op: 'barrier' })).toThrow(TypeError);
  });

  it('hash and check a sealed spec as they would a fresh copy of it', () => {
    const copy: unknown = JSON.parse(JSON.stringify(rmsnorm.spec));
    expect(semanticHash(rmsnorm.spec)).toBe(semanticHash(copy));
    expect(semanticHash(rmsnorm.spec)).toBe(semanticHash(rmsnorm.spec));
    expect(checkSpec(rmsnorm.spec)).toEqual([]);
  });

  it('never reuse a result for data that is not sealed, which may change between calls', () => {
    const spec = JSON.parse(JSON.stringify(rmsnorm.spec)) as { description: string };
    const before = semanticHash(spec);
    spec.description = 'changed';
    expect(semanticHash(spec)).not.toBe(before);
  });

  it('memoizeSealed computes once per sealed value and every time otherwise', () => {
    let calls = 0;
    const count = memoizeSealed(() => ++calls);
    const sealedValue = seal({ a: [1, 2] });
    const plainValue = { a: [1, 2] };
    expect([count(sealedValue), count(sealedValue), count(sealedValue)]).toEqual([1, 1, 1]);
    expect([count(plainValue), count(plainValue)]).toEqual([2, 3]);
    expect(Object.isFrozen(sealedValue.a)).toBe(true);
  });
});
