import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { ARGMAX_FAMILIES, argmax, argmaxFamily } from './argmax.js';
import { compareWithReference } from './case-inputs.js';
import { Rng } from './random.js';

/** The kernel's index and value for `x` on the interpreter (outputs start as poison). */
function run(x: Float32Array, workgroupSize?: number): { index: number; value: number } {
  const index = new Uint32Array([0xdeadbeef]);
  const value = new Float32Array([Number.NaN]);
  const schedule: Record<string, number> = workgroupSize === undefined ? {} : { workgroupSize };
  interpret(argmax.spec, { params: { n: x.length }, schedule, buffers: { x, index, value } });
  return { index: index[0] ?? -1, value: value[0] ?? Number.NaN };
}

/** The lowest index of the largest element, by a plain scan. */
function firstLargest(x: Float32Array): number {
  let at = 0;
  for (let i = 1; i < x.length; i++) if ((x[i] ?? 0) > (x[at] ?? 0)) at = i;
  return at;
}

describe('argmax on the interpreter', () => {
  const sizes = [1, 7, 31, 33, 255, 257, 1000];
  for (const family of ARGMAX_FAMILIES)
    for (const workgroupSize of [32, 96, 256])
      it(`finds the first largest, family ${family}, ${workgroupSize} threads`, () => {
        const rng = new Rng(workgroupSize + family.length);
        for (const n of sizes) {
          const x = argmaxFamily(family, n, rng, 2);
          const got = run(x, workgroupSize);
          expect(got.index, `n=${n}`).toBe(firstLargest(x));
          expect(Object.is(got.value, x[got.index])).toBe(true);
          const outputs = { index: [got.index], value: [got.value] };
          expect(compareWithReference(argmax, { x }, { n }, outputs).nmse).toBe(0);
        }
      });

  it('breaks a tie between lanes, rounds, a group of four and the tail for the lower index', () => {
    // 64 threads take 256 elements a round in groups of four: index 255 is thread 63 (lane 31 of
    // warp 1) in round one, 256 thread 0 in round two, 301 (of n = 302) thread 1's tail element.
    const x = new Float32Array(302).fill(-1);
    for (const i of [301, 256, 255]) x[i] = 5;
    expect(run(x, 64)).toEqual({ index: 255, value: 5 });
    x[255] = 4;
    expect(run(x, 64)).toEqual({ index: 256, value: 5 });
    x[256] = 4;
    expect(run(x, 64)).toEqual({ index: 301, value: 5 });
    // Within one thread's group of four, the first of equal values.
    x[6] = x[5] = 7;
    expect(run(x, 64)).toEqual({ index: 5, value: 7 });
  });

  it('gives 0 when every element is -inf, and the first zero of mixed signs', () => {
    expect(run(new Float32Array(70).fill(-Infinity), 32)).toEqual({ index: 0, value: -Infinity });
    const zeros = Float32Array.from([-3, -0, 0, -0, -2]);
    const got = run(zeros, 32);
    expect(got.index).toBe(1);
    expect(Object.is(got.value, -0)).toBe(true);
  });

  it('finds a max past the first 2^16 elements at the largest workgroup', () => {
    const x = argmaxFamily('max-last', 70_001, new Rng(3), 1);
    expect(run(x, 1024)).toEqual({ index: 70_000, value: 2 });
  });
});

describe('argmax catalog entry', () => {
  it('compares exactly: a wrong index or value is over its tolerance of 0', () => {
    const x = Float32Array.from([1, 3, 3, 2]);
    const check = (index: number, value: number): number =>
      compareWithReference(argmax, { x }, { n: 4 }, { index: [index], value: [value] }).nmse;
    expect(argmax.tolerance).toBe(0);
    expect(check(1, 3)).toBe(0);
    expect(check(2, 3)).toBeGreaterThan(0);
    expect(check(1, 2.9999998)).toBeGreaterThan(0);
    // Index 0 has no energy: any other index is an infinite error, not a pass.
    const first = Float32Array.from([9, 1]);
    const atZero = compareWithReference(argmax, { x: first }, { n: 2 }, { index: [1], value: [9] });
    expect(atZero.nmse).toBe(Infinity);
  });

  it('names n when it cannot run the shape', () => {
    for (const n of [0, 2 ** 32 - 1, 1.5]) {
      expect(() => argmax.checkShape?.({ n })).toThrow(ValidationError);
      expect(() => argmax.checkShape?.({ n })).toThrow(`n: ${n} is not between 1 and 4294967294`);
    }
    expect(() => argmax.checkShape?.({ n: 1 })).not.toThrow();
  });

  it('takes a workgroup of 32 to 1024 threads, whole warps, on both targets', () => {
    for (const target of ['ptx', 'wgsl'] as const) {
      expect(() => resolveSchedule(argmax.spec, target, { workgroupSize: 48 })).toThrow(
        'workgroupSize',
      );
      expect(resolveSchedule(argmax.spec, target, { workgroupSize: 1024 })['workgroupSize']).toBe(
        1024,
      );
    }
  });

  it('rejects an unknown input family by name', () => {
    expect(() => argmaxFamily('sorted', 4, new Rng(1), 1)).toThrow("family: 'sorted' is not one");
  });
});
