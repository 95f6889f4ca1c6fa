import { describe, expect, it } from 'vitest';
import type { Stmt } from './body.js';
import { defineKernel, type BodyBuilder, type KernelDeclarations } from './builder.js';
import { ForgeError, ValidationError } from './errors.js';
import * as ir from './expressions.js';
import { CATALOG, getKernel } from './kernels/catalog.js';
import type { KernelSpec } from './spec.js';
import { checkSpec, validateSpec } from './validate.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function toJson(spec: KernelSpec): JsonObject {
  return JSON.parse(JSON.stringify(spec)) as JsonObject;
}

/** `body[1].then[0].value` -> ['body', 1, 'then', 0, 'value'] */
function parsePath(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] !== undefined ? Number(match[2]) : (match[1] as string),
  );
}

function child(node: Json | undefined, key: string | number): Json | undefined {
  if (Array.isArray(node) && typeof key === 'number') return node[key];
  if (isObject(node) && typeof key === 'string')
    return Object.hasOwn(node, key) ? node[key] : undefined;
  return undefined;
}

function get(root: Json, path: string): Json | undefined {
  return parsePath(path).reduce<Json | undefined>(child, root);
}

/** A copy of `spec` with the value at `path` replaced (or added), or removed when `value` is undefined. */
function edit(spec: KernelSpec | JsonObject, path: string, value: Json | undefined): JsonObject {
  const root = JSON.parse(JSON.stringify(spec)) as JsonObject;
  const keys = parsePath(path);
  const last = keys.pop();
  const parent = keys.reduce<Json | undefined>(child, root);
  if (last === undefined || parent === undefined) throw new Error(`no parent for ${path}`);
  if (Array.isArray(parent) && typeof last === 'number') {
    if (value === undefined) parent.splice(last, 1);
    else parent[last] = value;
  } else if (isObject(parent) && typeof last === 'string') {
    if (value === undefined) delete parent[last];
    else parent[last] = value;
  } else throw new Error(`cannot edit ${path}`);
  return root;
}

const paths = (value: unknown): string[] => checkSpec(value).map((issue) => issue.path);

function issueAt(value: unknown, path: string): string {
  const issue = checkSpec(value).find((candidate) => candidate.path === path);
  if (issue === undefined) {
    throw new Error(`no issue at ${path}; got ${JSON.stringify(checkSpec(value))}`);
  }
  return issue.message;
}

const u32One = ir.u32(1);
const affine = getKernel('affine-f32').spec;
const rmsnorm = getKernel('rmsnorm').spec;

const DECLARATIONS: KernelDeclarations = {
  id: 'unit',
  semanticVersion: 1,
  entryPoint: 'unit',
  description: 'validation test',
  buffers: [
    { group: 0, binding: 0, name: 'data', element: 'f32', access: 'read' },
    { group: 0, binding: 1, name: 'scratch', element: 'f32', access: 'read_write' },
    { group: 0, binding: 2, name: 'out', element: 'u32', access: 'read_write' },
  ],
  params: [{ name: 'count', type: 'u32' }],
  shared: [{ name: 'tile', element: 'f32', length: '64' }],
  schedule: [],
  launch: { workgroupSize: '64', grid: ['count', '1', '1'] },
};

/** A spec with the given body, not validated (the builder would throw for invalid ones). */
function withBody(build: (b: BodyBuilder) => void): KernelSpec {
  let body: readonly Stmt[] = [];
  try {
    defineKernel(DECLARATIONS, (b) => {
      build(b);
      body = b.statements;
    });
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
  }
  return { ...DECLARATIONS, body };
}

describe('catalog specs', () => {
  it.each([...CATALOG.keys()])('%s is valid, also after a JSON round trip', (id) => {
    const spec = getKernel(id).spec;
    expect(checkSpec(spec)).toEqual([]);
    expect(checkSpec(toJson(spec))).toEqual([]);
    expect(validateSpec(spec)).toBe(spec);
  });

  it('the hand-built test declarations are valid', () => {
    const spec = withBody((b) => b.store('out', b.localId(), u32One));
    expect(checkSpec(spec)).toEqual([]);
  });
});

describe('spec shape', () => {
  it.each([null, [], 'spec', 42, true])('rejects the non-object %j at the root', (value) => {
    const issues = checkSpec(value);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('');
    expect(issues[0]?.message).toMatch(/must be an object/);
  });

  it('reports every missing required field', () => {
    const issues = checkSpec({});
    for (const field of ['id', 'entryPoint', 'buffers', 'params', 'launch', 'body']) {
      expect(issues).toContainEqual({ path: field, message: 'is required' });
    }
  });

  it('rejects unknown fields at every level with their path', () => {
    expect(issueAt(edit(affine, 'extra', 1), 'extra')).toMatch(/unknown field/);
    expect(issueAt(edit(affine, 'buffers[0].offset', 0), 'buffers[0].offset')).toMatch(
      /unknown field/,
    );
    expect(paths(edit(affine, 'schedule[0].bounds.CUDA', { min: 1, max: 2 }))).toContain(
      'schedule[0].bounds.CUDA',
    );
    expect(paths(edit(affine, 'launch.blockSize', '256'))).toContain('launch.blockSize');
    expect(paths(edit(affine, 'body[0].comment', 'hi'))).toEqual(['body[0].comment']);
    expect(paths(edit(affine, 'body[0].value.hint', 'fast'))).toEqual(['body[0].value.hint']);
  });

  it('quotes unknown keys that are not identifiers, so every path stays on one line', () => {
    const buffer = get(toJson(affine), 'buffers[0]');
    if (!isObject(buffer)) throw new Error('no buffers[0]');
    expect(paths(edit(affine, 'buffers[0]', { ...buffer, 'a\nb': 1 }))).toEqual([
      'buffers[0]["a\\nb"]',
    ]);
    const escape = { ...toJson(affine), '\u001b[2J': true };
    expect(paths(escape)).toEqual(['["\\u001b[2J"]']);
  });

  it('a removed field is reported where it was', () => {
    expect(paths(edit(affine, 'buffers[0].access', undefined))).toEqual(['buffers[0].access']);
    expect(paths(edit(affine, 'launch', undefined))).toContain('launch');
    expect(paths(edit(affine, 'body[0].value', undefined))).toEqual(['body[0].value']);
  });
});

describe('ids, versions and descriptions', () => {
  it.each(['Affine', 'a b', '-x', 'x-', 'x--y', '', 'é', 'a.b', 7, null])(
    'rejects the id %j',
    (id) => {
      expect(paths(edit(affine, 'id', id))).toEqual(['id']);
    },
  );

  it.each(['q8_0-gemv', 'a', '0x', 'sdpa-decode'])('accepts the id %j', (id) => {
    expect(checkSpec(edit(affine, 'id', id))).toEqual([]);
  });

  it.each([0, 1.5, '1', 1e7, -1])('rejects the semanticVersion %j', (version) => {
    expect(paths(edit(affine, 'semanticVersion', version))).toEqual(['semanticVersion']);
  });

  it.each(['two\nlines', 'tab\there', 'caf\u00e9', 'x'.repeat(301), 5])(
    'rejects the description %j',
    (description) => {
      expect(paths(edit(affine, 'description', description))).toEqual(['description']);
    },
  );

  it('accepts a 300-character printable description', () => {
    expect(checkSpec(edit(affine, 'description', '~'.repeat(300)))).toEqual([]);
  });

  it('rejects a knob description with a newline', () => {
    expect(paths(edit(affine, 'schedule[0].description', 'a\nb'))).toEqual([
      'schedule[0].description',
    ]);
  });
});

describe('identifiers', () => {
  it('rejects a buffer name that would inject PTX text, with the path of the name', () => {
    const spec = edit(affine, 'buffers[0].name', 'x_ptr) ; ret; //');
    expect(() => validateSpec(spec)).toThrow(ValidationError);
    try {
      validateSpec(spec);
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toBeInstanceOf(ForgeError);
      const validation = error as ValidationError;
      expect(validation.path).toBe('buffers[0].name');
      expect(validation.issues).toEqual([
        { path: 'buffers[0].name', message: expect.stringMatching(/is not an identifier/) },
      ]);
      expect(validation.message).toMatch(/^buffers\[0\]\.name: "x_ptr\) ; ret; \/\/" is not/);
    }
  });

  it.each(['entryPoint', 'params[1].name', 'schedule[0].name', 'body[0].name', 'body[1].name'])(
    'rejects an injected identifier at %s',
    (path) => {
      expect(paths(edit(affine, path, 'n; }\n__global__ void evil() {'))).toContain(path);
    },
  );

  it.each(['ret', 'fn', 'loop', '__x', 'bar', 'shared', 'let', 'tid', 'while', 'f32', 'mma'])(
    'rejects the reserved word %s as a buffer name, the entry point and a local',
    (word) => {
      expect(issueAt(edit(affine, 'buffers[0].name', word), 'buffers[0].name')).toMatch(
        /reserved|'__'/,
      );
      expect(paths(edit(affine, 'entryPoint', word))).toEqual(['entryPoint']);
      const local = edit(affine, 'body[0].name', word);
      expect(issueAt(local, 'body[0].name')).toMatch(/reserved|'__'/);
    },
  );

  it('rejects identifiers that start with a digit, contain a dash or exceed 64 characters', () => {
    expect(paths(edit(affine, 'entryPoint', '1abc'))).toEqual(['entryPoint']);
    expect(paths(edit(affine, 'entryPoint', 'a-b'))).toEqual(['entryPoint']);
    expect(paths(edit(affine, 'entryPoint', 'a'.repeat(65)))).toEqual(['entryPoint']);
    expect(checkSpec(edit(affine, 'entryPoint', 'a'.repeat(64)))).toEqual([]);
  });

  it('rejects duplicate names across declarations', () => {
    expect(issueAt(edit(affine, 'params[0].name', 'x'), 'params[0].name')).toMatch(
      /'x' is already declared at buffers\[0\]\.name/,
    );
    expect(paths(edit(affine, 'schedule[0].name', 'y'))).toContain('buffers[1].name');
    expect(paths(edit(rmsnorm, 'shared[0].name', 'eps'))).toContain('shared[0].name');
  });

  it('rejects locals that reuse a declaration or another local', () => {
    expect(issueAt(edit(affine, 'body[0].name', 'n'), 'body[0].name')).toMatch(
      /already a buffer, param/,
    );
    expect(issueAt(edit(affine, 'body[1].name', 'stride'), 'body[1].name')).toMatch(
      /declared twice/,
    );
  });

  it('rejects a duplicate group/binding pair', () => {
    expect(paths(edit(affine, 'buffers[1].binding', 0))).toEqual(['buffers[1].binding']);
  });
});

describe('body type errors', () => {
  // body[0]: let a = local_id; body[1]: if (a < 4) { out[a] = a + 1 }
  const spec = withBody((b) => {
    const a = b.let('a', b.localId());
    b.if(ir.lt(a, ir.u32(4)), (then) => then.store('out', a, ir.add(a, ir.u32(1))));
  });

  it('the base spec is valid', () => {
    expect(checkSpec(spec)).toEqual([]);
    expect(get(toJson(spec), 'body[1].then[0].value.args[0].name')).toBe('a');
  });

  it('reports a mistyped operand deep in the body with its full path', () => {
    const mistyped = edit(spec, 'body[1].then[0].value.args[0].type', 'f32');
    expect(checkSpec(mistyped)).toEqual([
      {
        path: 'body[1].then[0].value.args[0].type',
        message: 'is f32 but the expression has type u32',
      },
    ]);
  });

  it('reports operands of different types at the operation', () => {
    const mixed = edit(spec, 'body[1].then[0].value.args[1]', {
      op: 'const',
      type: 'f32',
      value: 1,
    });
    expect(issueAt(mixed, 'body[1].then[0].value')).toMatch(
      /operands of 'add' have types u32 and f32/,
    );
  });

  it('reports a stored value of the wrong type', () => {
    const wrong = edit(spec, 'body[1].then[0].value', { op: 'const', type: 'f32', value: 1 });
    expect(issueAt(wrong, 'body[1].then[0].value')).toMatch(/has type f32 but u32 is required/);
  });

  it('reports a dot4_i8 operand of the wrong type at that operand', () => {
    const dot = withBody((b) => {
      const a = b.let('a', b.localId());
      b.store('out', a, ir.bitcast('u32', ir.dot4I8(a, 0x01010101, -1)));
    });
    expect(checkSpec(dot)).toEqual([]);
    const at = 'body[1].value.args[0]';
    const u32Accumulator = edit(dot, `${at}.args[2]`, { op: 'const', type: 'u32', value: 1 });
    expect(issueAt(u32Accumulator, at + '.args[2]')).toBe(
      'dot4_i8 operand has type u32 but i32 is required',
    );
    const floatWord = edit(dot, `${at}.args[1]`, { op: 'const', type: 'f32', value: 1 });
    expect(issueAt(floatWord, at + '.args[1]')).toMatch(/has type f32 but u32 is required/);
    expect(issueAt(edit(dot, `${at}.type`, 'u32'), at + '.type')).toMatch(/has type i32/);
    expect(issueAt(edit(dot, `${at}.args[2]`, undefined), at + '.args')).toMatch(/must have 3/);
  });

  it('reports a funnel_shift_right operand of the wrong type at that operand', () => {
    const funnel = withBody((b) => {
      const a = b.let('a', b.localId());
      b.store('out', a, ir.funnelShiftRight(a, 0x01234567, ir.and(a, 31)));
    });
    expect(checkSpec(funnel)).toEqual([]);
    const at = 'body[1].value';
    const i32Word = edit(funnel, `${at}.args[1]`, { op: 'const', type: 'i32', value: 1 });
    expect(issueAt(i32Word, at + '.args[1]')).toBe(
      'funnel_shift_right operand has type i32 but u32 is required',
    );
    const floatShift = edit(funnel, `${at}.args[2]`, { op: 'const', type: 'f32', value: 1 });
    expect(issueAt(floatShift, at + '.args[2]')).toMatch(/has type f32 but u32 is required/);
    expect(issueAt(edit(funnel, `${at}.type`, 'i32'), at + '.type')).toMatch(/has type u32/);
    expect(issueAt(edit(funnel, `${at}.args[2]`, undefined), at + '.args')).toMatch(/must have 3/);
  });

  it('reports a bit_select operand of the wrong type at that operand', () => {
    const select = withBody((b) => {
      const a = b.let('a', b.localId());
      b.store('out', a, ir.bitSelect(0xc0c0c0c0, a, ir.shr(a, 2)));
    });
    expect(checkSpec(select)).toEqual([]);
    const at = 'body[1].value';
    const i32Mask = edit(select, `${at}.args[0]`, { op: 'const', type: 'i32', value: -1 });
    expect(issueAt(i32Mask, at + '.args[0]')).toBe(
      'bit_select operand has type i32 but u32 is required',
    );
    const floatWord = edit(select, `${at}.args[2]`, { op: 'const', type: 'f32', value: 1 });
    expect(issueAt(floatWord, at + '.args[2]')).toMatch(/has type f32 but u32 is required/);
    expect(issueAt(edit(select, `${at}.type`, 'i32'), at + '.type')).toMatch(/has type u32/);
    expect(issueAt(edit(select, `${at}.args[2]`, undefined), at + '.args')).toMatch(/must have 3/);
  });

  it('reports an unknown local with the path of its name', () => {
    const unknown = edit(spec, 'body[1].then[0].value.args[0].name', 'b');
    expect(issueAt(unknown, 'body[1].then[0].value.args[0].name')).toMatch(/not a local in scope/);
  });

  it('reports a non-bool condition', () => {
    const condition = edit(spec, 'body[1].condition', { op: 'const', type: 'u32', value: 1 });
    expect(issueAt(condition, 'body[1].condition')).toMatch(/bool is required/);
  });

  it('reports locals used outside their scope', () => {
    const scoped = withBody((b) => {
      b.if(ir.bool(true), (then) => then.let('inner', ir.u32(1)));
      b.store('out', ir.u32(0), { op: 'var', type: 'u32', name: 'inner' });
    });
    expect(paths(scoped)).toEqual(['body[1].value.name']);
  });

  it.each([
    ['u32 -1', { op: 'const', type: 'u32', value: -1 }, /is not a u32/],
    ['u32 1.5', { op: 'const', type: 'u32', value: 1.5 }, /is not a u32/],
    ['u32 2^32', { op: 'const', type: 'u32', value: 2 ** 32 }, /is not a u32/],
  ] as const)('rejects the constant %s', (_name, constant, message) => {
    expect(
      issueAt(
        edit(spec, 'body[1].then[0].value.args[1]', constant),
        'body[1].then[0].value.args[1].value',
      ),
    ).toMatch(message);
  });

  it('rejects constants outside their type', () => {
    const constant = (type: string, value: Json): JsonObject =>
      edit(spec, 'body[1].then[0].value', {
        op: 'convert',
        type: 'u32',
        args: [{ op: 'const', type, value }],
      });
    const at = 'body[1].then[0].value.args[0].value';
    expect(issueAt(constant('i32', 2 ** 31), at)).toMatch(/is not an i32/);
    expect(issueAt(constant('f32', 1e39), at)).toMatch(/outside the f32 range/);
    expect(issueAt(constant('f16', 70000), at)).toMatch(/outside the f16 range/);
    expect(issueAt(constant('f32', 'NaN'), at)).toMatch(/finite number/);
    expect(checkSpec(constant('f32', 3.4e38))).toEqual([]);
    expect(checkSpec(constant('f16', 65504))).toEqual([]);
  });

  it('rejects bad builtins, loads and stores', () => {
    expect(
      issueAt(
        edit(spec, 'body[0].value', { op: 'builtin', type: 'u32', name: 'local_id', axis: 'x' }),
        'body[0].value.axis',
      ),
    ).toMatch(/takes no axis/);
    expect(
      paths(edit(spec, 'body[0].value', { op: 'builtin', type: 'u32', name: 'workgroup_id' })),
    ).toEqual(['body[0].value.axis']);
    expect(
      paths(edit(spec, 'body[0].value', { op: 'builtin', type: 'u32', name: 'thread_id' })),
    ).toEqual(['body[0].value.name']);
    const load = (index: Json): JsonObject =>
      edit(spec, 'body[1].then[0].value', {
        op: 'convert',
        type: 'u32',
        args: [{ op: 'load', type: 'f32', memory: 'data', args: [index] }],
      });
    expect(checkSpec(load({ op: 'const', type: 'u32', value: 0 }))).toEqual([]);
    expect(paths(load({ op: 'const', type: 'i32', value: 0 }))).toEqual([
      'body[1].then[0].value.args[0].args[0]',
    ]);
    expect(issueAt(edit(spec, 'body[1].then[0].memory', 'data'), 'body[1].then[0].memory')).toMatch(
      /read-only/,
    );
    expect(
      issueAt(edit(spec, 'body[1].then[0].memory', 'nothing'), 'body[1].then[0].memory'),
    ).toMatch(/not a declared buffer/);
  });

  it('rejects unknown ops and statements that are not objects', () => {
    expect(issueAt(edit(spec, 'body[0]', { op: 'goto', label: 'x' }), 'body[0].op')).toMatch(
      /unknown statement op/,
    );
    expect(
      issueAt(
        edit(spec, 'body[0].value', { op: 'pow', type: 'u32', args: [] }),
        'body[0].value.op',
      ),
    ).toMatch(/unknown expression op/);
    expect(issueAt(edit(spec, 'body[0]', 'barrier'), 'body[0]')).toMatch(
      /must be a statement object/,
    );
  });

  it('rejects assignments to loop indices and non-positive constant steps', () => {
    const loop = withBody((b) => {
      b.for('i', { start: ir.u32(0), end: ir.u32(4), step: ir.u32(1) }, (body, i) => {
        body.assign(i, ir.u32(3));
      });
    });
    expect(issueAt(loop, 'body[0].body[0].name')).toMatch(/cannot be assigned/);
    const zeroStep = withBody((b) => {
      b.for('i', { start: ir.u32(0), end: ir.u32(4), step: ir.u32(0) }, () => undefined);
    });
    expect(issueAt(zeroStep, 'body[0].step')).toMatch(/must be positive/);
  });

  it('reports every body problem, not only the first', () => {
    const twice = edit(
      edit(spec, 'body[0].value', { op: 'const', type: 'u32', value: -1 }),
      'body[1].then[0].memory',
      'nothing',
    );
    expect(paths(twice)).toEqual(['body[0].value.value', 'body[1].then[0].memory']);
  });
});

describe('uniformity of barriers and warp operations', () => {
  const barrierUnder = (condition: (b: BodyBuilder) => ReturnType<typeof ir.lt>): KernelSpec =>
    withBody((b) => b.if(condition(b), (then) => then.barrier()));

  it('rejects a barrier under a thread-divergent if', () => {
    const spec = barrierUnder((b) => ir.lt(b.localId(), ir.u32(16)));
    expect(checkSpec(spec)).toEqual([
      {
        path: 'body[0].then[0]',
        message: expect.stringMatching(/not uniform across the workgroup/),
      },
    ]);
    expect(() => validateSpec(spec)).toThrow(
      /body\[0\]\.then\[0\]: barrier in control flow that is not uniform/,
    );
  });

  it('names a later dispatch by its stage in the path', () => {
    const divergent = barrierUnder((b) => ir.lt(b.localId(), ir.u32(16)));
    const { body, launch, shared } = divergent;
    const staged = {
      ...divergent,
      body: [],
      stages: [{ entryPoint: 'second', shared, launch, body }],
    };
    expect(paths(staged)).toEqual(['stages[0].body[0].then[0]']);
  });

  it('rejects a barrier under a warp-uniform (but not workgroup-uniform) if', () => {
    expect(paths(barrierUnder((b) => ir.eq(b.warpId(), ir.u32(0))))).toEqual(['body[0].then[0]']);
    expect(paths(barrierUnder((b) => ir.eq(b.laneId(), ir.u32(0))))).toEqual(['body[0].then[0]']);
  });

  it('accepts a barrier under a workgroup-uniform if', () => {
    expect(checkSpec(barrierUnder((b) => ir.lt(b.workgroupId('x'), b.param('count'))))).toEqual([]);
    expect(checkSpec(barrierUnder((b) => ir.lt(b.load('data', ir.u32(0)), ir.f32(0))))).toEqual([]);
  });

  it('treats loads from writable memory as thread-divergent', () => {
    expect(paths(barrierUnder((b) => ir.lt(b.load('scratch', ir.u32(0)), ir.f32(0))))).toEqual([
      'body[0].then[0]',
    ]);
    expect(paths(barrierUnder((b) => ir.lt(b.load('tile', ir.u32(0)), ir.f32(0))))).toEqual([
      'body[0].then[0]',
    ]);
  });

  it('follows divergence through locals', () => {
    const spec = withBody((b) => {
      const a = b.let('a', b.localId());
      const c = b.let('c', ir.add(a, ir.u32(1)));
      b.if(ir.lt(c, ir.u32(16)), (then) => then.barrier());
    });
    expect(paths(spec)).toEqual(['body[2].then[0]']);
  });

  it('follows divergence assigned later in a loop (fixed point)', () => {
    const spec = withBody((b) => {
      const a = b.let('a', ir.u32(0));
      b.for('i', { start: ir.u32(0), end: ir.u32(4), step: ir.u32(1) }, (loop) => {
        loop.if(ir.lt(a, ir.u32(1)), (then) => then.barrier());
        loop.assign(a, loop.localId());
      });
    });
    expect(paths(spec)).toEqual(['body[1].body[0].then[0]']);
  });

  it('rejects a barrier in a loop whose bounds differ per thread, and in an if assigned under divergence', () => {
    const loop = withBody((b) => {
      b.for('i', { start: b.localId(), end: ir.u32(64), step: ir.u32(64) }, (body) =>
        body.barrier(),
      );
    });
    expect(paths(loop)).toEqual(['body[0].body[0]']);
    const assigned = withBody((b) => {
      const flag = b.let('flag', ir.u32(0));
      b.if(ir.eq(b.localId(), ir.u32(0)), (then) => then.assign(flag, ir.u32(1)));
      b.if(ir.eq(flag, ir.u32(1)), (then) => then.barrier());
    });
    expect(paths(assigned)).toEqual(['body[2].then[0]']);
  });

  it('rejects a warp reduction under a lane-divergent if', () => {
    const spec = withBody((b) => {
      b.if(ir.lt(b.laneId(), ir.u32(16)), (then) => {
        then.reduce('add', 'total', ir.f32(1));
      });
    });
    expect(checkSpec(spec)).toEqual([
      {
        path: 'body[0].then[0]',
        message: expect.stringMatching(
          /reduce in control flow that is not uniform across the warp/,
        ),
      },
    ]);
  });

  it('accepts a warp reduction under a warp-uniform if, and rejects a shuffle under a divergent one', () => {
    const warpUniform = withBody((b) => {
      b.if(ir.eq(b.warpId(), ir.u32(0)), (then) => {
        then.reduce('max', 'top', ir.f32(1));
      });
    });
    expect(checkSpec(warpUniform)).toEqual([]);
    const shuffle = withBody((b) => {
      b.if(ir.eq(b.localId(), ir.u32(3)), (then) => {
        then.shuffle('xor', 'other', ir.f32(1), ir.u32(1));
      });
    });
    expect(paths(shuffle)).toEqual(['body[0].then[0]']);
  });

  it('a reduction result is warp-uniform; a shuffle result is not', () => {
    const afterReduce = withBody((b) => {
      const total = b.reduce('add', 'total', ir.convert('f32', b.localId()));
      b.if(ir.gt(total, ir.f32(0)), (then) => then.reduce('add', 'again', ir.f32(1)));
      b.if(ir.gt(total, ir.f32(0)), (then) => then.barrier());
    });
    expect(paths(afterReduce)).toEqual(['body[2].then[0]']);
    const afterShuffle = withBody((b) => {
      const other = b.shuffle('down', 'other', ir.f32(1), ir.u32(1));
      b.if(ir.gt(other, ir.f32(0)), (then) => then.reduce('add', 'again', ir.f32(1)));
    });
    expect(paths(afterShuffle)).toEqual(['body[1].then[0]']);
  });
});

describe('size expressions and launch', () => {
  it('rejects an unknown name in launch.grid', () => {
    expect(issueAt(edit(affine, 'launch.grid[0]', 'ceil_div(m, 256)'), 'launch.grid[0]')).toMatch(
      /unknown name\(s\) m/,
    );
  });

  it('rejects a syntax error in launch.grid', () => {
    expect(issueAt(edit(affine, 'launch.grid[1]', 'ceil_div(n,'), 'launch.grid[1]')).toMatch(
      /unexpected end/,
    );
    expect(paths(edit(affine, 'launch.grid[2]', 'n $ 2'))).toEqual(['launch.grid[2]']);
    expect(paths(edit(affine, 'launch.grid[2]', 1))).toEqual(['launch.grid[2]']);
  });

  it('allows only u32 params and knobs in the grid, knobs only in sizes', () => {
    expect(paths(edit(affine, 'launch.grid[0]', 'scale'))).toEqual(['launch.grid[0]']);
    expect(paths(edit(affine, 'launch.workgroupSize', 'n'))).toEqual(['launch.workgroupSize']);
    expect(paths(edit(rmsnorm, 'shared[0].length', 'n_embd'))).toEqual(['shared[0].length']);
    expect(checkSpec(edit(affine, 'launch.grid[1]', 'max(1, workgroupSize / 32)'))).toEqual([]);
  });

  it('takes a register cap as a size expression over the knobs', () => {
    expect(checkSpec(edit(affine, 'launch.maxRegisters', 'min(255, workgroupSize / 2)'))).toEqual(
      [],
    );
    expect(paths(edit(affine, 'launch.maxRegisters', 'n'))).toEqual(['launch.maxRegisters']);
    expect(paths(edit(affine, 'launch.maxRegisters', 96))).toEqual(['launch.maxRegisters']);
  });

  it('requires exactly three grid entries', () => {
    expect(issueAt(edit(affine, 'launch.grid', ['n', '1']), 'launch.grid')).toMatch(/3 entries/);
  });
});

describe('schedule knobs', () => {
  it('rejects defaults outside the bounds, off the multiple, or not a power of two', () => {
    expect(issueAt(edit(rmsnorm, 'schedule[0].default', 2048), 'schedule[0].default')).toMatch(
      /outside/,
    );
    expect(issueAt(edit(rmsnorm, 'schedule[0].default', 48), 'schedule[0].default')).toMatch(
      /not a multiple of 32/,
    );
    const power = edit(affine, 'schedule[0].bounds.wgsl.powerOfTwo', true);
    expect(checkSpec(power)).toEqual([]);
    expect(issueAt(edit(power, 'schedule[0].default', 96), 'schedule[0].default')).toMatch(
      /power of two/,
    );
  });

  it('rejects inverted and malformed bounds', () => {
    expect(paths(edit(affine, 'schedule[0].bounds.ptx.min', 2000))).toContain(
      'schedule[0].bounds.ptx',
    );
    expect(paths(edit(affine, 'schedule[0].bounds.wgsl.powerOfTwo', 'yes'))).toEqual([
      'schedule[0].bounds.wgsl.powerOfTwo',
    ]);
    expect(issueAt(edit(affine, 'schedule[0].bounds', [1]), 'schedule[0].bounds')).toMatch(
      /^must be an object from target kind to bounds, got an array/,
    );
  });

  it('takes bounds for any target kind, each optional, the field itself too', () => {
    expect(paths(edit(affine, 'schedule[0].bounds.wgsl', undefined))).toEqual([]);
    expect(paths(edit(affine, 'schedule[0].bounds', {}))).toEqual([]);
    expect(paths(edit(affine, 'schedule[0].bounds', undefined))).toEqual([]);
    expect(paths(edit(affine, 'schedule[0].bounds.metal', { min: 32, max: 512 }))).toEqual([]);
    // A new kind's bounds are checked like any other, each message naming its field.
    expect(
      issueAt(
        edit(affine, 'schedule[0].bounds.metal', { min: 0, max: 512 }),
        'schedule[0].bounds.metal.min',
      ),
    ).toBe('must be an integer in [1, 1048576], got 0');
    expect(
      issueAt(
        edit(affine, 'schedule[0].bounds.metal', { min: 32, max: 128 }),
        'schedule[0].default',
      ),
    ).toBe('256 is outside the metal bounds [32, 128]');
    expect(
      issueAt(
        edit(affine, 'schedule[0].bounds.metal', { min: 1, max: 512, multipleOf: 100 }),
        'schedule[0].default',
      ),
    ).toBe('256 is not a multiple of 100 for metal');
    expect(issueAt(edit(affine, 'schedule[0].bounds.metal', 5), 'schedule[0].bounds.metal')).toBe(
      'must be an object, got 5',
    );
  });

  it.each(['Metal', 'spir-v', '_x', '9x', 'constructor_but_far_too_long_for_a_kind'])(
    'rejects the target kind %j in bounds',
    (kind) => {
      const knob = get(toJson(affine), 'schedule[0]');
      if (!isObject(knob)) throw new Error('no schedule[0]');
      const spec = edit(affine, 'schedule[0]', { ...knob, bounds: { [kind]: { min: 1, max: 2 } } });
      expect(checkSpec(spec)).toEqual([
        {
          path: expect.stringMatching(/^schedule\[0\]\.bounds(\.|\[)/),
          message: expect.stringMatching(/^is not a target kind/),
        },
      ]);
    },
  );

  it('a schedule knob is usable in the body only when declared', () => {
    const spec = edit(affine, 'body[0].value.args[1].name', 'blockSize');
    expect(issueAt(spec, 'body[0].value.args[1].name')).toMatch(/not a schedule knob/);
  });
});

describe('all problems at once', () => {
  it('checkSpec returns every declaration problem', () => {
    let spec = edit(affine, 'id', 'Bad Id');
    spec = edit(spec, 'entryPoint', 'ret');
    spec = edit(spec, 'description', 'a\nb');
    spec = edit(spec, 'buffers[0].name', 'x_ptr) ; ret; //');
    spec = edit(spec, 'launch.grid[0]', 'ceil_div(');
    expect(paths(spec)).toEqual([
      'id',
      'entryPoint',
      'description',
      'buffers[0].name',
      'launch.grid[0]',
    ]);
    try {
      validateSpec(spec);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toHaveLength(5);
      expect((error as ValidationError).message).toMatch(/^id: .*\(and 4 more\)$/);
    }
  });
});
