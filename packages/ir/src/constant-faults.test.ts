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
