import { describe, expect, it } from 'vitest';
import { defineKernel } from '../builder.js';
import { ValidationError } from '../errors.js';
import { bitcast } from '../expressions.js';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { affineF32 } from './affine-f32.js';
import {
  ARGMAX_FAMILIES,
  ARGMAX_NAN_BITS,
  argmax,
  argmaxFamily,
  argmaxIndex,
  argmaxRank,
} from './argmax.js';
import { compareWithReference } from './case-inputs.js';
import { Rng } from './random.js';

/** An f32 array holding these bit patterns. */
const fromBits = (...bits: number[]): Float32Array =>
  new Float32Array(Uint32Array.from(bits).buffer);

/**
 * The kernel's index, value and value's bits for `x` on the interpreter (outputs start as
 * poison: an index past n and a value of 12345).
 */
function runBits(x: Float32Array, workgroupSize?: number) {
  const index = new Uint32Array([0xdeadbeef]);
  const value = new Float32Array([12345]);
  const schedule: Record<string, number> = workgroupSize === undefined ? {} : { workgroupSize };
  interpret(argmax.spec, { params: { n: x.length }, schedule, buffers: { x, index, value } });
  const bits = new Uint32Array(value.buffer)[0] ?? -1;
  return { index: index[0] ?? -1, value: value[0] ?? 12345, bits };
}

/** The kernel's index and value for `x` on the interpreter. */
function run(x: Float32Array, workgroupSize?: number): { index: number; value: number } {
  const { index, value } = runBits(x, workgroupSize);
  return { index, value };
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
          expect(got.index, `n=${n}`).toBe(argmaxIndex(x));
          expect(Object.is(got.value, x[got.index])).toBe(true);
          // NaN families: the first NaN, whatever else x holds.
          const firstNaN = x.findIndex(Number.isNaN);
          if (family.startsWith('nan')) expect(got.index, `n=${n}`).toBe(firstNaN);
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

  it('takes the first NaN over everything, whatever its sign, payload, lane or position', () => {
    // NaN at 0: every thread starts from x[0], and no later element outranks it.
    const x = Float32Array.from({ length: 300 }, (_, i) => Math.sin(i));
    x[0] = Number.NaN;
    x[7] = Infinity;
    expect(runBits(x, 64)).toMatchObject({ index: 0, bits: 0x7fc00000 });
    // The first NaN after a +inf, before another NaN, a negative NaN with a payload first.
    x[0] = 0.5;
    const bits = new Uint32Array(x.buffer);
    bits[255] = 0xffc0beef;
    bits[256] = 0x7fc00000;
    expect(runBits(x, 64)).toMatchObject({ index: 255, bits: 0xffc0beef });
    // A signaling NaN ranks as any NaN (the interpreter's JS numbers set its quiet bit on the way).
    bits[254] = 0x7f800001;
    const signaling = runBits(x, 64);
    expect(signaling.index).toBe(254);
    expect(Number.isNaN(signaling.value)).toBe(true);
    // In a thread's tail element and in warp 1, past n % 4 groups.
    const tail = new Float32Array(302).fill(-1);
    new Uint32Array(tail.buffer)[301] = 0xffffffff;
    expect(runBits(tail, 64)).toMatchObject({ index: 301, bits: 0xffffffff });
    // n = 1: the one NaN.
    expect(runBits(fromBits(0xff800001), 32).index).toBe(0);
  });

  it('keeps +inf and −inf in order without NaN: the first +inf, or 0 for all −inf', () => {
    expect(run(Float32Array.from([-Infinity, 3, Infinity, 1, Infinity]), 32)).toEqual({
      index: 2,
      value: Infinity,
    });
    expect(run(Float32Array.from([-Infinity, -Infinity, -3e38]), 32)).toEqual({
      index: 2,
      value: Math.fround(-3e38),
    });
  });

  it('folds more partials than the combine has threads, ties to the lowest index', () => {
    // 32 threads of 16 elements a workgroup: 20,480 elements leave 40 partials for 32 threads.
    const x = new Float32Array(20_480).fill(1);
    expect(run(x, 32)).toEqual({ index: 0, value: 1 });
    x[19_000] = 5;
    x[12_345] = 5;
    x[20_000] = 5;
    expect(run(x, 32)).toEqual({ index: 12_345, value: 5 });
    x[19_999] = Number.NaN;
    expect(run(x, 32).index).toBe(19_999);
  });

  it('finds a max past the first 2^16 elements at the largest workgroup', () => {
    const x = argmaxFamily('max-last', 70_001, new Rng(3), 1);
    expect(run(x, 1024)).toEqual({ index: 70_000, value: 2 });
  });
});

describe('argmaxRank', () => {
  // f32 values in increasing order, NaN last: every pattern's rank is computed by the kernel's own
  // expression on the interpreter.
  const ORDERED = [
    0xff800000, // −inf
    0xff7fffff, // −max
    0xbf800000, // −1
    0x80000001, // −smallest subnormal
    0x80000000, // −0, ties +0
    0x00000000, // +0
    0x00000001,
    0x3f800000,
    0x7f7fffff,
    0x7f800000, // +inf
  ];
  const rankOf = (patterns: readonly number[]): Int32Array => {
    const spec = defineKernel(
      {
        id: 'rank_probe',
        semanticVersion: 1,
        entryPoint: 'rank_probe',
        description: 'rank[i] = argmaxRank(bits of x[i])',
        buffers: [
          { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
          { group: 0, binding: 1, name: 'rank', element: 'i32', access: 'read_write' },
        ],
        params: [],
        shared: [],
        schedule: [],
        launch: { workgroupSize: String(patterns.length), grid: ['1', '1', '1'] },
      },
      (b) => {
        const bits = b.let('bits', bitcast('u32', b.load('x', b.localId())));
        b.store('rank', b.localId(), argmaxRank(bits));
      },
    );
    const rank = new Int32Array(patterns.length);
    interpret(spec, { params: {}, buffers: { x: fromBits(...patterns), rank } });
    return rank;
  };

  it('orders f32 as their values, ties −0 with +0, and puts every NaN together above +inf', () => {
    const ranks = Array.from(rankOf([...ORDERED, ...ARGMAX_NAN_BITS, 0x7fffffff]));
    const finite = ranks.slice(0, ORDERED.length);
    for (let i = 1; i < finite.length; i++)
      if (i === 5) expect(finite[i]).toBe(finite[i - 1]);
      else expect(finite[i], `0x${ORDERED[i]?.toString(16)}`).toBeGreaterThan(finite[i - 1] ?? 0);
    expect(finite[5]).toBe(0);
    expect(new Set(ranks.slice(ORDERED.length))).toEqual(new Set([0x7f800001]));
    expect(finite.at(-1)).toBe(0x7f800000);
  });
});

describe('argmaxIndex', () => {
  it('gives the first NaN, else the first of the largest (−0 == +0)', () => {
    expect(argmaxIndex([1, 3, 3, 2])).toBe(1);
    expect(argmaxIndex([-0, 0, -1])).toBe(0);
    expect(argmaxIndex([1, Infinity, Number.NaN, 5, Number.NaN])).toBe(2);
    expect(argmaxIndex([Number.NaN])).toBe(0);
    expect(argmaxIndex(fromBits(0x3f800000, 0xffc00000, 0x7f800000))).toBe(1);
    // Only the first n count.
    expect(argmaxIndex([1, 2, Number.NaN, 9], 2)).toBe(1);
    expect(argmaxIndex([])).toBe(0);
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

  it('matches a NaN value to a NaN reference, and nothing else to it', () => {
    const x = fromBits(0x3f800000, 0x7f800000, 0xffc00000, 0x7fc00000);
    const check = (index: number, value: number): number =>
      compareWithReference(argmax, { x }, { n: 4 }, { index: [index], value: [value] }).nmse;
    expect(argmax.reference({ x }, { n: 4 })['index']).toEqual(Float64Array.of(2));
    expect(check(2, Number.NaN)).toBe(0);
    // A wrong index, even one holding a NaN too, fails; so does a number where NaN is expected.
    expect(check(3, Number.NaN)).toBeGreaterThan(0);
    expect(check(1, Number.NaN)).toBeGreaterThan(0);
    expect(check(2, Infinity)).toBe(Infinity);
    expect(check(2, 0)).toBe(Infinity);
    // NaN at index 0: index and value have no energy left, a wrong index is infinite error.
    const first = fromBits(0x7fc00000, 0x3f800000);
    const at = (index: number, value: number) =>
      compareWithReference(argmax, { x: first }, { n: 2 }, { index: [index], value: [value] });
    expect(at(0, Number.NaN)).toMatchObject({ nmse: 0, maxAbsError: 0 });
    expect(at(1, Number.NaN).nmse).toBe(Infinity);
    // An infinity matches the same infinity only.
    const inf = Float32Array.of(1, Infinity);
    const infinite = (value: number) =>
      compareWithReference(argmax, { x: inf }, { n: 2 }, { index: [1], value: [value] }).nmse;
    expect(infinite(Infinity)).toBe(0);
    expect(infinite(-Infinity)).toBe(Infinity);
    expect(infinite(Number.NaN)).toBe(Infinity);
    // And a NaN where the reference is a number still fails.
    expect(
      compareWithReference(argmax, { x }, { n: 2 }, { index: [1], value: [Number.NaN] }).nmse,
    ).toBe(Infinity);
  });

  it('leaves kernels compared within a tolerance as they were: a NaN output is an infinite error', () => {
    const x = Float32Array.of(1, Number.NaN);
    const y = Float32Array.of(1.25, Number.NaN);
    const check = compareWithReference(affineF32, { x }, { n: 2, scale: 1.5, bias: -0.25 }, { y });
    expect(affineF32.tolerance).toBeGreaterThan(0);
    expect(check.nmse).toBe(Infinity);
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
