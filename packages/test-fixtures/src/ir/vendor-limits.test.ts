import { describe, expect, it } from 'vitest';
import {
  ValidationError,
  abbreviatePath,
  bindConstants,
  checkSpec,
  describeJson,
  formatIssue,
  type Expr,
  type KernelSpec,
  type Stmt,
} from '@forge/ir';
import {
  CONSTANT_BOUNDARY_CASES,
  addChain,
  limitSpec,
  negChain,
  nestedIfs,
  storeF32,
} from '../limit-specs.js';

const c = (type: 'f32' | 'f16' | 'u32' | 'i32', value: number): Expr => ({
  op: 'const',
  type,
  value,
});
const un = (op: 'sqrt' | 'log2' | 'rsqrt' | 'rcp' | 'exp2', arg: Expr): Expr => ({
  op,
  type: arg.type,
  args: [arg],
});
const bin = (op: 'add' | 'mul' | 'div' | 'rem' | 'shl' | 'shr', a: Expr, b: Expr): Expr => ({
  op,
  type: a.type,
  args: [a, b],
});
const localId: Expr = { op: 'builtin', type: 'u32', name: 'local_id' };
const toF32 = (arg: Expr): Expr => ({ op: 'convert', type: 'f32', args: [arg] });
const storeU32 = (value: Expr): Stmt => ({
  op: 'store',
  memory: 'yu',
  index: c('u32', 0),
  value,
});

/** The first issue of `spec` as its one-line message. */
function firstIssue(spec: unknown): string {
  const [issue] = checkSpec(spec);
  return issue === undefined ? 'valid' : formatIssue(issue);
}

describe('constant expressions Tint rejects', () => {
  const rejected: [string, Stmt, RegExp][] = [
    ['u32 division by 0', storeU32(bin('div', c('u32', 5), c('u32', 0))), /division by constant 0/],
    ['i32 remainder by 0', storeU32(toU32(bin('rem', c('i32', 5), c('i32', 0)))), /remainder/],
    ['shift by 32', storeU32(bin('shl', c('u32', 1), c('u32', 32))), /shift by constant 32/],
    ['shr by 40', storeU32(bin('shr', c('u32', 1), c('u32', 40))), /shift by constant 40/],
    ['div(1.0, 0.0)', storeF32(bin('div', c('f32', 1), c('f32', 0))), /f32 cannot represent/],
    ['sqrt(-1)', storeF32(un('sqrt', c('f32', -1))), /sqrt of constant -1/],
    ['log2(0)', storeF32(un('log2', c('f32', 0))), /log2 of constant 0/],
    ['rsqrt(0)', storeF32(un('rsqrt', c('f32', 0))), /rsqrt of constant 0/],
    ['rcp(0)', storeF32(un('rcp', c('f32', 0))), /f32 cannot represent/],
    ['exp2(1000)', storeF32(un('exp2', c('f32', 1000))), /f32 cannot represent/],
    ['exp2(128)', storeF32(un('exp2', c('f32', 128))), /f32 cannot represent/],
    ['3e38 + 3e38', storeF32(bin('add', c('f32', 3e38), c('f32', 3e38))), /f32 cannot represent/],
    ['bitcast inf', storeF32({ op: 'bitcast', type: 'f32', args: [c('u32', 0x7f800000)] }), /Infinity/], // prettier-ignore
    ['bitcast NaN', storeF32({ op: 'bitcast', type: 'f32', args: [c('u32', 0x7fc00000)] }), /NaN/], // prettier-ignore
    ['unpack_half(0x7c00)', storeF32({ op: 'unpack_half', type: 'f32', half: 0, args: [c('u32', 0x7c00)] }), /inf\/NaN half/], // prettier-ignore
    ['pack_half(0, 65520)', storeU32({ op: 'pack_half', type: 'u32', args: [c('f32', 0), c('f32', 65520)] }), /pack_half of constant 65520 \(outside ±65504/], // prettier-ignore
    ['convert<f16>(70000)', storeF32(toF32({ op: 'convert', type: 'f16', args: [c('f32', 70000)] })), /f16 cannot represent/], // prettier-ignore
    ['f16 65504 + 1', storeF32(toF32(bin('add', c('f16', 65504), c('f16', 1)))), /f16 cannot/],
    ['fma product overflow', storeF32({ op: 'fma', type: 'f32', args: [c('f32', 3e38), c('f32', 10), c('f32', -3e38)] }), /fma/], // prettier-ignore
    ['run-time u32 / 0', storeU32(bin('div', localId, c('u32', 0))), /division by constant 0/],
    ['run-time u32 << 40', storeU32(bin('shl', localId, c('u32', 40))), /shift by constant 40/],
    ['constant 3 << 31 behind a bitcast', storeU32(bin('shl', toU32(c('i32', 3)), c('u32', 31))), /shl\(3, 31\) overflows u32/], // prettier-ignore
    ['constant i32 1 << 31 behind a bitcast', storeU32(toU32(bin('shl', { op: 'bitcast', type: 'i32', args: [c('u32', 1)] }, c('u32', 31)))), /overflows i32/], // prettier-ignore
    ['constant i32 min / -1 behind a bitcast', storeU32(toU32(bin('div', { op: 'bitcast', type: 'i32', args: [c('u32', 0x80000000)] }, c('i32', -1)))), /overflows i32/], // prettier-ignore
    ['shared t[32] of 32', { op: 'store', memory: 't', index: c('u32', 32), value: c('f32', 0) }, /out of bounds of 't' \(length 32\)/], // prettier-ignore
  ];
  it.each(rejected)('%s is rejected, naming the expression', (_name, statement, message) => {
    const [issue] = checkSpec(limitSpec([statement]));
    expect(issue?.path).toMatch(/^body\[0\]\.(value|index)/);
    expect(issue?.message).toMatch(message);
  });

  it('names the faulting sub-expression, even under a select', () => {
    const inner = bin('div', c('u32', 1), c('u32', 0));
    const spec = limitSpec([
      storeU32({ op: 'select', type: 'u32', args: [{ op: 'const', type: 'bool', value: false }, inner, c('u32', 2)] }), // prettier-ignore
    ]);
    expect(checkSpec(spec).map((issue) => issue.path)).toEqual(['body[0].value.args[1]']);
  });

  it.each(Object.entries(CONSTANT_BOUNDARY_CASES))(
    'accepts the boundary case %s',
    (_name, value) => {
      expect(firstIssue(limitSpec([storeF32(value)]))).toBe('valid');
    },
  );

  it('leaves integer wrap-around, float-to-int saturation and run-time operands alone', () => {
    const spec = limitSpec([
      storeU32(bin('add', c('u32', 0xffffffff), c('u32', 1))),
      storeU32({ op: 'convert', type: 'u32', args: [c('f32', 1e10)] }),
      { op: 'let', name: 'zero', type: 'u32', value: c('u32', 0) },
      storeU32(bin('div', c('u32', 5), { op: 'var', type: 'u32', name: 'zero' })),
    ]);
    expect(checkSpec(spec)).toEqual([]);
  });

  it('finds faults that need the schedule when it is bound, naming the path and the schedule', () => {
    const wg: Expr = { op: 'schedule', type: 'u32', name: 'wg' };
    const body = [storeU32(bin('div', c('u32', 5), bin('add', bin('shr', wg, c('u32', 6)), c('u32', 0))))]; // prettier-ignore
    expect(checkSpec(limitSpec(body))).toEqual([]);
    expect(() => bindConstants(body, { wg: 64 }, 64)).not.toThrow();
    const error = catchError(() => bindConstants(body, { wg: 32 }, 32));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error?.message).toBe(
      'body[0].value: integer division by constant 0 (Tint folds constants) with schedule wg=32',
    );
    const index: Stmt = { op: 'store', memory: 't', index: wg, value: c('f32', 0) };
    const shared = [{ name: 't', element: 'f32', length: 'wg / 2' } as const];
    expect(() => bindConstants([index], { wg: 64 }, 64, shared)).toThrow(/index 64 is out of bounds of 't' \(length 32\)/); // prettier-ignore
  });
});

function toU32(value: Expr): Expr {
  return { op: 'bitcast', type: 'u32', args: [value] };
}

function catchError(run: () => unknown): Error | undefined {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe('nesting limits from Tint', () => {
  // negChain(n) wraps convert(local_id), so its leaf sits 2n + 1 levels below the store's value.
  it('accepts 50 nested ifs around an expression of nesting cost 100, and rejects one more', () => {
    expect(firstIssue(limitSpec(nestedIfs(50, [storeF32(negChain(24))])))).toBe('valid');
    expect(firstIssue(limitSpec(nestedIfs(51, [])))).toMatch(/nested deeper than 50 if\/for/);
    expect(firstIssue(limitSpec(nestedIfs(50, [storeF32(negChain(25))])))).toMatch(
      /nests deeper than 100/,
    );
  });

  it('counts a negation twice and an addition once', () => {
    expect(firstIssue(limitSpec([storeF32(addChain(99))]))).toBe('valid');
    expect(firstIssue(limitSpec([storeF32(addChain(100))]))).toMatch(/nests deeper than 100/);
    expect(firstIssue(limitSpec([storeF32(negChain(49))]))).toBe('valid');
    expect(firstIssue(limitSpec([storeF32(negChain(50))]))).toMatch(/nests deeper than 100/);
  });

  it('keeps the message for a deep node on one short line', () => {
    const message = firstIssue(limitSpec(nestedIfs(50, [storeF32(negChain(60))])));
    expect(message).toMatch(/^body\[0\]\.then\[0\]\.then\[0\].*\.\.\.\(\+\d+ levels\)\.\.\./);
    expect(message.length).toBeLessThanOrEqual(200);
    expect(message).not.toContain('\n');
  });
});

describe('names the backends cannot take', () => {
  it("rejects '_' alone anywhere", () => {
    expect(firstIssue({ ...limitSpec([]), entryPoint: '_' })).toMatch(/^entryPoint: "_" alone/);
    expect(firstIssue(limitSpec([], { params: [{ name: '_', type: 'u32' }] }))).toMatch(
      /^params\[0\]\.name: "_" alone/,
    );
    expect(firstIssue(limitSpec([{ op: 'let', name: '_', type: 'u32', value: c('u32', 0) }]))).toMatch(/^body\[0\]\.name/); // prettier-ignore
  });

  it.each(['select', 'workgroupBarrier', 'floor', 'bitcast', 'inverseSqrt', 'subgroupShuffle', 'vec4f'])(
    'rejects the WGSL builtin %s as the entry point',
    (name) => {
      expect(firstIssue({ ...limitSpec([]), entryPoint: name })).toMatch(/WGSL builtin function/);
    },
  ); // prettier-ignore

  it.each(['buf_x', 'wg_t', 'v_a', 'forge_params', 'ForgeParams', 'param_n', 'shared_t', 'local_index'])(
    'rejects the generated name %s as the entry point',
    (name) => {
      expect(firstIssue({ ...limitSpec([]), entryPoint: name })).toMatch(/backends generate/);
    },
  ); // prettier-ignore
});

describe('binding and parameter limits', () => {
  const buffers = (count: number, group = 1): KernelSpec['buffers'] =>
    Array.from({ length: count }, (_, index) => ({
      group,
      binding: index,
      name: `out${index}`,
      element: 'u32' as const,
      access: 'read_write' as const,
    }));

  it('allows bindings up to 999 and 8 storage buffers, WebGPU defaults', () => {
    const at = buffers(8);
    expect(firstIssue(limitSpec([], { buffers: at }))).toBe('valid');
    expect(firstIssue(limitSpec([], { buffers: buffers(9) }))).toMatch(
      /^buffers: 9 storage buffers exceed WebGPU's default maxStorageBuffersPerShaderStage \(8\)/,
    );
    const high = [{ ...at[0]!, binding: 999 }];
    expect(firstIssue(limitSpec([], { buffers: high }))).toBe('valid');
    expect(firstIssue(limitSpec([], { buffers: [{ ...at[0]!, binding: 1000 }] }))).toMatch(
      /^buffers\[0\]\.binding: must be an integer in \[0, 999\]/,
    );
    // Group 0 also holds the params struct, one binding past the highest buffer.
    expect(firstIssue(limitSpec([], { buffers: [{ ...at[0]!, group: 0, binding: 999 }] }))).toMatch(/params struct/); // prettier-ignore
  });

  it("limits PTX parameter space to ptxas's 4352 bytes", () => {
    const params = (count: number): KernelSpec['params'] =>
      Array.from({ length: count }, (_, index) => ({ name: `p${index}`, type: 'u32' as const }));
    // Two u64 buffers (16 bytes) and 1084 u32 params fill exactly 4352 bytes.
    expect(firstIssue(limitSpec([], { params: params(1084) }))).toBe('valid');
    expect(firstIssue(limitSpec([], { params: params(1085) }))).toBe(
      "params: 2 buffers and 1085 params take 4356 bytes of PTX parameter space, over ptxas's 4352",
    );
  });
});

describe('size expressions and messages', () => {
  it('keeps size expressions in the u32 range, naming the grid axis', () => {
    const launch = { workgroupSize: 'wg', grid: ['99999999999*99999999999', '1', '1'] as const };
    expect(firstIssue(limitSpec([], { launch }))).toMatch(/^launch\.grid\[0\]: number 99999999999 is too large/); // prettier-ignore
    const product = { workgroupSize: 'wg', grid: ['65536 * 65536', '1', '1'] as const };
    expect(firstIssue(limitSpec([], { launch: product }))).toBe(
      'launch.grid[0]: 65536 * 65536 exceeds the u32 range (max 4294967295)',
    );
    const fits = { workgroupSize: 'wg', grid: ['65535 * 65537', '1', '1'] as const };
    expect(firstIssue(limitSpec([], { launch: fits }))).toBe('valid');
  });

  it('describes non-finite numbers as such, not as null', () => {
    expect(describeJson(JSON.parse('1e400'))).toBe('a number too large for a double (Infinity)');
    expect(describeJson(-Infinity)).toBe('a number too large for a double (-Infinity)');
    expect(firstIssue({ ...limitSpec([]), semanticVersion: JSON.parse('1e400') })).toMatch(/too large for a double/); // prettier-ignore
  });

  it('abbreviates long paths, keeping both ends', () => {
    const path = `body[0]${'.then[0]'.repeat(60)}.value.args[0]`;
    const short = abbreviatePath(path);
    expect(short.length).toBeLessThanOrEqual(100);
    expect(short.startsWith('body[0].then[0]')).toBe(true);
    expect(short.endsWith('.value.args[0]')).toBe(true);
    expect(abbreviatePath('body[0].value')).toBe('body[0].value');
  });
});
