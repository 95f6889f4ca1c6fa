import { describe, expect, it } from 'vitest';
import type { Expr, Stmt } from './body.js';
import { bindConstants } from './bind-constants.js';
import { constantFaults } from './constant-faults.js';
import { ValidationError } from './errors.js';
import type { KernelSpec } from './spec.js';
import { checkSpec, validateSpec } from './validate.js';

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

describe('constant vector indices (issue #26 row 14)', () => {
  const u32 = (value: number): Expr => ({ op: 'const', type: 'u32', value });
  const zero: Expr = { op: 'const', type: 'f32', value: 0 };
  const localId: Expr = { op: 'builtin', type: 'u32', name: 'local_id' };
  const store = (memory: string, index: Expr, width = 4): Stmt => ({
    op: 'store_vector',
    memory,
    index,
    values: Array.from({ length: width }, () => zero),
  });
  const load = (memory: string, index: Expr, width = 4): Stmt => ({
    op: 'load_vector',
    names: ['a', 'b', 'c', 'd'].slice(0, width),
    type: 'f32',
    memory,
    index,
  });
  const spec = (length: string, body: Stmt[]): KernelSpec => ({
    id: 'vectors',
    semanticVersion: 1,
    entryPoint: 'vectors',
    description: 'vector accesses at constant indices',
    buffers: [{ group: 0, binding: 0, name: 'y', element: 'f32', access: 'read_write' }],
    params: [],
    shared: [{ name: 'tile', element: 'f32', length }],
    schedule: [{ name: 'wg', description: 'workgroup size', default: 64 }],
    launch: { workgroupSize: 'wg', grid: ['1', '1', '1'] },
    body,
  });
  const tile = new Map([['tile', 8]]);
  const messages = (body: Stmt[]): string[] =>
    constantFaults(body, 'body', tile).map((issue) => `${issue.path}: ${issue.message}`);

  it('past the end of a shared array are rejected, counting every element reached', () => {
    expect(messages([store('tile', u32(8))])).toEqual([
      "body[0].index: constant index 8 of a 4-wide store_vector is out of bounds of 'tile' (length 8; it reaches element 11)",
    ]);
    expect(messages([load('tile', u32(6), 2), load('tile', u32(8), 2)])).toEqual([
      "body[1].index: constant index 8 of a 2-wide load_vector is out of bounds of 'tile' (length 8; it reaches element 9)",
    ]);
    // Partly inside is still outside: a length-6 array holds elements 0 to 5.
    expect(constantFaults([store('tile', u32(4))], 'body', new Map([['tile', 6]]))).toHaveLength(1);
    expect(messages([store('tile', u32(4)), load('tile', u32(0))])).toEqual([]);
  });

  it('not aligned to their vector are rejected, in buffers too', () => {
    expect(messages([store('y', u32(2)), load('tile', u32(3), 2)])).toEqual([
      'body[0].index: constant index 2 of a 4-wide store_vector is not a multiple of 4 (a vector access is aligned to the whole vector)',
      'body[1].index: constant index 3 of a 2-wide load_vector is not a multiple of 2 (a vector access is aligned to the whole vector)',
    ]);
    // Folded first: 1 + 1 is a constant 2.
    expect(messages([load('y', add(one, one))])).toHaveLength(1);
    // A run-time index is the interpreter's and the sanitizer's to check.
    expect(messages([store('tile', add(localId, one)), load('tile', localId)])).toEqual([]);
  });

  it('are rejected by validation with their JSON path', () => {
    const nested: Stmt = {
      op: 'if',
      condition: { op: 'lt', type: 'bool', args: [localId, one] },
      then: [store('tile', u32(8))],
      else: [load('tile', u32(2))],
    };
    expect(checkSpec(spec('8', [nested]))).toEqual([
      {
        path: 'body[0].then[0].index',
        message:
          "constant index 8 of a 4-wide store_vector is out of bounds of 'tile' (length 8; it reaches element 11)",
      },
      {
        path: 'body[0].else[0].index',
        message:
          'constant index 2 of a 4-wide load_vector is not a multiple of 4 (a vector access is aligned to the whole vector)',
      },
    ]);
    expect(() => validateSpec(spec('8', [nested]))).toThrow(ValidationError);
    expect(checkSpec(spec('8', [store('tile', u32(4))]))).toEqual([]);
  });

  it('against a length over schedule knobs are rejected when the schedule is bound', () => {
    const wg: Expr = { op: 'schedule', type: 'u32', name: 'wg' };
    const body = [store('tile', { op: 'div', type: 'u32', args: [wg, u32(2)] })];
    const shared = [{ name: 'tile', element: 'f32', length: 'wg / 4' } as const];
    expect(checkSpec(spec('wg / 4', body))).toEqual([]);
    // wg = 64: index 32 in a tile of 16.
    expect(() => bindConstants(body, { wg: 64 }, 64, shared)).toThrow(
      new ValidationError([
        {
          path: 'body[0].index',
          message:
            "constant index 32 of a 4-wide store_vector is out of bounds of 'tile' (length 16; it reaches element 35) with schedule wg=64",
        },
      ]),
    );
    // wg = 8: index 4 in a tile of 2, where 4 elements never fit.
    expect(() => bindConstants(body, { wg: 8 }, 8, shared)).toThrow(
      /length 2; it reaches element 7/,
    );
  });
});
