import { describe, expect, it } from 'vitest';
import type { Expr, Stmt, VarExpr } from './body.js';
import { defineKernel, localName } from './builder.js';
import {
  add,
  bitSelect,
  bitcast,
  convert,
  dot4I8,
  eq,
  f32,
  fma,
  funnelShiftRight,
  i32,
  lt,
  mul,
  select,
  shl,
  u32,
} from './expressions.js';
import type { KernelSpec } from './spec.js';

// The `@ts-expect-error` lines are the compile-time tests: `tsc -p tsconfig.test.json` (run by
// `pnpm test`) fails if any of them stops being an error. The `it` blocks check the runtime side.

const u = u32(1);
const f = f32(1);
const flag = lt(u, 2);
const untyped: Expr = u32(2);

// Typed results: a wrong annotation here would not compile.
const sums: readonly Expr<'u32'>[] = [
  funnelShiftRight(u, 1, 4),
  bitSelect(0xff00, u, 3),
  add(u, u),
  add(u, 256),
  mul(4, u),
  shl(u, 3),
  add(u, untyped),
];
const floats: readonly Expr<'f32'>[] = [fma(f, f, 0), convert('f32', u), select(flag, f, 0)];
const bools: readonly Expr<'bool'>[] = [flag, eq(u, 0), lt(4, u)];
const ints: readonly Expr<'i32'>[] = [
  bitcast('i32', u),
  dot4I8(u, 0x01010101, 0),
  dot4I8(1, 2, i32(3)),
];

// @ts-expect-error f32 + u32 mixes types.
add(f, u);
// @ts-expect-error u32 * f32 mixes types, whichever side comes first.
mul(u, f);
// @ts-expect-error no operand fixes the type of two plain numbers.
add(1, 2);
// @ts-expect-error a bool compared with a u32.
eq(flag, u);
// @ts-expect-error a comparison yields bool, not u32.
export const notU32: Expr<'u32'> = lt(u, 1);
// @ts-expect-error select's branches share a type.
select(flag, f, u);
// @ts-expect-error select's condition is a bool.
select(u, f, f);
// @ts-expect-error dot4I8 takes u32 words, not f32.
dot4I8(f, u, 0);
// @ts-expect-error dot4I8's accumulator is an i32, not a u32.
dot4I8(u, u, u);
// @ts-expect-error funnelShiftRight's words are u32, not i32.
funnelShiftRight(i32(1), u, 0);
// @ts-expect-error funnelShiftRight's shift amount is a u32, not f32.
funnelShiftRight(u, u, f);
// @ts-expect-error bitSelect's mask is a u32 word, not an i32.
bitSelect(i32(-1), u, u);
// @ts-expect-error bitSelect's words are u32, not f32.
bitSelect(u, u, f);

// Methods type as their functions do.
const methodResults: readonly [Expr<'u32'>, Expr<'bool'>, Expr<'f32'>, Expr<'i32'>, Expr<'f32'>] = [
  u.shr(4).and(0x0f0f0f0f).add(u),
  u.lt(1),
  flag.select(f, 0),
  u.dot4I8(0x01010101),
  u.unpackHalf(0).fma(f, 1),
];
// @ts-expect-error a method mixes types as its function does: u32 + f32.
u.add(f);
// @ts-expect-error dot4I8 is a u32 word's method: an f32 has none to call.
f.dot4I8(u);
// @ts-expect-error select is a bool's method.
u.select(f, f);
// @ts-expect-error unpackHalf reads a u32 word.
f.unpackHalf(0);
// @ts-expect-error a shift amount is a u32.
u.shl(f);
// @ts-expect-error convert's result is typed: to('f32') is no u32.
export const notU32Convert: Expr<'u32'> = u.to('f32');

function declarations(id: string) {
  return {
    id,
    semanticVersion: 1,
    entryPoint: 'unit',
    description: 'typed builder test',
    buffers: [
      { group: 0, binding: 0, name: 'words', element: 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'f32', access: 'read_write' },
    ],
    params: [
      { name: 'count', type: 'u32' },
      { name: 'scale', type: 'f32' },
    ],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
  } as const;
}

/** A body built from the literal declarations above, so params and memory are typed by name. */
function build(fill: Parameters<typeof defineKernel<ReturnType<typeof declarations>>>[1]) {
  return defineKernel(declarations('typed'), fill);
}

/** Never run: each statement marked `@ts-expect-error` must fail to compile. */
export function typeErrors(b: Parameters<Parameters<typeof build>[0]>[0]): void {
  const { total } = b.let({ total: f32(0) });
  const { n } = b.let({ n: b.param('count') });
  // @ts-expect-error an f32 assigned to a u32 local.
  b.assign(n, f);
  // @ts-expect-error a u32 assigned to an f32 local.
  b.assign(total, b.load('words', 0));
  // @ts-expect-error an f32 stored into a u32 buffer.
  b.store('words', 0, f);
  // @ts-expect-error the f32 param `scale` as an index.
  b.store('out', b.param('scale'), total);
  // @ts-expect-error no param of that name is declared.
  b.param('cuont');
  // @ts-expect-error no buffer of that name is declared.
  b.load('word', 0);
  // @ts-expect-error an f32 among the values stored into a u32 buffer.
  b.storeVector('words', 0, [n, f]);
  // @ts-expect-error store_vector writes 2 or 4 values, not 3.
  b.storeVector('out', 0, [total, total, total]);
  const w = b.load('words', 0);
  // @ts-expect-error an f32 among an mma's A words (u32 pairs of halves).
  b.mma('m16n8k16', ['d0', 'd1', 'd2', 'd3'], { a: [w, w, w, total], b: [w, w], c: [total, total, total, total] }); // prettier-ignore
  // @ts-expect-error an mma's B fragment is 2 words, not 3.
  b.mma('m16n8k16', ['d0', 'd1', 'd2', 'd3'], { a: [w, w, w, w], b: [w, w, w], c: [total, total, total, total] }); // prettier-ignore
  // @ts-expect-error a u32 among an mma's C values (f32).
  b.mma('m16n8k16', ['d0', 'd1', 'd2', 'd3'], { a: [w, w, w, w], b: [w, w], c: [total, total, total, n] }); // prettier-ignore
  // @ts-expect-error an mma declares 4 names.
  b.mma('m16n8k16', ['d0', 'd1'], { a: [w, w, w, w], b: [w, w], c: [total, total, total, total] }); // prettier-ignore
  // @ts-expect-error the f32 param `scale` as a vector index.
  b.storeVector('out', b.param('scale'), [total, 1]);
}

describe('typed builder: typed params and memory', () => {
  it('builds a kernel whose loads, params and locals are typed by the declarations', () => {
    const spec = build((b) => {
      const { total } = b.let({ total: f32(0) });
      const { n } = b.let({ n: b.param('count') });
      b.assign(total, fma(convert('f32', b.load('words', n)), b.param('scale'), total));
      b.store('out', 0, total);
    });
    expect(spec.body[2]).toMatchObject({ op: 'assign', value: { op: 'fma', type: 'f32' } });
  });
});

/** A validated spec's statements. */
function statements(spec: KernelSpec): readonly Stmt[] {
  return spec.body;
}

describe('typed builder: plain numbers become consts', () => {
  it('takes the other operand’s type, on either side', () => {
    expect(add(u, 256)).toEqual({ op: 'add', type: 'u32', args: [u, u32(256)] });
    expect(mul(4, f)).toEqual({ op: 'mul', type: 'f32', args: [f32(4), f] });
    expect(lt(4, u)).toEqual({ op: 'lt', type: 'bool', args: [u32(4), u] });
    expect(select(flag, f, 0)).toEqual({ op: 'select', type: 'f32', args: [flag, f, f32(0)] });
    expect(shl(bitcast('i32', u), 3)).toMatchObject({ type: 'i32', args: [{}, u32(3)] });
    expect(fma(f, 2, 0.5)).toMatchObject({ op: 'fma', args: [f, f32(2), f32(0.5)] });
    expect(dot4I8(u, 2, -3)).toEqual({ op: 'dot4_i8', type: 'i32', args: [u, u32(2), i32(-3)] });
    expect(funnelShiftRight(7, u, 31)).toEqual({
      op: 'funnel_shift_right',
      type: 'u32',
      args: [u32(7), u, u32(31)],
    });
    expect(bitSelect(0xff00, u, 3)).toEqual({
      op: 'bit_select',
      type: 'u32',
      args: [u32(0xff00), u, u32(3)],
    });
  });

  it('stores, assigns, loads and loop bounds take the declared types; step defaults to 1', () => {
    const body = statements(
      build((b) => {
        const { total } = b.let({ total: f32(0) });
        b.for('i', { start: 0, end: b.param('count') }, (loop, i) => {
          loop.assign(total, add(total, convert('f32', loop.load('words', i))));
        });
        b.assign(total, 1.5);
        b.store('out', 0, total);
        b.store('out', 1, 2);
      }),
    );
    expect(body[1]).toMatchObject({
      op: 'for',
      type: 'u32',
      start: u32(0),
      end: { op: 'param', type: 'u32', name: 'count' },
      step: u32(1),
    });
    expect(body[2]).toEqual({ op: 'assign', name: 'total', value: f32(1.5) });
    expect(body[3]).toMatchObject({ op: 'store', index: u32(0), value: { op: 'var' } });
    expect(body[4]).toMatchObject({ op: 'store', index: u32(1), value: f32(2) });
  });

  it('storeVector takes values of the element type or plain numbers, 2 or 4 of them', () => {
    const body = statements(
      build((b) => {
        const { total } = b.let({ total: f32(0) });
        b.storeVector('out', 4, [total, 2, total, add(total, 1)]);
        b.storeVector('out', b.param('count'), [1, total]);
      }),
    );
    const total: VarExpr = { op: 'var', type: 'f32', name: 'total' };
    expect(body[1]).toEqual({
      op: 'store_vector',
      memory: 'out',
      index: u32(4),
      values: [total, f32(2), total, add(total, 1)],
    });
    expect(body[2]).toMatchObject({
      op: 'store_vector',
      index: { op: 'param' },
      values: [f32(1), total],
    });
  });

  it('still validates the number: a negative u32 const is a ValidationError', () => {
    expect(() => build((b) => b.store('out', -1, 0))).toThrow(/body\[0\]\.index/);
  });
});

describe('typed builder: a local is named once', () => {
  it.each([
    ['rowBytes', 'row_bytes'],
    ['xc0', 'xc0'],
    ['xTail0', 'x_tail0'],
    ['scaleCurrentA', 'scale_current_a'],
    ['carry0A', 'carry0_a'],
    ['sumQ1B', 'sum_q1_b'],
    ['x0_1', 'x0_1'],
    ['l', 'l'],
  ])('localName(%s) is %s', (key, name) => {
    expect(localName(key)).toBe(name);
  });

  it('let({ … }) declares each key, in order, under its derived name and returns typed vars', () => {
    let vars: { rowBytes: VarExpr<'u32'>; lowBit: VarExpr<'u32'> } | undefined;
    const body = statements(
      build((b) => {
        vars = b.let({ rowBytes: mul(b.param('count'), 34), lowBit: u32(1) });
        b.store('out', vars.rowBytes, 0);
        b.store('out', vars.lowBit, 0);
      }),
    );
    expect(body.slice(0, 2).map((statement) => statement.op === 'let' && statement.name)).toEqual([
      'row_bytes',
      'low_bit',
    ]);
    expect(vars?.rowBytes).toEqual({ op: 'var', type: 'u32', name: 'row_bytes' });
  });

  it("let('name', value) names a local explicitly, and a number takes the given type", () => {
    const body = statements(
      build((b) => {
        const word = b.let('word_a', 0, 'u32');
        b.store('out', word, 0);
      }),
    );
    expect(body[0]).toEqual({ op: 'let', name: 'word_a', type: 'u32', value: u32(0) });
  });
});

// Keep the typed arrays above used, so their annotations stay checked.
expect([sums, floats, bools, ints, methodResults].flat().length).toBe(21);
