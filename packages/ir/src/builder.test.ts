import { describe, expect, it } from 'vitest';
import type { Stmt, StmtOp, VarExpr } from './body.js';
import { BodyBuilder, defineKernel, type KernelDeclarations } from './builder.js';
import { BuilderScopeError } from './errors.js';
import * as ir from './expressions.js';
import { interpret } from './interpreter/run.js';
import { bindConstants } from './bind-constants.js';

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

/** The statements `build` appends to a fresh body builder (not validated). */
function built(build: (b: BodyBuilder) => void): readonly Stmt[] {
  const builder = new BodyBuilder(DECLARATIONS);
  build(builder);
  return builder.statements;
}

describe('one insertion point: any builder appends to the innermost open block', () => {
  it.each(CASES)('%s > %s through the outer builder lands in the block', (opener, kind) => {
    const { open } = OPENERS[opener];
    const { append } = APPEND[kind];
    const outer = built((b) => {
      b.let('acc', ir.f32(0));
      open(b, () => append(b));
    });
    const own = built((b) => {
      b.let('acc', ir.f32(0));
      open(b, (nested) => append(nested));
    });
    expect(outer).toEqual(own);
    expect(outer).toHaveLength(2);
    const block = outer[1];
    const inside = block?.op === 'for' ? block.body : block?.op === 'if' ? [...block.then, ...block.else] : []; // prettier-ignore
    expect(inside.map((statement) => statement.op)).toEqual([kind]);
  });

  it('puts a statement made through a middle builder in the innermost block', () => {
    const body = built((b) => {
      b.for('i', range, (loop) => {
        loop.let('acc', ir.f32(0));
        loop.if(
          ir.bool(true),
          () => undefined,
          () => loop.store('out', ir.u32(0), ir.f32(1)),
        );
      });
    });
    const loop = body[0];
    const branch = loop?.op === 'for' ? loop.body[1] : undefined;
    expect(branch?.op === 'if' ? branch.else.map((statement) => statement.op) : []).toEqual([
      'store',
    ]);
  });

  it('builds the issue #11 example as written: the store inside the loop', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      const sum = b.let('sum', ir.f32(0));
      b.for('i', range, (_, i) => {
        b.assign(sum, ir.add(sum, b.load('data', i)));
        b.store('out', i, sum);
      });
    });
    const loop = spec.body[1];
    expect(loop?.op === 'for' ? loop.body.map((statement) => statement.op) : []).toEqual([
      'assign',
      'store',
    ]);
  });

  it('appends after a block once its callback returned, and after one that threw', () => {
    const body = built((b) => {
      expect(() =>
        b.for('i', range, () => {
          b.barrier();
          throw new Error('inside');
        }),
      ).toThrow('inside');
      b.if(ir.bool(true), () => b.barrier());
      b.store('out', ir.u32(0), ir.f32(1));
    });
    expect(body.map((statement) => statement.op)).toEqual(['if', 'store']);
  });
});

describe('names are hints the builder makes unique in the body', () => {
  it('suffixes a name already declared, by any statement, in any block', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      const first = b.let('q', ir.f32(1));
      const second = b.let('q', ir.f32(2));
      b.for('i', range, (_, i) => {
        const third = b.let('q', ir.add(first, second));
        const [v, w] = b.loadVector('data', ir.mul(i, 2), ['q', 'q_1']);
        b.store('out', i, ir.add(third, ir.add(v, w)));
      });
      b.for('i', range, (_, i) => b.store('out', i, b.reduce('add', 'q', b.shuffle('xor', 'q', first, 1)))); // prettier-ignore
      b.mma('m16n8k16', ['q', 'd', 'd', 'd'], { a: [0, 0, 0, 0], b: [0, 0], c: [0, 0, 0, 0] });
    });
    const names: string[] = [];
    const visit = (statements: readonly Stmt[]): void => {
      for (const statement of statements)
        if (statement.op === 'load_vector' || statement.op === 'mma')
          names.push(...statement.names);
        else if (statement.op === 'for') {
          names.push(statement.name);
          visit(statement.body);
        } else if ('name' in statement && statement.op !== 'assign') names.push(statement.name);
    };
    visit(spec.body);
    expect(names).toEqual([
      'q', 'q_1', 'i', 'q_2', 'q_3', 'q_1_1', 'i_1', 'q_4', 'q_5', 'q_6', 'd', 'd_1', 'd_2',
    ]); // prettier-ignore
  });

  it('keeps locals off the names of buffers, params, shared arrays and knobs', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      const data = b.let('data', ir.f32(1));
      const count = b.let('count', b.param('count'));
      const tile = b.let({ tile: data });
      b.store('out', count, tile.tile);
    });
    expect(
      spec.body.flatMap((statement) => (statement.op === 'let' ? [statement.name] : [])),
    ).toEqual(['data_1', 'count_1', 'tile_1']);
  });

  it('keeps locals off PTX and WGSL reserved words, which validation would reject', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      const from = b.let('from', ir.f32(1));
      const meta = b.let('meta', from);
      b.for('let', range, (_, i) => b.store('out', i, meta));
    });
    const names = spec.body.flatMap((statement) =>
      statement.op === 'let' || statement.op === 'for' ? [statement.name] : [],
    );
    expect(names).toEqual(['from_1', 'meta_1', 'let_1']);
  });
});

/** DECLARATIONS with literal names, so that b.memory and b.param are typed by them. */
const LITERAL = {
  ...DECLARATIONS,
  buffers: [
    { group: 0, binding: 0, name: 'data', element: 'f32', access: 'read' },
    { group: 0, binding: 1, name: 'out', element: 'f32', access: 'read_write' },
  ],
  shared: [{ name: 'tile', element: 'f32', length: '64' }],
} as const;

describe('memory handles', () => {
  it('read and write as load and store do', () => {
    const through = (use: 'handles' | 'names') =>
      defineKernel(LITERAL, (b) => {
        const id = b.localId();
        if (use === 'handles') {
          const { data, out, tile } = b.memory;
          tile.store(id, data.at(id));
          b.barrier();
          out.store(id, ir.add(tile.at(id), 1));
          expect([data.name, out.name, tile.name]).toEqual(['data', 'out', 'tile']);
        } else {
          b.store('tile', id, b.load('data', id));
          b.barrier();
          b.store('out', id, ir.add(b.load('tile', id), 1));
        }
      });
    expect(through('handles').body).toEqual(through('names').body);
  });

  it('type a handle by its element', () => {
    defineKernel(
      {
        ...DECLARATIONS,
        buffers: [
          { group: 0, binding: 0, name: 'words', element: 'u32', access: 'read' },
          { group: 0, binding: 1, name: 'out', element: 'f32', access: 'read_write' },
        ],
        shared: [],
      },
      (b) => {
        const { words, out } = b.memory;
        const word = words.at(0);
        // Never called: what matters is that the compiler rejects it.
        // @ts-expect-error a u32 word is not an f32 element
        const wrong = () => out.store(0, word);
        out.store(0, ir.f32(1));
        expect(wrong).toBeTypeOf('function');
      },
    );
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
    expect(error.path).toBe('body[0].then');
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

describe('blockReduce', () => {
  /** A 96-thread workgroup (3 warps) storing blockReduce(reduction, data[id]) to out[id]. */
  const reduceKernel = (reduction: 'add' | 'min' | 'max') =>
    defineKernel(
      {
        ...LITERAL,
        shared: [{ name: 'partials', element: 'f32', length: '4' }],
        launch: { workgroupSize: '96', grid: ['1', '1', '1'] },
      },
      (b) => {
        const { data, out } = b.memory;
        const id = b.localId();
        out.store(id, b.blockReduce(reduction, data.at(id), 'partials', 3));
      },
    );

  it.each(['add', 'min', 'max'] as const)('gives every thread the workgroup %s', (reduction) => {
    const data = Float32Array.from({ length: 96 }, (_, i) => ((i * 37) % 96) - 40.5);
    const out = new Float32Array(96);
    interpret(reduceKernel(reduction), { params: { count: 1 }, buffers: { data, out } });
    const expected = { add: 96 * 7, min: -40.5, max: 54.5 }[reduction];
    expect([...new Set(out)]).toEqual([expected]);
  });

  it('is the warp reduction, one store a warp, a barrier and a reduction of the partials', () => {
    const body = reduceKernel('add').body;
    expect(body.map((statement) => statement.op)).toEqual([
      'reduce', 'if', 'barrier', 'let', 'if', 'reduce', 'store',
    ]); // prettier-ignore
    expect(body.flatMap((statement) => ('name' in statement ? [statement.name] : []))).toEqual([
      'warp_sum',
      'part',
      'total',
    ]);
    const maxBody = reduceKernel('max').body;
    expect(maxBody.map((statement) => statement.op)).toEqual([
      'reduce', 'if', 'barrier', 'let', 'reduce', 'store',
    ]); // prettier-ignore
  });
});

describe('specialize', () => {
  const variants = defineKernel(
    {
      ...LITERAL,
      schedule: [
        {
          name: 'width',
          description: 'values a thread takes',
          default: 1,
          bounds: { ptx: { min: 1, max: 4, powerOfTwo: true } },
        },
      ],
    },
    (b) => {
      const { out } = b.memory;
      b.specialize('width', [1, 2, 4], (width) => {
        const v = b.let('v', ir.f32(width));
        for (let k = 0; k < width; k++) out.store(k, v);
      });
    },
  );

  it('keeps one variant a schedule, its locals named by hint', () => {
    const bound = (width: number) =>
      JSON.parse(JSON.stringify(bindConstants(variants.body, { width }, 64)));
    const variant = (name: string, width: number) => [
      { op: 'let', name, type: 'f32', value: ir.f32(width) },
      ...Array.from({ length: width }, (_, k) => ({
        op: 'store',
        memory: 'out',
        index: ir.u32(k),
        value: { op: 'var', type: 'f32', name },
      })),
    ];
    expect(bound(1)).toEqual(variant('v', 1));
    expect(bound(2)).toEqual(variant('v_1', 2));
    expect(bound(4)).toEqual(variant('v_2', 4));
  });

  it('chains the variants under tests of the knob, the last one in the final else', () => {
    const width = { op: 'schedule', type: 'u32', name: 'width' } as const;
    const [first] = variants.body;
    expect(first).toMatchObject({ op: 'if', condition: ir.eq(width, 1) });
    const second = first?.op === 'if' ? first.else[0] : undefined;
    expect(second).toMatchObject({ op: 'if', condition: ir.eq(width, 2) });
    const last = second?.op === 'if' ? second.else : [];
    expect(last.map((statement) => statement.op)).toEqual(['let', 'store', 'store', 'store', 'store']); // prettier-ignore
  });
});
