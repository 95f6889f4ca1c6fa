import { describe, expect, it } from 'vitest';
import type { Expr } from './body.js';
import { defineKernel } from './builder.js';
import * as ir from './expressions.js';
import { semanticHash } from './hash.js';
import { takeSnapshot } from './snapshot.js';
import { validateSpec } from './validate.js';

const u = ir.u32(6);
const v = ir.u32(3);
const f = ir.f32(1.5);
const flag = ir.lt(u, v);

// Each method beside the `ir` function it stands for, on the same operands.
const PAIRS: readonly (readonly [string, Expr, Expr])[] = [
  ['add', u.add(v), ir.add(u, v)],
  ['sub', u.sub(1), ir.sub(u, 1)],
  ['mul', u.mul(v), ir.mul(u, v)],
  ['div', u.div(v), ir.div(u, v)],
  ['rem', u.rem(4), ir.rem(u, 4)],
  ['min', f.min(2), ir.min(f, 2)],
  ['max', f.max(f), ir.max(f, f)],
  ['and', u.and(0x0f0f0f0f), ir.and(u, 0x0f0f0f0f)],
  ['or', u.or(v), ir.or(u, v)],
  ['xor', u.xor(v), ir.xor(u, v)],
  ['eq', u.eq(0), ir.eq(u, 0)],
  ['ne', u.ne(v), ir.ne(u, v)],
  ['lt', u.lt(v), ir.lt(u, v)],
  ['le', u.le(v), ir.le(u, v)],
  ['gt', f.gt(0), ir.gt(f, 0)],
  ['ge', f.ge(f), ir.ge(f, f)],
  ['shl', u.shl(4), ir.shl(u, 4)],
  ['shr', u.shr(v), ir.shr(u, v)],
  ['neg', f.neg(), ir.neg(f)],
  ['abs', f.abs(), ir.abs(f)],
  ['not', u.not(), ir.not(u)],
  ['sqrt', f.sqrt(), ir.sqrt(f)],
  ['rsqrt', f.rsqrt(), ir.rsqrt(f)],
  ['rcp', f.rcp(), ir.rcp(f)],
  ['exp2', f.exp2(), ir.exp2(f)],
  ['log2', f.log2(), ir.log2(f)],
  ['floor', f.floor(), ir.floor(f)],
  ['fma', f.fma(2, f), ir.fma(f, 2, f)],
  ['to', u.to('f32'), ir.convert('f32', u)],
  ['bitcast', f.bitcast('u32'), ir.bitcast('u32', f)],
  ['dot4I8', u.dot4I8(v, ir.i32(-2)), ir.dot4I8(u, v, ir.i32(-2))],
  ['dot4I8 (no accumulator)', u.dot4I8(v), ir.dot4I8(u, v, 0)],
  ['funnelShiftRight', u.funnelShiftRight(v, 8), ir.funnelShiftRight(u, v, 8)],
  ['bitSelect', u.bitSelect(v, 0), ir.bitSelect(u, v, 0)],
  ['unpackHalf', u.unpackHalf(1), ir.unpackHalf(u, 1)],
  ['select', flag.select(f, 0), ir.select(flag, f, 0)],
];

describe('expression methods', () => {
  it.each(PAIRS)('%s builds what its ir function builds', (_name, method, function_) => {
    expect(JSON.stringify(method)).toBe(JSON.stringify(function_));
    expect(method).toEqual(function_);
  });

  it('leaves an expression plain data: its own fields are all JSON sees, keys or for-in find', () => {
    const chain = u.shr(4).and(0x0f0f0f0f).dot4I8(v);
    const plain: unknown = JSON.parse(JSON.stringify(chain));
    expect(Object.keys(chain)).toEqual(['op', 'type', 'args']);
    const enumerated: string[] = [];
    for (const key in chain) enumerated.push(key);
    expect(enumerated).toEqual(['op', 'type', 'args']);
    expect(chain).toEqual(plain);
    expect(Object.isFrozen(ir.EXPRESSION_PROTOTYPE)).toBe(true);
  });

  it('chains left to right: tile.add(block).mul(64) is mul(add(tile, block), 64)', () => {
    const tile = ir.u32(2);
    expect(tile.add(u).mul(64)).toEqual(ir.mul(ir.add(tile, u), 64));
    expect(u.shr(4).and(0x0f0f0f0f)).toEqual(ir.and(ir.shr(u, 4), 0x0f0f0f0f));
  });

  it('gives methods to a plain expression through fluent, and keeps one that has them', () => {
    const plain: Expr<'u32'> = { op: 'const', type: 'u32', value: 7 };
    const made = ir.fluent(plain);
    expect(made).not.toBe(plain);
    expect(made.add(1)).toEqual(ir.add(plain, 1));
    expect(ir.fluent(made)).toBe(made);
  });

  it('snapshots an expression into a plain frozen object, and a kernel built with methods hashes as one built with functions', () => {
    const copy = takeSnapshot(u.add(v)) as object;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    const declarations = {
      id: 'fluent-check',
      semanticVersion: 1,
      entryPoint: 'fluent_check',
      description: 'y[i] = (x[i] >> 4) & 15 for i < n',
      buffers: [
        { group: 0, binding: 0, name: 'x', element: 'u32', access: 'read' },
        { group: 0, binding: 1, name: 'y', element: 'u32', access: 'read_write' },
      ],
      params: [{ name: 'n', type: 'u32' }],
      shared: [],
      schedule: [],
      launch: { workgroupSize: '64', grid: ['ceil_div(n, 64)', '1', '1'] },
    } as const;
    const fluentSpec = defineKernel(declarations, (b) => {
      const { x, y } = b.memory;
      const i = b.let('i', b.workgroupId().mul(64).add(b.localId()));
      b.if(i.lt(b.param('n')), () => y.store(i, x.at(i).shr(4).and(15)));
    });
    const functionSpec = defineKernel(declarations, (b) => {
      const i = b.let('i', ir.add(ir.mul(b.workgroupId(), 64), b.localId()));
      b.if(ir.lt(i, b.param('n')), () => b.store('y', i, ir.and(ir.shr(b.load('x', i), 4), 15)));
    });
    expect(JSON.stringify(fluentSpec)).toBe(JSON.stringify(functionSpec));
    expect(semanticHash(fluentSpec)).toBe(semanticHash(functionSpec));
    expect(validateSpec(JSON.parse(JSON.stringify(fluentSpec)))).toEqual(fluentSpec);
  });
});
