import { describe, expect, it } from 'vitest';
import { ExecutionError, checkSpec, interpret, printBody, validateSpec } from '@forge/ir';
import { STORE_VECTOR_PROBE, storeVectorProbeCase } from '../store-vector-probe.js';

/** The probe's JSON with its first store_vector (body[3].then[1], into `tile`) changed by `edit`. */
function probeWith(edit: (statement: Record<string, unknown>) => void): unknown {
  const json = JSON.parse(JSON.stringify(STORE_VECTOR_PROBE)) as {
    body: { then: Record<string, unknown>[] }[];
  };
  const statement = json.body[3]?.then[1];
  if (statement?.['op'] !== 'store_vector') throw new Error('probe layout changed');
  edit(statement);
  return json;
}

type Edit = (statement: Record<string, unknown>) => void;
function set(field: string, value: unknown): Edit {
  return (statement) => {
    statement[field] = value;
  };
}
const removeValues: Edit = (statement) => {
  delete statement['values'];
};
const f32 = (value: number) => ({ op: 'const', type: 'f32', value });
const u32 = (value: number) => ({ op: 'const', type: 'u32', value });
const param = (name: string) => ({ op: 'param', type: 'u32', name });

/** Runs the probe for n groups; returns its outputs. */
function run(spec: unknown, n: number): { out: Float32Array; pairs: Uint32Array } {
  const { a } = storeVectorProbeCase(n);
  const out = new Float32Array(4 * n);
  const pairs = new Uint32Array(2 * n + 1);
  interpret(validateSpec(spec), { params: { n }, buffers: { a, out, pairs } });
  return { out, pairs };
}

describe('store_vector', () => {
  it('writes each value to consecutive elements', () => {
    const expected = storeVectorProbeCase(5);
    const { out, pairs } = run(STORE_VECTOR_PROBE, 5);
    expect([...out]).toEqual([...expected.out]);
    expect([...pairs]).toEqual([...expected.pairs]);
    expect(checkSpec(STORE_VECTOR_PROBE)).toEqual([]);
  });

  it('prints as a tuple assignment', () => {
    const statement = STORE_VECTOR_PROBE.body[5];
    expect(statement?.op === 'if' && printBody(statement.then.slice(1))).toEqual([
      'out[first ..+ 4] = (t0, (t1 + 1f32), (t2 * 2f32), 5f32)',
      'pairs[(k * 2u32) ..+ 2] = (k, ((k * 7u32) + 1u32))',
    ]);
  });

  it('is an execution error when an index known only at run time is not a multiple of the width', () => {
    // n + 1: the validator cannot see it, so the interpreter must (n = 1 gives 2).
    const misaligned = probeWith(
      set('index', { op: 'add', type: 'u32', args: [param('n'), u32(1)] }),
    );
    expect(() => run(misaligned, 1)).toThrow(ExecutionError);
    expect(() => run(misaligned, 1)).toThrow(
      /store_vector of 4 to 'tile' at element 2, not a multiple of 4/,
    );
  });

  it('is an execution error when a vector at a run-time index runs past the memory', () => {
    const past = probeWith(set('index', { op: 'mul', type: 'u32', args: [param('n'), u32(128)] }));
    expect(() => run(past, 1)).toThrow(/out-of-bounds write of 'tile' at element 128/);
  });

  it('rejects a constant index that is misaligned or reaches past the shared array, at its path', () => {
    const path = 'body[3].then[1].index';
    const misaligned = checkSpec(probeWith(set('index', u32(2))));
    expect(misaligned.find((issue) => issue.path === path)?.message).toMatch(
      /constant index 2 of a 4-wide store_vector is not a multiple of 4/,
    );
    const past = checkSpec(probeWith(set('index', u32(128))));
    expect(past.find((issue) => issue.path === path)?.message).toMatch(
      /constant index 128 of a 4-wide store_vector is out of bounds of 'tile' \(length 128; it reaches element 131\)/,
    );
  });

  const rejections: readonly (readonly [string, Edit, string, RegExp])[] = [
    ['three values', set('values', [f32(1), f32(2), f32(3)]), 'values', /2 or 4 values/],
    ['no values', removeValues, 'values', /2 or 4 values/],
    ['a value of another type', set('values', [f32(1), u32(2)]), 'values[1]', /f32 is required/],
    ['an unknown memory', set('memory', 'nope'), 'memory', /not a declared buffer/],
    ['a read-only buffer', set('memory', 'a'), 'memory', /buffer 'a' is read-only/],
    ['an f32 index', set('index', f32(0)), 'index', /u32 is required/],
  ];
  it.each(rejections)('rejects %s at its path', (_name, edit, field, message) => {
    const issues = checkSpec(probeWith(edit));
    const issue = issues.find((candidate) => candidate.path === `body[3].then[1].${field}`);
    expect(issue?.message, JSON.stringify(issues)).toMatch(message);
  });
});
