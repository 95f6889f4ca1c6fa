import { describe, expect, it } from 'vitest';
import type { Expr, Stmt } from '../body.js';
import { defineKernel, type BodyBuilder, type KernelDeclarations } from '../builder.js';
import { ExecutionError, ValidationError } from '../errors.js';
import * as ir from '../expressions.js';
import { f16Bits, f16FromBits } from '../f16.js';
import { getKernel } from '../kernels/catalog.js';
import { normalizedMse } from '../kernels/catalog-kernel.js';
import { resolveSchedule } from '../schedule.js';
import type { KernelSpec } from '../spec.js';
import type { ElementType } from '../types.js';
import { validateSpec } from '../validate.js';
import { allocateElements, type ElementArray } from './memory.js';
import { interpret } from './run.js';

const { u32, i32, f32, f16 } = ir;
// Zero that is not a constant (local id 0 of a one-thread kernel): the validator rejects faults of
// constant expressions, since Tint evaluates them at compile time, so run-time faults need operands
// known only when the kernel runs.
const runtimeZero = ir.builtin('local_id');
const runtimeZeroF32 = ir.convert('f32', runtimeZero);

const BASE: KernelDeclarations = {
  id: 'unit',
  semanticVersion: 1,
  entryPoint: 'unit',
  description: 'interpreter unit test',
  buffers: [{ group: 0, binding: 0, name: 'out', element: 'u32', access: 'read_write' }],
  params: [],
  shared: [],
  schedule: [],
  launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
};

function kernel(overrides: Partial<KernelDeclarations>, build: (b: BodyBuilder) => void) {
  return defineKernel({ ...BASE, ...overrides }, build);
}

/** A spec that skips validation: for faults the validator would reject up front. */
function rawSpec(overrides: Partial<KernelDeclarations>, body: readonly Stmt[]): KernelSpec {
  return { ...BASE, ...overrides, body } as KernelSpec;
}

function run(spec: KernelSpec, length: number, params: Record<string, number> = {}): Uint32Array {
  const out = new Uint32Array(length);
  interpret(spec, { params, buffers: { out } });
  return out;
}

/** Evaluates `expression` in a one-thread kernel and returns the stored result (bool as 1/0). */
function evaluate(expression: Expr): number {
  const element: ElementType = expression.type === 'bool' ? 'u32' : expression.type;
  const spec = kernel(
    {
      buffers: [{ group: 0, binding: 0, name: 'out', element, access: 'read_write' }],
      launch: { workgroupSize: '1', grid: ['1', '1', '1'] },
    },
    (b) =>
      b.store(
        'out',
        u32(0),
        expression.type === 'bool' ? ir.select(expression, u32(1), u32(0)) : expression,
      ),
  );
  const out: ElementArray = allocateElements(element, 1);
  interpret(spec, { params: {}, buffers: { out } });
  const raw = out[0] as number;
  return element === 'f16' ? f16FromBits(raw) : raw;
}

describe('interpreter on catalog kernels', () => {
  it('affine-f32 with a grid smaller than n covers every element through its grid-stride loop', () => {
    const affine = getKernel('affine-f32');
    const n = 5000;
    const x = Float32Array.from({ length: n }, (_, index) => index - 2500);
    const y = new Float32Array(n);
    const result = interpret(affine.spec, {
      params: affine.params({ n }),
      buffers: { x, y },
      grid: [3, 1, 1],
    });
    expect(result).toEqual({ workgroups: 3, threads: 768, barriers: 0 });
    const expected = affine.reference({ x }, affine.params({ n }))['y'] ?? [];
    expect(normalizedMse(y, expected)).toBe(0);
  });

  it('reports workgroups, threads and barriers', () => {
    const rms = getKernel('rmsnorm');
    const shape = { rows: 3, n_embd: 64 };
    const lengths = rms.bufferLengths(shape);
    const buffers = {
      x: new Float32Array(lengths['x'] ?? 0).fill(2),
      w: new Float32Array(lengths['w'] ?? 0).fill(1),
      y: new Float32Array(lengths['y'] ?? 0),
    };
    const schedule = resolveSchedule(rms.spec, 'ptx', { workgroupSize: 64 });
    const result = interpret(rms.spec, { schedule, params: rms.params(shape), buffers });
    expect(result).toEqual({ workgroups: 3, threads: 192, barriers: 3 });
    // x = 2 everywhere: rms = 2, so y = 2 * 1 / sqrt(4 + eps) ~ 1.
    for (const value of buffers.y) expect(value).toBeCloseTo(1, 6);
  });

  it('rmsnorm workgroups past `rows` skip the row (the guard is uniform, so no barrier runs there)', () => {
    const rms = getKernel('rmsnorm');
    const shape = { rows: 2, n_embd: 40 };
    const lengths = rms.bufferLengths(shape);
    const x = Float32Array.from({ length: lengths['x'] ?? 0 }, (_, i) => Math.sin(i) * 3);
    const w = Float32Array.from({ length: lengths['w'] ?? 0 }, (_, i) => Math.cos(i));
    const y = new Float32Array(lengths['y'] ?? 0);
    const params = rms.params(shape);
    const result = interpret(rms.spec, { params, buffers: { x, w, y }, grid: [5, 1, 1] });
    expect(result.barriers).toBe(2);
    expect(normalizedMse(y, rms.reference({ x, w }, params)['y'] ?? [])).toBeLessThan(1e-12);
  });

  it('rejects missing params, missing buffers and mistyped buffers with ValidationError', () => {
    const affine = getKernel('affine-f32');
    const x = new Float32Array(4);
    const y = new Float32Array(4);
    const missingParam = (): unknown =>
      interpret(affine.spec, { params: { n: 4, scale: 1 }, buffers: { x, y } });
    expect(missingParam).toThrow(ValidationError);
    expect(missingParam).toThrow(/params\.bias/);
    const nanParam = (): unknown =>
      interpret(affine.spec, { params: { n: 4, scale: Number.NaN, bias: 0 }, buffers: { x, y } });
    expect(nanParam).toThrow(/params\.scale/);
    const missingBuffer = (): unknown =>
      interpret(affine.spec, { params: affine.params({ n: 4 }), buffers: { x } });
    expect(missingBuffer).toThrow(/buffers\.y/);
    const wrongType = (): unknown =>
      interpret(affine.spec, {
        params: affine.params({ n: 4 }),
        buffers: { x: new Uint32Array(4), y },
      });
    expect(wrongType).toThrow(ValidationError);
    expect(wrongType).toThrow(/Float32Array/);
  });
});

describe('interpreter faults', () => {
  it('an out-of-bounds load is an ExecutionError', () => {
    const affine = getKernel('affine-f32');
    const fault = (): unknown =>
      interpret(affine.spec, {
        params: affine.params({ n: 10 }),
        buffers: { x: new Float32Array(5), y: new Float32Array(10) },
      });
    expect(fault).toThrow(ExecutionError);
    expect(fault).toThrow(/out-of-bounds read of 'x' at element 5 \(length 5\)/);
  });

  it('an out-of-bounds store is an ExecutionError', () => {
    const affine = getKernel('affine-f32');
    const fault = (): unknown =>
      interpret(affine.spec, {
        params: affine.params({ n: 10 }),
        buffers: { x: new Float32Array(10), y: new Float32Array(9) },
      });
    expect(fault).toThrow(ExecutionError);
    expect(fault).toThrow(/out-of-bounds write of 'y' at element 9/);
  });

  it('an out-of-bounds shared-memory access is an ExecutionError', () => {
    const spec = kernel({ shared: [{ name: 'tile', element: 'f32', length: '16' }] }, (b) =>
      b.store('tile', b.localId(), f32(1)),
    );
    expect(() => run(spec, 1)).toThrow(ExecutionError);
    expect(() => run(spec, 1)).toThrow(/out-of-bounds write of 'tile' at element 16/);
  });

  const localId = ir.builtin('local_id');
  const laneId = ir.builtin('lane_id');

  it('a barrier only some threads reach is an ExecutionError (the validator rejects it too)', () => {
    const spec = rawSpec({}, [
      { op: 'if', condition: ir.lt(localId, u32(16)), then: [{ op: 'barrier' }], else: [] },
    ]);
    expect(() => validateSpec(spec)).toThrow(ValidationError);
    expect(() => run(spec, 1)).toThrow(ExecutionError);
    expect(() => run(spec, 1)).toThrow(/divergent barrier/);
  });

  it('threads waiting at two different barriers deadlock: an ExecutionError', () => {
    const spec = rawSpec({}, [
      {
        op: 'if',
        condition: ir.lt(localId, u32(16)),
        then: [{ op: 'barrier' }],
        else: [{ op: 'barrier' }],
      },
    ]);
    expect(() => validateSpec(spec)).toThrow(ValidationError);
    expect(() => run(spec, 1)).toThrow(/deadlock/);
  });

  it('a warp reduction only some lanes reach is an ExecutionError', () => {
    const spec = rawSpec({}, [
      {
        op: 'if',
        condition: ir.lt(laneId, u32(16)),
        then: [{ op: 'reduce', reduction: 'add', name: 'total', type: 'u32', value: u32(1) }],
        else: [],
      },
    ]);
    expect(() => validateSpec(spec)).toThrow(/not uniform across the warp/);
    expect(() => run(spec, 1)).toThrow(ExecutionError);
  });

  it('a warp operation in a partial warp is an ExecutionError', () => {
    const spec = kernel({ launch: { workgroupSize: '16', grid: ['1', '1', '1'] } }, (b) => {
      b.reduce('add', 'total', u32(1));
    });
    expect(() => run(spec, 1)).toThrow(/partial warp of 16 lanes/);
  });

  it('reading a local before it is set is an ExecutionError', () => {
    const spec = rawSpec({}, [
      {
        op: 'store',
        memory: 'out',
        index: u32(0),
        value: { op: 'var', type: 'u32', name: 'nope' },
      },
    ]);
    expect(() => run(spec, 1)).toThrow(/local 'nope' read before it is set/);
  });

  it('a loop whose step is zero at run time is an ExecutionError', () => {
    const spec = kernel({ params: [{ name: 'step', type: 'u32' }] }, (b) => {
      b.for('i', { start: u32(0), end: u32(4), step: b.param('step') }, (body, i) =>
        body.store('out', i, u32(1)),
      );
    });
    expect(() => run(spec, 4, { step: 0 })).toThrow(/step 0/);
    expect([...run(spec, 4, { step: 2 })]).toEqual([1, 0, 1, 0]);
  });

  it('integer division by zero and shifts by 32 or more are ExecutionErrors', () => {
    expect(() => evaluate(ir.div(u32(1), runtimeZero))).toThrow(ExecutionError);
    expect(() => evaluate(ir.rem(i32(1), ir.convert('i32', runtimeZero)))).toThrow(
      /remainder by zero/,
    );
    expect(() => evaluate(ir.shl(u32(1), ir.add(runtimeZero, u32(32))))).toThrow(/shift by 32/);
  });
});

describe('interpreter: workgroup semantics', () => {
  it('provides local, workgroup, lane and warp ids and grid sizes', () => {
    const fields = 9;
    const spec = kernel({ launch: { workgroupSize: '64', grid: ['2', '3', '1'] } }, (b) => {
      const linear = ir.add(
        ir.mul(
          ir.add(ir.mul(b.workgroupId('y'), b.numWorkgroups('x')), b.workgroupId('x')),
          b.workgroupSize(),
        ),
        b.localId(),
      );
      const base = b.let('base', ir.mul(linear, u32(fields)));
      const values = [
        b.localId(),
        b.workgroupId('x'),
        b.workgroupId('y'),
        b.workgroupId('z'),
        b.numWorkgroups('x'),
        b.numWorkgroups('y'),
        b.workgroupSize(),
        b.laneId(),
        b.warpId(),
      ];
      values.forEach((value, k) => b.store('out', ir.add(base, u32(k)), value));
    });
    const out = run(spec, 6 * 64 * fields);
    for (let wy = 0; wy < 3; wy++) {
      for (let wx = 0; wx < 2; wx++) {
        for (let local = 0; local < 64; local++) {
          const base = ((wy * 2 + wx) * 64 + local) * fields;
          expect([...out.subarray(base, base + fields)]).toEqual([
            local,
            wx,
            wy,
            0,
            2,
            3,
            64,
            local % 32,
            Math.floor(local / 32),
          ]);
        }
      }
    }
  });

  it('a barrier makes every thread see the shared memory the others wrote before it', () => {
    const spec = kernel(
      {
        shared: [{ name: 'tile', element: 'u32', length: '64' }],
        launch: { workgroupSize: '64', grid: ['1', '1', '1'] },
      },
      (b) => {
        b.store('tile', b.localId(), ir.mul(b.localId(), u32(3)));
        b.barrier();
        // Read a value written by a thread of the other warp.
        const neighbour = ir.rem(ir.add(b.localId(), u32(37)), u32(64));
        b.store('out', b.localId(), b.load('tile', neighbour));
      },
    );
    const out = run(spec, 64);
    expect([...out]).toEqual(Array.from({ length: 64 }, (_, i) => ((i + 37) % 64) * 3));
  });

  it('store_vector writes its values to consecutive elements, each evaluated before any write', () => {
    const spec = kernel({ launch: { workgroupSize: '2', grid: ['1', '1', '1'] } }, (b) => {
      const id = b.localId();
      b.store('out', ir.add(ir.mul(id, u32(4)), u32(1)), u32(9));
      // The third value reads the element the second overwrites: it must see the old 9.
      const at = ir.mul(id, u32(4));
      b.storeVector('out', at, [id, ir.add(id, u32(10)), b.load('out', ir.add(at, u32(1))), 7]);
      b.storeVector('out', ir.add(u32(8), ir.mul(id, u32(2))), [ir.mul(id, u32(3)), 5]);
    });
    expect([...run(spec, 12)]).toEqual([0, 10, 9, 7, 1, 11, 9, 7, 0, 5, 3, 5]);
  });

  it('a store_vector running past its buffer is an ExecutionError', () => {
    const spec = kernel({ launch: { workgroupSize: '1', grid: ['1', '1', '1'] } }, (b) => {
      b.storeVector('out', u32(4), [u32(1), u32(2), u32(3), u32(4)]);
    });
    expect(() => run(spec, 6)).toThrow(/out-of-bounds write of 'out' at element 6/);
  });

  it('shared memory is private to each workgroup and starts zeroed', () => {
    const spec = kernel(
      {
        shared: [{ name: 'tile', element: 'u32', length: '1' }],
        launch: { workgroupSize: '32', grid: ['3', '1', '1'] },
      },
      (b) => {
        b.if(ir.eq(b.localId(), u32(0)), (first) => {
          const before = first.let('before', first.load('tile', u32(0)));
          first.store('tile', u32(0), ir.add(before, ir.add(first.workgroupId('x'), u32(1))));
          first.store('out', first.workgroupId('x'), first.load('tile', u32(0)));
        });
      },
    );
    expect([...run(spec, 3)]).toEqual([1, 2, 3]);
  });

  it('a u32 loop stops when its index would wrap past 2^32', () => {
    const spec = kernel({ launch: { workgroupSize: '1', grid: ['1', '1', '1'] } }, (b) => {
      const count = b.let('count', u32(0));
      b.for('i', { start: u32(0xfffffff0), end: u32(0xffffffff), step: u32(8) }, (body, index) => {
        body.assign(count, ir.add(count, u32(1)));
        body.store('out', u32(1), index);
      });
      b.store('out', u32(0), count);
    });
    expect([...run(spec, 2)]).toEqual([2, 0xfffffff8]);
  });
});

describe('interpreter: warp shuffles', () => {
  /** Two warps; lane L of warp W holds 1000 + 10 * local_id and shuffles with argument `lane`. */
  function shuffled(mode: 'xor' | 'down' | 'up' | 'idx', lane: (b: BodyBuilder) => Expr) {
    const spec = kernel({ launch: { workgroupSize: '64', grid: ['1', '1', '1'] } }, (b) => {
      const value = ir.add(u32(1000), ir.mul(b.localId(), u32(10)));
      const got = b.shuffle(mode, 'got', value, lane(b));
      b.store('out', b.localId(), got);
    });
    return [...run(spec, 64)];
  }
  const own = (local: number): number => 1000 + 10 * local;
  /** Expected result when lane `lane` of each warp reads lane `source(lane)` (own value outside the warp). */
  const expected = (source: (lane: number) => number): number[] =>
    Array.from({ length: 64 }, (_, local) => {
      const lane = local % 32;
      const from = source(lane);
      return from >= 0 && from < 32 ? own(local - lane + from) : own(local);
    });

  it('xor reads lane ^ m within the warp', () => {
    expect(shuffled('xor', () => u32(1))).toEqual(expected((lane) => lane ^ 1));
    expect(shuffled('xor', () => u32(16))).toEqual(expected((lane) => lane ^ 16));
  });

  it('xor with a mask reaching outside the warp keeps the own value', () => {
    expect(shuffled('xor', () => u32(33))).toEqual(expected(() => -1));
  });

  it('down reads lane + d; lanes past the end keep their own value', () => {
    const result = shuffled('down', () => u32(3));
    expect(result).toEqual(expected((lane) => lane + 3));
    expect(result[31]).toBe(own(31));
    expect(result[28]).toBe(own(31));
  });

  it('up reads lane - d; lanes before the start keep their own value', () => {
    const result = shuffled('up', () => u32(5));
    expect(result).toEqual(expected((lane) => lane - 5));
    expect(result[32]).toBe(own(32));
    expect(result[37]).toBe(own(32));
  });

  it('idx reads the given lane, which may differ per lane; out of range keeps the own value', () => {
    expect(shuffled('idx', () => u32(5))).toEqual(expected(() => 5));
    expect(shuffled('idx', (b) => ir.sub(u32(31), b.laneId()))).toEqual(
      expected((lane) => 31 - lane),
    );
    expect(shuffled('idx', (b) => ir.add(b.laneId(), u32(20)))).toEqual(
      expected((lane) => lane + 20),
    );
  });

  it('shuffles f32 values unchanged', () => {
    const spec = kernel(
      {
        buffers: [{ group: 0, binding: 0, name: 'out', element: 'f32', access: 'read_write' }],
      },
      (b) => {
        const value = ir.div(f32(1), ir.convert('f32', ir.add(b.laneId(), u32(1))));
        b.store('out', b.localId(), b.shuffle('xor', 'got', value, u32(31)));
      },
    );
    const out = new Float32Array(32);
    interpret(spec, { params: {}, buffers: { out } });
    expect([...out]).toEqual(Array.from({ length: 32 }, (_, lane) => Math.fround(1 / (32 - lane))));
  });
});

describe('interpreter: warp mma', () => {
  // Small integers, so every sum is exact: A[r][k] = (r + 2k) % 5 - 2, B[k][n] = (3k + n) % 7 - 3.
  const aAt = (row: number, k: number): number => ((row + 2 * k) % 5) - 2;
  const bAt = (k: number, n: number): number => ((3 * k + n) % 7) - 3;
  const halves = (low: number, high: number): number => f16Bits(low) | (f16Bits(high) << 16);

  it('computes D = A·B + C in the PTX m16n8k16 fragment layout, lane by lane', () => {
    // The layout written out from the PTX ISA's figures (g = lane >> 2, t = lane % 4).
    const a = new Uint32Array(128);
    const b = new Uint32Array(64);
    for (let lane = 0; lane < 32; lane++) {
      const [g, t] = [lane >> 2, lane % 4];
      const rows = [g, g + 8, g, g + 8];
      const ks = [2 * t, 2 * t, 2 * t + 8, 2 * t + 8];
      for (let r = 0; r < 4; r++)
        a[lane * 4 + r] = halves(
          aAt(rows[r] ?? 0, ks[r] ?? 0),
          aAt(rows[r] ?? 0, (ks[r] ?? 0) + 1),
        );
      for (let r = 0; r < 2; r++)
        b[lane * 2 + r] = halves(bAt(2 * t + 8 * r, g), bAt(2 * t + 8 * r + 1, g));
    }
    const spec = kernel(
      {
        buffers: [
          { group: 0, binding: 0, name: 'a', element: 'u32', access: 'read' },
          { group: 0, binding: 1, name: 'b', element: 'u32', access: 'read' },
          { group: 0, binding: 2, name: 'out', element: 'f32', access: 'read_write' },
        ],
      },
      (k) => {
        const lane = k.laneId();
        const word = (memory: 'a' | 'b', width: number, r: number) =>
          k.load(memory, ir.add(ir.mul(lane, u32(width)), u32(r))) as Expr<'u32'>;
        const c = (i: number) => ir.convert('f32', ir.add(ir.mul(lane, u32(4)), u32(i)));
        const d = k.mma('m16n8k16', ['d0', 'd1', 'd2', 'd3'], {
          a: [word('a', 4, 0), word('a', 4, 1), word('a', 4, 2), word('a', 4, 3)],
          b: [word('b', 2, 0), word('b', 2, 1)],
          c: [c(0), c(1), c(2), c(3)],
        });
        d.forEach((value, i) => k.store('out', ir.add(ir.mul(lane, u32(4)), u32(i)), value));
      },
    );
    const out = new Float32Array(128);
    interpret(spec, { params: {}, buffers: { a, b, out } });
    const expected = Array.from({ length: 128 }, (_, at) => {
      const [lane, i] = [at >> 2, at % 4];
      const [row, col] = [(lane >> 2) + 8 * (i >> 1), 2 * (lane % 4) + (i & 1)];
      let sum = at;
      for (let kk = 0; kk < 16; kk++) sum += aAt(row, kk) * bAt(kk, col);
      return sum;
    });
    expect([...out]).toEqual(expected);
  });

  it('an mma only some lanes reach is rejected, and an ExecutionError when run anyway', () => {
    const mma: Stmt = { op: 'mma', shape: 'm16n8k16', names: ['d0', 'd1', 'd2', 'd3'], a: [u32(0), u32(0), u32(0), u32(0)], b: [u32(0), u32(0)], c: [f32(0), f32(0), f32(0), f32(0)] }; // prettier-ignore
    const spec = rawSpec({}, [
      { op: 'if', condition: ir.lt(ir.builtin('lane_id'), u32(16)), then: [mma], else: [] },
    ]);
    expect(() => validateSpec(spec)).toThrow(
      /body\[0\]\.then\[0\]: mma in control flow that is not uniform/,
    );
    expect(() => run(spec, 1)).toThrow(/deadlock.*warp mma/);
  });
});

describe('interpreter: warp reductions', () => {
  function reduced(
    reduction: 'add' | 'min' | 'max',
    element: ElementType,
    value: (b: BodyBuilder) => Expr,
  ): number[] {
    const spec = kernel(
      {
        buffers: [{ group: 0, binding: 0, name: 'out', element, access: 'read_write' }],
        launch: { workgroupSize: '64', grid: ['1', '1', '1'] },
      },
      (b) => b.store('out', b.localId(), b.reduce(reduction, 'r', value(b))),
    );
    const out = allocateElements(element, 64);
    interpret(spec, { params: {}, buffers: { out } });
    return [...out];
  }
  const perWarp = (first: number, second: number): number[] => [
    ...new Array<number>(32).fill(first),
    ...new Array<number>(32).fill(second),
  ];

  it('add sums the 32 lanes of each warp into every lane', () => {
    expect(reduced('add', 'u32', (b) => b.localId())).toEqual(perWarp(496, 496 + 32 * 32));
  });

  it('min and max over a permutation of the lanes', () => {
    // (lane * 7) mod 32 is a permutation of 0..31; shift it to -16..15 as i32.
    const value = (b: BodyBuilder): Expr =>
      ir.sub(
        ir.convert('i32', ir.rem(ir.mul(b.localId(), u32(7)), u32(32))),
        ir.add(i32(16), ir.convert('i32', b.warpId())),
      );
    expect(reduced('min', 'i32', value)).toEqual(perWarp(-16, -17));
    expect(reduced('max', 'i32', value)).toEqual(perWarp(15, 14));
    const float = (b: BodyBuilder): Expr =>
      ir.sub(ir.mul(ir.convert('f32', b.localId()), f32(-0.5)), f32(1));
    expect(reduced('min', 'f32', float)).toEqual(perWarp(-16.5, -32.5));
    expect(reduced('max', 'f32', float)).toEqual(perWarp(-1, -17));
  });

  it('f32 add rounds after every butterfly step (xor 16, 8, 4, 2, 1)', () => {
    // Lane 0 holds 2^24, the others 1: exact 2^24 + 31; the butterfly in f32 gives 2^24 + 30.
    const value = (b: BodyBuilder): Expr =>
      ir.select(ir.eq(b.laneId(), u32(0)), f32(2 ** 24), f32(1));
    expect(reduced('add', 'f32', value)).toEqual(perWarp(2 ** 24 + 30, 2 ** 24 + 30));
  });

  it('u32 add wraps', () => {
    expect(reduced('add', 'u32', () => u32(0x10000000))).toEqual(perWarp(0, 0));
  });
});

describe('interpreter: scalar semantics', () => {
  it('u32 arithmetic wraps around', () => {
    expect(evaluate(ir.add(u32(0xffffffff), u32(1)))).toBe(0);
    expect(evaluate(ir.sub(u32(0), u32(1)))).toBe(0xffffffff);
    expect(evaluate(ir.mul(u32(0x10000), u32(0x10000)))).toBe(0);
    expect(evaluate(ir.mul(u32(0xffffffff), u32(0xffffffff)))).toBe(1);
    expect(evaluate(ir.div(u32(0xffffffff), u32(2)))).toBe(0x7fffffff);
    expect(evaluate(ir.not(u32(0)))).toBe(0xffffffff);
  });

  it('i32 arithmetic wraps and division truncates toward zero', () => {
    expect(evaluate(ir.add(i32(0x7fffffff), i32(1)))).toBe(-(2 ** 31));
    expect(evaluate(ir.div(i32(-7), i32(2)))).toBe(-3);
    expect(evaluate(ir.div(i32(7), i32(-2)))).toBe(-3);
    expect(evaluate(ir.rem(i32(-7), i32(2)))).toBe(-1);
    expect(evaluate(ir.rem(i32(7), i32(-2)))).toBe(1);
    expect(evaluate(ir.div(i32(-(2 ** 31)), i32(-1)))).toBe(-(2 ** 31));
    expect(evaluate(ir.neg(i32(-(2 ** 31))))).toBe(-(2 ** 31));
    expect(evaluate(ir.abs(i32(-5)))).toBe(5);
  });

  it('shifts: u32 logical, i32 arithmetic', () => {
    expect(evaluate(ir.shl(u32(1), u32(31)))).toBe(0x80000000);
    expect(evaluate(ir.shl(u32(0xffffffff), u32(4)))).toBe(0xfffffff0);
    expect(evaluate(ir.shr(u32(0x80000000), u32(31)))).toBe(1);
    expect(evaluate(ir.shr(i32(-8), u32(1)))).toBe(-4);
    expect(evaluate(ir.shl(i32(1), u32(31)))).toBe(-(2 ** 31));
  });

  it('bitwise and logical ops', () => {
    expect(evaluate(ir.and(u32(0xf0f0), u32(0xff00)))).toBe(0xf000);
    expect(evaluate(ir.or(u32(0xf0f0), u32(0x0f00)))).toBe(0xfff0);
    expect(evaluate(ir.xor(u32(0xffffffff), u32(1)))).toBe(0xfffffffe);
    expect(evaluate(ir.and(ir.bool(true), ir.bool(false)))).toBe(0);
    expect(evaluate(ir.or(ir.bool(true), ir.bool(false)))).toBe(1);
    expect(evaluate(ir.xor(ir.bool(true), ir.bool(true)))).toBe(0);
    expect(evaluate(ir.not(ir.bool(false)))).toBe(1);
  });

  it('f32 arithmetic rounds to f32 after every op', () => {
    // In doubles 0.1 + 0.2 != 0.3; in f32 the sum rounds to exactly f32(0.3).
    expect(evaluate(ir.eq(ir.add(f32(0.1), f32(0.2)), f32(0.3)))).toBe(1);
    expect(evaluate(ir.add(f32(0.1), f32(0.2)))).toBe(Math.fround(0.3));
    expect(evaluate(ir.sub(ir.add(f32(2 ** 24), f32(1)), f32(2 ** 24)))).toBe(0);
    expect(evaluate(ir.div(f32(1), f32(3)))).toBe(Math.fround(1 / 3));
    expect(evaluate(ir.sqrt(f32(2)))).toBe(Math.fround(Math.SQRT2));
    expect(evaluate(ir.rsqrt(f32(4)))).toBe(0.5);
    expect(evaluate(ir.rcp(f32(8)))).toBe(0.125);
    expect(evaluate(ir.exp2(f32(-3)))).toBe(0.125);
    expect(evaluate(ir.log2(f32(1024)))).toBe(10);
    expect(evaluate(ir.floor(f32(-1.5)))).toBe(-2);
  });

  it('fma rounds once; mul then add rounds twice', () => {
    const a = f32(1 + 2 ** -12);
    const c = f32(-(1 + 2 ** -11));
    expect(evaluate(ir.fma(a, a, c))).toBe(2 ** -24);
    expect(evaluate(ir.add(ir.mul(a, a), c))).toBe(0);
  });

  it('dot4_i8 sums sign-extended little-endian byte products onto c, wrapping', () => {
    const dot = (a: number, b: number, c: number): number => evaluate(ir.dot4I8(a, b, c));
    // Bytes 1, -1, -128, 127 times -128, 127, -1, 1: -128 - 127 + 128 + 127 = 0.
    expect(dot(0x7f80ff01, 0x01ff7f80, 5)).toBe(5);
    // Squares of 1, -1, -128, 127: 1 + 1 + 16384 + 16129.
    expect(dot(0x7f80ff01, 0x7f80ff01, 0)).toBe(32515);
    // Byte 0 only: 0xff is -1, not 255; byte 3 alone pairs with byte 3.
    expect(dot(0xff, 2, -7)).toBe(-9);
    expect(dot(0x05000000, 0x03000000, 0)).toBe(15);
    expect(dot(0x05000000, 3, 0)).toBe(0);
    // INT_MIN - 1 wraps to INT_MAX; INT_MAX + 4 * 127 * 127 wraps past INT_MIN.
    expect(dot(0xff, 1, -(2 ** 31))).toBe(2 ** 31 - 1);
    expect(dot(0x7f7f7f7f, 0x7f7f7f7f, 2 ** 31 - 1)).toBe(-2147419133);
    expect(dot(0x80808080, 0x80808080, -(2 ** 31))).toBe(-(2 ** 31) + 65536);
  });

  it('funnel_shift_right takes the low word of hi:lo shifted right, lo itself at 0', () => {
    const funnel = (lo: number, hi: number, shift: number): number =>
      evaluate(ir.funnelShiftRight(lo, hi, shift)) >>> 0;
    // hi:lo = 0x01234567_89abcdef.
    expect(funnel(0x89abcdef, 0x01234567, 0)).toBe(0x89abcdef);
    expect(funnel(0x89abcdef, 0x01234567, 4)).toBe(0x789abcde);
    expect(funnel(0x89abcdef, 0x01234567, 16)).toBe(0x456789ab);
    expect(funnel(0x89abcdef, 0x01234567, 31)).toBe(0x02468acf);
    // Swapped words: hi:lo = 0x89abcdef_01234567, so hi's bits enter from the top.
    expect(funnel(0x01234567, 0x89abcdef, 4)).toBe(0xf0123456);
    expect(funnel(0x01234567, 0x89abcdef, 31)).toBe(0x13579bde);
  });

  it('bit_select takes the bits of a where the mask is 1 and those of b elsewhere', () => {
    const pick = (mask: number, a: number, b: number): number =>
      evaluate(ir.bitSelect(mask, a, b)) >>> 0;
    expect(pick(0xffff0000, 0x12345678, 0x9abcdef0)).toBe(0x1234def0);
    expect(pick(0, 0x12345678, 0x9abcdef0)).toBe(0x9abcdef0);
    expect(pick(0xffffffff, 0x12345678, 0x9abcdef0)).toBe(0x12345678);
    // Bit 31 of the mask selects a's top bit: the result stays an unsigned word.
    expect(pick(0xc0c0c0c0, 0xffffffff, 0x3c3c3c3c)).toBe(0xfcfcfcfc);
    expect(pick(0x0f0f0f0f, 0xa5a5a5a5, 0x5a5a5a5a)).toBe(0x55555555);
  });

  it('pack_half rounds lo and hi to nearest-even halves, lo in the low 16 bits', () => {
    const pack = (lo: Expr, hi: Expr): number => evaluate(ir.packHalf(lo, hi)) >>> 0;
    expect(pack(f32(1), f32(-2))).toBe(0xc0003c00);
    // Ties: 1 + 2^-11 down to 1, 1 + 3·2^-11 up to 1 + 2^-9; 65520 up to infinity.
    expect(pack(f32(1 + 2 ** -11), f32(1 + 3 * 2 ** -11))).toBe(0x3c023c00);
    // Constants past ±65504 are validation errors (Tint folds them), so these are run-time values.
    const late = (value: number): Expr => ir.add(f32(value), runtimeZeroF32);
    expect(pack(late(65519), late(65520))).toBe(0x7c007bff);
    // A subnormal half and -0; NaN becomes a quiet NaN.
    expect(pack(f32(2 ** -24), f32(-0))).toBe(0x80000001);
    expect(pack(ir.div(runtimeZeroF32, runtimeZeroF32), f32(0)) & 0x7e00).toBe(0x7e00);
  });

  it('f16 arithmetic rounds to f16', () => {
    expect(evaluate(ir.add(f16(2048), f16(1)))).toBe(2048);
    expect(evaluate(ir.add(f16(2048), f16(2)))).toBe(2050);
    expect(evaluate(ir.convert('f16', f32(1 / 3)))).toBe(0.333251953125);
  });

  it('convert f32 to integers truncates toward zero, saturates, and maps NaN to 0', () => {
    const nan = ir.div(runtimeZeroF32, runtimeZeroF32);
    const infinity = ir.div(f32(1), runtimeZeroF32);
    expect(evaluate(ir.convert('u32', f32(3.9)))).toBe(3);
    expect(evaluate(ir.convert('u32', f32(-5.5)))).toBe(0);
    expect(evaluate(ir.convert('u32', f32(1e10)))).toBe(0xffffffff);
    expect(evaluate(ir.convert('u32', infinity))).toBe(0xffffffff);
    expect(evaluate(ir.convert('u32', nan))).toBe(0);
    expect(evaluate(ir.convert('i32', f32(-3.9)))).toBe(-3);
    expect(evaluate(ir.convert('i32', f32(3e9)))).toBe(2 ** 31 - 1);
    expect(evaluate(ir.convert('i32', f32(-3e9)))).toBe(-(2 ** 31));
    expect(evaluate(ir.convert('i32', nan))).toBe(0);
  });

  it('convert between integers wraps; integers to f32 round to nearest even', () => {
    expect(evaluate(ir.convert('i32', u32(0xffffffff)))).toBe(-1);
    expect(evaluate(ir.convert('u32', i32(-2)))).toBe(0xfffffffe);
    expect(evaluate(ir.convert('f32', u32(16777217)))).toBe(16777216);
    expect(evaluate(ir.convert('f32', u32(16777219)))).toBe(16777220);
    expect(evaluate(ir.convert('f32', i32(-7)))).toBe(-7);
  });

  it('bitcast reinterprets 32 bits', () => {
    expect(evaluate(ir.bitcast('u32', f32(1)))).toBe(0x3f800000);
    expect(evaluate(ir.bitcast('f32', u32(0xbf800000)))).toBe(-1);
    expect(evaluate(ir.bitcast('u32', i32(-1)))).toBe(0xffffffff);
    expect(evaluate(ir.bitcast('i32', u32(0x80000000)))).toBe(-(2 ** 31));
    expect(evaluate(ir.bitcast('u32', f32(-0)))).toBe(0x80000000);
    const nanBits = evaluate(ir.bitcast('u32', ir.div(runtimeZeroF32, runtimeZeroF32)));
    expect(nanBits & 0x7f800000).toBe(0x7f800000);
    expect(nanBits & 0x7fffff).not.toBe(0);
  });

  it('select and comparisons', () => {
    expect(evaluate(ir.select(ir.lt(i32(-1), i32(0)), u32(7), u32(9)))).toBe(7);
    expect(evaluate(ir.select(ir.lt(u32(0xffffffff), u32(0)), u32(7), u32(9)))).toBe(9);
    expect(evaluate(ir.ge(f32(2), f32(2)))).toBe(1);
    expect(evaluate(ir.ne(u32(2), u32(2)))).toBe(0);
    expect(evaluate(ir.max(f32(-1), f32(3)))).toBe(3);
    expect(evaluate(ir.min(i32(-1), i32(3)))).toBe(-1);
  });

  it('float min and max return the other operand for NaN, as PTX min.f32 does', () => {
    const nan = ir.div(runtimeZeroF32, runtimeZeroF32);
    expect(evaluate(ir.min(nan, f32(2)))).toBe(2);
    expect(evaluate(ir.max(f32(-2), nan))).toBe(-2);
    expect(Number.isNaN(evaluate(ir.max(nan, nan)))).toBe(true);
  });
});
