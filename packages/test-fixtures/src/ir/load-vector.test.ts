import { describe, expect, it } from 'vitest';
import { ExecutionError, checkSpec, interpret, printBody, validateSpec } from '@forge/ir';
import { LOAD_VECTOR_PROBE, loadVectorProbeCase } from '../load-vector-probe.js';

/** The probe's JSON with its first load_vector (body[2].then[0]) changed by `edit`. */
function probeWith(edit: (statement: Record<string, unknown>) => void): unknown {
  const json = JSON.parse(JSON.stringify(LOAD_VECTOR_PROBE)) as {
    body: { then: Record<string, unknown>[] }[];
  };
  const statement = json.body[2]?.then[0];
  if (statement?.['op'] !== 'load_vector') throw new Error('probe layout changed');
  edit(statement);
  return json;
}

type Edit = (statement: Record<string, unknown>) => void;
function set(field: string, value: unknown): Edit {
  return (statement) => {
    statement[field] = value;
  };
}
const removeNames: Edit = (statement) => {
  delete statement['names'];
};

describe('load_vector', () => {
  it('declares one local per element, read from consecutive elements', () => {
    const { a, b, expected } = loadVectorProbeCase(5);
    const out = new Float32Array(expected.length);
    interpret(LOAD_VECTOR_PROBE, { params: { n: 5 }, buffers: { a, b, out } });
    expect([...out]).toEqual([...expected]);
    expect(checkSpec(LOAD_VECTOR_PROBE)).toEqual([]);
  });

  it('prints as a tuple declaration', () => {
    const statement = LOAD_VECTOR_PROBE.body[2];
    expect(statement?.op === 'if' && printBody(statement.then.slice(0, 1))).toEqual([
      'let (a0, a1, a2, a3): f32 = a[(k * 4u32) ..+ 4]',
    ]);
  });

  it('rejects a constant index that is not a multiple of the width, at its path', () => {
    const misaligned = probeWith((statement) => {
      statement['index'] = { op: 'const', type: 'u32', value: 2 };
    });
    expect(() => validateSpec(misaligned)).toThrow(
      /\.index: constant index 2 of a 4-wide load_vector is not a multiple of 4/,
    );
  });

  it('is an execution error when an index known only at run time is not a multiple of the width', () => {
    // n + 1: the validator cannot see it, so the interpreter must (n = 1 gives 2).
    const misaligned = probeWith((statement) => {
      statement['index'] = {
        op: 'add',
        type: 'u32',
        args: [
          { op: 'param', type: 'u32', name: 'n' },
          { op: 'const', type: 'u32', value: 1 },
        ],
      };
    });
    const { a, b } = loadVectorProbeCase(1);
    const run = () =>
      interpret(validateSpec(misaligned), {
        params: { n: 1 },
        buffers: { a, b, out: new Float32Array(4) },
      });
    expect(run).toThrow(ExecutionError);
    expect(run).toThrow(/load_vector of 4 from 'a' at element 2, not a multiple of 4/);
  });

  it('is an execution error when the vector runs past the buffer', () => {
    const { a, b } = loadVectorProbeCase(1);
    const run = () =>
      interpret(LOAD_VECTOR_PROBE, {
        params: { n: 2 },
        buffers: { a, b, out: new Float32Array(8) },
      });
    expect(run).toThrow(/out-of-bounds read of 'a' at element 4/);
  });

  const rejections: readonly (readonly [string, Edit, string, RegExp])[] = [
    ['three names', set('names', ['p', 'q', 'r']), 'names', /2 or 4/],
    ['no names', removeNames, 'names', /2 or 4/],
    ['a name twice', set('names', ['p', 'p']), 'names[1]', /twice/],
    ['a reserved name', set('names', ['p', 'fn']), 'names[1]', /reserved/],
    ['a type other than the buffer', set('type', 'u32'), 'type', /holds f32/],
    ['an unknown buffer', set('memory', 'nope'), 'memory', /not a declared buffer/],
    [
      'an f32 index',
      set('index', { op: 'const', type: 'f32', value: 0 }),
      'index',
      /u32 is required/,
    ],
  ];
  it.each(rejections)('rejects %s at its path', (_name, edit, field, message) => {
    const issues = checkSpec(probeWith(edit));
    const issue = issues.find((candidate) => candidate.path === `body[2].then[0].${field}`);
    expect(issue?.message, JSON.stringify(issues)).toMatch(message);
  });

  it('keeps its locals immutable', () => {
    const json = JSON.parse(JSON.stringify(LOAD_VECTOR_PROBE)) as {
      body: { then: unknown[] }[];
    };
    json.body[2]?.then.push({
      op: 'assign',
      name: 'a0',
      value: { op: 'const', type: 'f32', value: 0 },
    });
    const issues = checkSpec(json);
    expect(issues.map((issue) => issue.message).join('\n')).toMatch(/'a0' cannot be assigned/);
  });
});
