import { describe, expect, it } from 'vitest';
import type { Expr } from './body.js';
import { constantFaults } from './constant-faults.js';

const one: Expr = { op: 'const', type: 'u32', value: 1 };
const add = (a: Expr, b: Expr): Expr => ({ op: 'add', type: 'u32', args: [a, b] });

describe('constantFaults', () => {
  it('folds each shared sub-expression once (a DAG of depth 40 takes milliseconds)', () => {
    let value: Expr = one;
    for (let level = 0; level < 40; level++) value = add(value, value);
    const started = performance.now();
    const store = { op: 'store', memory: 'yu', index: one, value } as const;
    expect(constantFaults([store], 'body', new Map())).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('constantFaults of dot4_i8', () => {
  it('folds dot4_i8 of constants, so a shift by its result is checked', () => {
    const word = (value: number): Expr => ({ op: 'const', type: 'u32', value });
    // 5*3 + 2*10 + 7 = 42: a shift amount past 31.
    const dot: Expr = {
      op: 'dot4_i8',
      type: 'i32',
      args: [word(0x0205), word(0x0a03), { op: 'const', type: 'i32', value: 7 }],
    };
    const amount: Expr = { op: 'bitcast', type: 'u32', args: [dot] };
    const value: Expr = { op: 'shl', type: 'u32', args: [one, amount] };
    const store = { op: 'store', memory: 'y', index: one, value } as const;
    expect(constantFaults([store], 'body', new Map())).toEqual([
      {
        path: 'body[0].value',
        message: 'shift by constant 42 (must be below 32) (Tint folds constants)',
      },
    ]);
  });
});

describe('constantFaults of funnel_shift_right', () => {
  const word = (value: number): Expr => ({ op: 'const', type: 'u32', value });
  const funnel = (lo: Expr, hi: Expr, shift: Expr): Expr => ({
    op: 'funnel_shift_right',
    type: 'u32',
    args: [lo, hi, shift],
  });
  const stored = (value: Expr) => [{ op: 'store', memory: 'y', index: one, value } as const];

  it('folds a funnel shift of constants, so a shift by its result is checked', () => {
    // 0x10:0x80000000 >> 31 = 0x21 = 33: a shift amount past 31.
    const amount = funnel(word(0x80000000), word(0x10), word(31));
    const value: Expr = { op: 'shr', type: 'u32', args: [one, amount] };
    expect(constantFaults(stored(value), 'body', new Map())).toEqual([
      {
        path: 'body[0].value',
        message: 'shift by constant 33 (must be below 32) (Tint folds constants)',
      },
    ]);
  });

  it('reports a constant shift amount of 32 or more, whatever lo and hi are', () => {
    const lo: Expr = { op: 'load', type: 'u32', memory: 'x', args: [one] };
    expect(constantFaults(stored(funnel(lo, lo, add(word(31), one))), 'body', new Map())).toEqual([
      {
        path: 'body[0].value',
        message: 'funnel shift by constant 32 (must be below 32) (Tint folds constants)',
      },
    ]);
    expect(constantFaults(stored(funnel(lo, lo, word(31))), 'body', new Map())).toEqual([]);
  });
});

describe('constantFaults of store_vector', () => {
  it('checks each value at its own path, and the index', () => {
    const shift = (amount: number): Expr => ({
      op: 'shl',
      type: 'u32',
      args: [one, { op: 'const', type: 'u32', value: amount }],
    });
    const index: Expr = { op: 'div', type: 'u32', args: [one, { op: 'const', type: 'u32', value: 0 }] }; // prettier-ignore
    const store = { op: 'store_vector', memory: 'y', index, values: [one, shift(40)] } as const;
    expect(constantFaults([store], 'body', new Map()).map((issue) => issue.path)).toEqual([
      'body[0].index',
      'body[0].values[1]',
    ]);
  });
});

describe('constantFaults of bit_select', () => {
  it('folds a bit select of constants, so a shift by its result is checked', () => {
    const word = (value: number): Expr => ({ op: 'const', type: 'u32', value });
    // 0x2c's bits under the mask 0xf0 (0x20) with 0x3f's elsewhere (0x0f): 0x2f = 47.
    const select: Expr = {
      op: 'bit_select',
      type: 'u32',
      args: [word(0xf0), word(0x2c), word(0x3f)],
    };
    const value: Expr = { op: 'shl', type: 'u32', args: [one, select] };
    const store = { op: 'store', memory: 'y', index: one, value } as const;
    expect(constantFaults([store], 'body', new Map())).toEqual([
      {
        path: 'body[0].value',
        message: 'shift by constant 47 (must be below 32) (Tint folds constants)',
      },
    ]);
  });
});

describe('constantFaults of mma', () => {
  it('checks each fragment value at its own path', () => {
    // Two nodes: a shared sub-expression is folded, and reported, once.
    const shift = (): Expr => ({ op: 'shl', type: 'u32', args: [one, { op: 'const', type: 'u32', value: 40 }] }); // prettier-ignore
    const zero: Expr = { op: 'const', type: 'f32', value: 0 };
    const mma = {
      op: 'mma',
      shape: 'm16n8k16',
      names: ['d0', 'd1', 'd2', 'd3'],
      a: [one, shift(), one, one],
      b: [one, shift()],
      c: [zero, zero, zero, zero],
    } as const;
    expect(constantFaults([mma], 'body', new Map()).map((issue) => issue.path)).toEqual([
      'body[0].a[1]',
      'body[0].b[1]',
    ]);
  });
});
