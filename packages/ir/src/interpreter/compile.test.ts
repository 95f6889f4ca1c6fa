import { describe, expect, it } from 'vitest';
import type { Expr, Stmt } from '../body.js';
import { ExecutionError } from '../errors.js';
import * as ir from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import { interpret } from './run.js';

// The interpreter compiles a dispatch's body before running it: faults must still come only from
// what runs, in the order the tree walker met them.

const { u32 } = ir;
const localId = ir.builtin('local_id');

function spec(body: readonly Stmt[], workgroupSize = 4): KernelSpec {
  return {
    id: 'unit',
    semanticVersion: 1,
    entryPoint: 'unit',
    description: 'interpreter compile test',
    buffers: [{ group: 0, binding: 0, name: 'out', element: 'u32', access: 'read_write' }],
    params: [],
    shared: [],
    schedule: [],
    launch: { workgroupSize: String(workgroupSize), grid: ['1', '1', '1'] },
    body,
  } as KernelSpec;
}

function run(body: readonly Stmt[], length = 4): Uint32Array {
  const out = new Uint32Array(length);
  interpret(spec(body), { params: {}, buffers: { out } });
  return out;
}

const never = ir.lt(localId, u32(0));
const load = (memory: string, index: Expr): Expr => ({
  op: 'load',
  type: 'u32',
  memory,
  args: [index],
});
const variable = (name: string): Expr => ({ op: 'var', type: 'u32', name });
const unknownOp = { op: 'no_such_op', type: 'u32', args: [] } as unknown as Expr;

describe('interpreter: compiled once, faulting only where it runs', () => {
  it('an unknown memory, expression op or statement in a branch never taken does not fault', () => {
    const body: Stmt[] = [
      { op: 'store', memory: 'out', index: localId, value: ir.add(localId, u32(1)) },
      {
        op: 'if',
        condition: never,
        then: [
          { op: 'store', memory: 'nowhere', index: u32(0), value: u32(1) },
          { op: 'store', memory: 'out', index: u32(0), value: unknownOp },
          { op: 'no_such_statement' } as unknown as Stmt,
        ],
        else: [],
      },
    ];
    expect([...run(body)]).toEqual([1, 2, 3, 4]);
  });

  it('the same nodes fault when they run, with the tree walker’s errors', () => {
    const store = (memory: string, value: Expr): Stmt[] => [
      { op: 'store', memory, index: localId, value },
    ];
    expect(() => run(store('nowhere', u32(1)))).toThrow(
      /no buffer or shared array named 'nowhere'/,
    );
    expect(() => run(store('out', unknownOp))).toThrow(/unhandled expression op: "no_such_op"/);
    expect(() => run([{ op: 'no_such_statement' } as unknown as Stmt])).toThrow(
      /unhandled statement op: "no_such_statement"/,
    );
  });

  it('a store evaluates its index before the missing memory faults', () => {
    const badIndex = load('out', u32(99));
    expect(() => run([{ op: 'store', memory: 'nowhere', index: badIndex, value: u32(1) }])).toThrow(
      /out-of-bounds read of 'out' at element 99/,
    );
  });

  it('threads write in thread order between barriers, as the scheduler ran them', () => {
    // Every thread writes element 0 then waits: the last thread's value stays; after the barrier
    // each thread reads it back into its own element.
    const body: Stmt[] = [
      { op: 'store', memory: 'out', index: u32(0), value: ir.add(localId, u32(10)) },
      { op: 'barrier' },
      { op: 'let', name: 'seen', type: 'u32', value: load('out', u32(0)) },
      { op: 'barrier' },
      { op: 'store', memory: 'out', index: localId, value: variable('seen') },
    ];
    expect([...run(body)]).toEqual([13, 13, 13, 13]);
  });

  it('locals start unset in every workgroup of a dispatch', () => {
    const body: Stmt[] = [
      {
        op: 'if',
        condition: ir.eq(ir.builtin('workgroup_id', 'x'), u32(0)),
        then: [{ op: 'let', name: 'first', type: 'u32', value: u32(7) }],
        else: [],
      },
      { op: 'store', memory: 'out', index: localId, value: variable('first') },
    ];
    const out = new Uint32Array(4);
    const twoGroups = {
      ...spec(body),
      launch: { workgroupSize: '4', grid: ['2', '1', '1'] as const },
    };
    const fault = () => interpret(twoGroups as KernelSpec, { params: {}, buffers: { out } });
    expect(fault).toThrow(ExecutionError);
    expect(fault).toThrow(/local 'first' read before it is set/);
    expect([...out]).toEqual([7, 7, 7, 7]);
  });
});
