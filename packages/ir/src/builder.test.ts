import { describe, expect, it } from 'vitest';
import type { Stmt, StmtOp, VarExpr } from './body.js';
import { BodyBuilder, defineKernel, type KernelDeclarations } from './builder.js';
import { BuilderScopeError, ForgeError } from './errors.js';
import * as ir from './expressions.js';

const DECLARATIONS: KernelDeclarations = {
  id: 'unit',
  semanticVersion: 1,
  entryPoint: 'unit',
  description: 'builder test',
  buffers: [
    { group: 0, binding: 0, name: 'data', element: 'f32', access: 'read' },
    { group: 0, binding: 1, name: 'out', element: 'f32', access: 'read_write' },
  ],
  params: [{ name: 'count', type: 'u32' }],
  shared: [{ name: 'tile', element: 'f32', length: '64' }],
  schedule: [],
  launch: { workgroupSize: '64', grid: ['count', '1', '1'] },
};

const acc: VarExpr = { op: 'var', type: 'f32', name: 'acc' };
const range = { start: ir.u32(0), end: ir.u32(4), step: ir.u32(1) };

// Keyed by StmtOp, so a new statement kind fails to compile here until it gets a case.
const APPEND: Record<StmtOp, { method: string; append: (b: BodyBuilder) => void }> = {
  let: { method: 'let', append: (b) => b.let('x', ir.f32(1)) },
  assign: { method: 'assign', append: (b) => b.assign(acc, ir.f32(2)) },
  store: { method: 'store', append: (b) => b.store('out', ir.u32(0), ir.f32(3)) },
  load_vector: {
    method: 'loadVector',
    append: (b) => b.loadVector('data', ir.u32(0), ['v0', 'v1']),
  },
  store_vector: {
    method: 'storeVector',
    append: (b) => b.storeVector('out', ir.u32(0), [ir.f32(1), 2]),
  },
  if: { method: 'if', append: (b) => b.if(ir.bool(true), () => undefined) },
  for: { method: 'for', append: (b) => b.for('j', range, () => undefined) },
  barrier: { method: 'barrier', append: (b) => b.barrier() },
  shuffle: { method: 'shuffle', append: (b) => b.shuffle('xor', 's', ir.f32(4), ir.u32(1)) },
  reduce: { method: 'reduce', append: (b) => b.reduce('add', 'r', ir.f32(5)) },
  mma: {
    method: 'mma',
    append: (b) => b.mma('m16n8k16', ['d0', 'd1', 'd2', 'd3'], { a: [0, 0, 0, 0], b: [0, 0], c: [0, 0, 0, 0] }), // prettier-ignore
  },
};
const KINDS = Object.keys(APPEND) as StmtOp[];

/** The ways to open a nested block: each runs `inside` with the nested builder, at body[1]. */
const OPENERS = {
  for: {
    label: 'the body of `for i`',
    path: 'body[1].body',
    open: (b: BodyBuilder, inside: (nested: BodyBuilder) => void) =>
      b.for('i', range, (loop) => inside(loop)),
  },
  then: {
    label: 'the `then` block of `if`',
    path: 'body[1].then',
    open: (b: BodyBuilder, inside: (nested: BodyBuilder) => void) =>
      b.if(ir.bool(true), (then) => inside(then)),
  },
  else: {
    label: 'the `else` block of `if`',
    path: 'body[1].else',
    open: (b: BodyBuilder, inside: (nested: BodyBuilder) => void) =>
      b.if(
        ir.bool(true),
        () => undefined,
        (otherwise) => inside(otherwise),
      ),
  },
} as const;
const OPENER_NAMES = Object.keys(OPENERS) as (keyof typeof OPENERS)[];
const CASES = OPENER_NAMES.flatMap((opener) => KINDS.map((kind) => [opener, kind] as const));

/** Runs `build` in defineKernel and returns the BuilderScopeError it throws. */
function scopeError(build: (b: BodyBuilder) => void): BuilderScopeError {
  try {
    defineKernel(DECLARATIONS, build);
  } catch (error) {
    if (error instanceof BuilderScopeError) return error;
    throw error;
  }
  throw new Error('defineKernel did not throw');
}

describe('a builder used while one of its nested blocks is open', () => {
  it.each(CASES)('throws for %s > %s on the outer builder', (opener, kind) => {
    const { label, path, open } = OPENERS[opener];
    const { method, append } = APPEND[kind];
    const error = scopeError((b) => {
      b.let('acc', ir.f32(0));
      open(b, () => append(b));
    });
    expect(error).toBeInstanceOf(ForgeError);
    expect(error.name).toBe('BuilderScopeError');
    expect(error.path).toBe('body');
    expect(error.openPath).toBe(path);
    expect(error.message).toContain(`\`${method}\` on the builder of the kernel body (body)`);
    expect(error.message).toContain(`while its nested block, ${label} (${path}), is open`);
  });

  it('names the innermost open block and the misused middle one, in one line', () => {
    const error = scopeError((b) => {
      b.for('i', range, (loop) => {
        loop.let('acc', ir.f32(0));
        loop.if(
          ir.bool(true),
          () => undefined,
          () => loop.store('out', ir.u32(0), ir.f32(1)),
        );
      });
    });
    expect(error.path).toBe('body[0].body');
    expect(error.openPath).toBe('body[0].body[1].else');
    expect(error.message).toBe(
      'builder: `store` on the builder of the body of `for i` (body[0].body) while its nested ' +
        'block, the `else` block of `if` (body[0].body[1].else), is open: the statement would ' +
        "land before that block; use the builder that block's callback was given",
    );
  });

  it('throws for the kernel body used two levels down', () => {
    const error = scopeError((b) =>
      b.for('i', range, (loop) => loop.if(ir.bool(true), () => b.barrier())),
    );
    expect([error.path, error.openPath]).toEqual(['body', 'body[0].body[0].then']);
  });

  it('rejects the issue #11 example that used to move the store before the loop', () => {
    const error = scopeError((b) => {
      const sum = b.let('sum', ir.f32(0));
      b.for('i', range, (loop, i) => {
        loop.assign(sum, ir.add(sum, b.load('data', i)));
        b.store('out', i, sum);
      });
    });
    expect(error.openPath).toBe('body[1].body');
  });
});

describe('a nested builder used after its callback returned', () => {
  it.each(CASES)('throws for %s > %s', (opener, kind) => {
    const { label, path, open } = OPENERS[opener];
    const { method, append } = APPEND[kind];
    const error = scopeError((b) => {
      b.let('acc', ir.f32(0));
      let captured: BodyBuilder | undefined;
      open(b, (nested) => (captured = nested));
      if (captured === undefined) throw new Error('callback not run');
      append(captured);
    });
    expect(error.path).toBe(path);
    expect(error.openPath).toBeUndefined();
    expect(error.message).toBe(
      `builder: \`${method}\` on the builder of ${label} (${path}) after its callback returned: ` +
        "a block's builder appends only while its callback runs",
    );
  });

  it('throws for the `then` builder used inside the `else` callback', () => {
    let then: BodyBuilder | undefined;
    const error = scopeError((b) =>
      b.if(
        ir.bool(true),
        (block) => (then = block),
        () => then?.barrier(),
      ),
    );
    expect([error.path, error.openPath]).toEqual(['body[0].then', undefined]);
  });

  it.each(KINDS)('throws for the kernel body builder after defineKernel returned (%s)', (kind) => {
    let root: BodyBuilder | undefined;
    defineKernel(DECLARATIONS, (b) => {
      root = b;
      b.store('out', ir.u32(0), ir.f32(0));
    });
    if (root === undefined) throw new Error('build not run');
    const builder = root;
    expect(() => APPEND[kind].append(builder)).toThrow(
      new BuilderScopeError(
        'body',
        undefined,
        `builder: \`${APPEND[kind].method}\` on the builder of the kernel body (body) after ` +
          "defineKernel returned: a block's builder appends only while its callback runs",
      ),
    );
    expect(builder.statements).toHaveLength(1);
  });
});

describe('correct nesting', () => {
  it('builds every statement kind in place', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      const id = b.let('id', b.localId());
      const [x0, x1] = b.loadVector('data', ir.mul(id, ir.u32(2)), ['x0', 'x1']) as [
        VarExpr,
        VarExpr,
      ];
      const sum = b.let('sum', ir.add(x0, x1));
      b.for('i', range, (loop, i) => {
        loop.assign(sum, ir.add(sum, ir.f32(1)));
        loop.if(
          ir.lt(i, ir.u32(2)),
          (then) => then.store('out', id, sum),
          (otherwise) => otherwise.store('out', id, x0),
        );
      });
      b.store('tile', id, sum);
      b.barrier();
      const shuffled = b.shuffle('xor', 'shuffled', sum, ir.u32(1));
      b.store('out', id, b.reduce('add', 'total', shuffled));
    });
    const id: VarExpr = { op: 'var', type: 'u32', name: 'id' };
    const sum: VarExpr = { op: 'var', type: 'f32', name: 'sum' };
    const i: VarExpr = { op: 'var', type: 'u32', name: 'i' };
    const expected: Stmt[] = [
      { op: 'let', name: 'id', type: 'u32', value: ir.builtin('local_id') },
      {
        op: 'load_vector',
        names: ['x0', 'x1'],
        type: 'f32',
        memory: 'data',
        index: ir.mul(id, ir.u32(2)),
      },
      {
        op: 'let',
        name: 'sum',
        type: 'f32',
        value: ir.add(
          { op: 'var', type: 'f32', name: 'x0' },
          { op: 'var', type: 'f32', name: 'x1' },
        ),
      },
      {
        op: 'for',
        name: 'i',
        type: 'u32',
        ...range,
        body: [
          { op: 'assign', name: 'sum', value: ir.add(sum, ir.f32(1)) },
          {
            op: 'if',
            condition: ir.lt(i, ir.u32(2)),
            then: [{ op: 'store', memory: 'out', index: id, value: sum }],
            else: [
              {
                op: 'store',
                memory: 'out',
                index: id,
                value: { op: 'var', type: 'f32', name: 'x0' },
              },
            ],
          },
        ],
      },
      { op: 'store', memory: 'tile', index: id, value: sum },
      { op: 'barrier' },
      { op: 'shuffle', mode: 'xor', name: 'shuffled', type: 'f32', value: sum, lane: ir.u32(1) },
      {
        op: 'reduce',
        reduction: 'add',
        name: 'total',
        type: 'f32',
        value: { op: 'var', type: 'f32', name: 'shuffled' },
      },
      {
        op: 'store',
        memory: 'out',
        index: id,
        value: { op: 'var', type: 'f32', name: 'total' },
      },
    ];
    expect(JSON.parse(JSON.stringify(spec.body))).toEqual(expected);
  });

  it('leaves the outer builder usable once a misuse was caught', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      b.for('i', range, (loop, i) => {
        expect(() => b.barrier()).toThrow(BuilderScopeError);
        loop.store('out', i, ir.f32(1));
      });
      b.barrier();
    });
    expect(spec.body.map((statement) => statement.op)).toEqual(['for', 'barrier']);
  });

  it('closes a nested block whose callback threw', () => {
    let captured: BodyBuilder | undefined;
    const builder = new BodyBuilder(DECLARATIONS);
    expect(() =>
      builder.for('i', range, (loop) => {
        captured = loop;
        throw new Error('inside');
      }),
    ).toThrow('inside');
    builder.barrier();
    expect(() => captured?.barrier()).toThrow(BuilderScopeError);
    expect(builder.statements).toEqual([{ op: 'barrier' }]);
  });
});
