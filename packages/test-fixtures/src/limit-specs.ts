import type { Expr, KernelSpec, Stmt } from '@forge/ir';

// Small specs at and past the limits the validator enforces for the vendor tools (Tint, ptxas,
// WebGPU); the IR tests check the verdicts and the backends' tests feed the accepted ones to the
// real tools.

/** A one-knob kernel (`wg`, the workgroup size) with an f32 and a u32 output buffer and u32 `n`. */
export function limitSpec(body: readonly Stmt[], overrides: Partial<KernelSpec> = {}): KernelSpec {
  return {
    id: 'limit-probe',
    semanticVersion: 1,
    entryPoint: 'limit_probe',
    description: 'a spec at a vendor limit',
    buffers: [
      { group: 0, binding: 0, name: 'y', element: 'f32', access: 'read_write' },
      { group: 0, binding: 1, name: 'yu', element: 'u32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [{ name: 't', element: 'f32', length: '32' }],
    schedule: [
      {
        name: 'wg',
        description: 'threads per workgroup',
        default: 64,
        bounds: { ptx: { min: 32, max: 1024 }, wgsl: { min: 1, max: 1024 } },
      },
    ],
    launch: { workgroupSize: 'wg', grid: ['1', '1', '1'] },
    body,
    ...overrides,
  };
}

const c = (type: 'f32' | 'f16' | 'u32' | 'i32', value: number): Expr => ({
  op: 'const',
  type,
  value,
});
const localId: Expr = { op: 'builtin', type: 'u32', name: 'local_id' };
const runtimeF32: Expr = { op: 'convert', type: 'f32', args: [localId] };

/** Stores an f32 expression to `y[0]`. */
export const storeF32 = (value: Expr): Stmt => ({
  op: 'store',
  memory: 'y',
  index: c('u32', 0),
  value,
});

/** `levels` nested ifs around `inner`, each on a run-time condition. */
export function nestedIfs(levels: number, inner: readonly Stmt[]): Stmt[] {
  let body: Stmt[] = [...inner];
  for (let level = 0; level < levels; level++)
    body = [
      {
        op: 'if',
        condition: { op: 'lt', type: 'bool', args: [localId, c('u32', 5)] },
        then: body,
        else: [],
      },
    ];
  return body;
}

/** `levels` nested negations of a run-time f32 (each costs 2 of the nesting budget). */
export function negChain(levels: number): Expr {
  let expression = runtimeF32;
  for (let level = 0; level < levels; level++)
    expression = { op: 'neg', type: 'f32', args: [expression] };
  return expression;
}

/** A left-deep chain of `levels` additions of a run-time f32. */
export function addChain(levels: number): Expr {
  let expression = runtimeF32;
  for (let level = 0; level < levels; level++)
    expression = { op: 'add', type: 'f32', args: [expression, runtimeF32] };
  return expression;
}

/** Constant expressions at the edge of what Tint's constant evaluation accepts. */
export const CONSTANT_BOUNDARY_CASES: Readonly<Record<string, Expr>> = {
  'exp2(127)': { op: 'exp2', type: 'f32', args: [c('f32', 127)] },
  'f32 max + 1e31 rounds to max': {
    op: 'add',
    type: 'f32',
    args: [c('f32', 3.4028234663852886e38), c('f32', 1e31)],
  },
  'sqrt(-0)': { op: 'sqrt', type: 'f32', args: [c('f32', -0)] },
  'f16 65504': {
    op: 'convert',
    type: 'f32',
    args: [{ op: 'convert', type: 'f16', args: [c('u32', 65504)] }],
  },
  'bitcast of a denormal': { op: 'bitcast', type: 'f32', args: [c('u32', 1)] },
  'shift by 31': {
    op: 'convert',
    type: 'f32',
    args: [{ op: 'shl', type: 'u32', args: [c('u32', 1), c('u32', 31)] }],
  },
  'i32 literal 1 << 31 (folded by Forge, wrapping)': {
    op: 'bitcast',
    type: 'f32',
    args: [{ op: 'shl', type: 'i32', args: [c('i32', 1), c('u32', 31)] }],
  },
  'u32 constant 1 << 31 behind a bitcast': {
    op: 'convert',
    type: 'f32',
    args: [
      {
        op: 'shl',
        type: 'u32',
        args: [{ op: 'bitcast', type: 'u32', args: [c('i32', 1)] }, c('u32', 31)],
      },
    ],
  },
  'unpack_half of finite halves': {
    op: 'unpack_half',
    type: 'f32',
    half: 1,
    args: [c('u32', 0x7bff7bff)],
  },
  'pack_half of ±65504': {
    op: 'convert',
    type: 'f32',
    args: [{ op: 'pack_half', type: 'u32', args: [c('f32', 65504), c('f32', -65504)] }],
  },
  // Tint evaluates `c + dot4I8Packed(a, b)` of constants and wraps the i32 sum (measured).
  'dot4_i8 of constants wrapping past INT_MIN': {
    op: 'convert',
    type: 'f32',
    args: [
      {
        op: 'dot4_i8',
        type: 'i32',
        args: [c('u32', 0x80808080), c('u32', 0x7f7f7f7f), c('i32', -(2 ** 31))],
      },
    ],
  },
  'shared t[31] of 32': { op: 'load', type: 'f32', memory: 't', args: [c('u32', 31)] },
};
