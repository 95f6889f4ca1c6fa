import { describe, expect, it } from 'vitest';
import { checkSpec, interpret, ir, printExpr } from '@forge/ir';
import {
  UNPACK_HALF_PROBE,
  UNPACK_HALF_VALUES,
  unpackHalfProbeWords,
} from '../unpack-half-probe.js';

/** The probe's JSON with its first unpack_half expression replaced by `expression`. */
function probeWith(expression: unknown): unknown {
  const json = JSON.parse(JSON.stringify(UNPACK_HALF_PROBE)) as {
    body: { then: { value: unknown }[] }[];
  };
  const store = json.body[1]?.then[1];
  if (store === undefined) throw new Error('probe layout changed');
  store.value = expression;
  return json;
}

const word = { op: 'var', type: 'u32', name: 'word' };

describe('unpack_half', () => {
  it('reads both f16 halves of a word as exact f32 on the interpreter', () => {
    const words = unpackHalfProbeWords();
    const out = new Float32Array(2 * words.length);
    interpret(UNPACK_HALF_PROBE, { params: { n: words.length }, buffers: { words, out } });
    expect([...out]).toEqual(UNPACK_HALF_VALUES.map(([, value]) => value));
    // -0 keeps its sign; toEqual alone treats 0 and -0 as equal.
    expect(Object.is(out[out.length - 1], -0)).toBe(true);
  });

  it('reads NaN halves as NaN', () => {
    const words = Uint32Array.of(0x7e00fe01);
    const out = new Float32Array(2);
    interpret(UNPACK_HALF_PROBE, { params: { n: 1 }, buffers: { words, out } });
    expect(out.every(Number.isNaN)).toBe(true);
  });

  it('is built, typed and printed with its half', () => {
    const expression = ir.unpackHalf(ir.u32(0x3c00), 1);
    expect(expression).toEqual({ op: 'unpack_half', type: 'f32', half: 1, args: [ir.u32(0x3c00)] });
    expect(printExpr(expression)).toBe('unpack_half.hi(15360u32)');
    expect(printExpr(ir.unpackHalf(ir.u32(1), 0))).toBe('unpack_half.lo(1u32)');
    expect(checkSpec(UNPACK_HALF_PROBE)).toEqual([]);
  });

  it.each([
    ['half 2', { op: 'unpack_half', type: 'f32', half: 2, args: [word] }, 'half', /must be 0 or 1/],
    ['no half', { op: 'unpack_half', type: 'f32', args: [word] }, 'half', /must be 0 or 1/],
    [
      'an f32 word',
      { op: 'unpack_half', type: 'f32', half: 0, args: [{ op: 'const', type: 'f32', value: 1 }] },
      'args[0]',
      /u32 is required/,
    ],
    [
      'an f16 result',
      { op: 'unpack_half', type: 'f16', half: 0, args: [word] },
      'type',
      /is f16 but the expression has type f32/,
    ],
    [
      'two args',
      { op: 'unpack_half', type: 'f32', half: 0, args: [word, word] },
      'args',
      /must have 1 argument/,
    ],
    [
      'a stray field',
      { op: 'unpack_half', type: 'f32', half: 0, args: [word], memory: 'words' },
      'memory',
      /./,
    ],
  ] as const)('rejects %s at its path', (_name, expression, field, message) => {
    const issues = checkSpec(probeWith(expression));
    const issue = issues.find((candidate) => candidate.path === `body[1].then[1].value.${field}`);
    expect(issue?.message, JSON.stringify(issues)).toMatch(message);
  });
});
