import { describe, expect, it } from 'vitest';
import { checkSpec, f16Bits, f16FromBits, interpret, ir, packHalfBits, printExpr } from '@forge/ir';
import { PACK_HALF_PROBE, PACK_HALF_VALUES, packHalfProbeData } from '../pack-half-probe.js';

/** The probe's JSON with its pack_half expression replaced by `expression`. */
function probeWith(expression: unknown): unknown {
  const json = JSON.parse(JSON.stringify(PACK_HALF_PROBE)) as {
    body: { then: { value: unknown }[] }[];
  };
  const store = json.body[1]?.then[2];
  if (store === undefined) throw new Error('probe layout changed');
  store.value = expression;
  return json;
}

const low = { op: 'var', type: 'f32', name: 'low' };

describe('pack_half', () => {
  it('rounds pairs of f32 to nearest-even f16 halves on the interpreter', () => {
    const { values, words } = packHalfProbeData(PACK_HALF_VALUES);
    const out = new Uint32Array(words.length);
    interpret(PACK_HALF_PROBE, { params: { n: words.length }, buffers: { values, out } });
    expect([...out].map((word) => word.toString(16))).toEqual(
      [...words].map((word) => word.toString(16)),
    );
  });

  it('packs NaN as a quiet NaN, keeping the other half', () => {
    const out = new Uint32Array(1);
    const values = Float32Array.of(NaN, 1);
    interpret(PACK_HALF_PROBE, { params: { n: 1 }, buffers: { values, out } });
    const word = out[0] ?? 0;
    expect(word >>> 16).toBe(0x3c00);
    // Exponent all ones, and the quiet bit (the mantissa's top bit) set.
    expect(word & 0x7e00).toBe(0x7e00);
  });

  it('is the inverse of unpack_half on every non-NaN f16 pattern', () => {
    const wrong: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      if ((bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0) continue;
      const word = packHalfBits(f16FromBits(bits), f16FromBits(bits ^ 0x8000));
      if (word !== (bits | ((bits ^ 0x8000) << 16)) >>> 0) wrong.push(bits);
    }
    expect(wrong).toEqual([]);
    expect(packHalfBits(0.1, -0)).toBe((f16Bits(0.1) | 0x80000000) >>> 0);
  });

  it('is built, typed and printed with its two operands', () => {
    const expression = ir.packHalf(ir.f32(1), 0.5);
    expect(expression).toEqual({ op: 'pack_half', type: 'u32', args: [ir.f32(1), ir.f32(0.5)] });
    expect(printExpr(expression)).toBe('pack_half(1f32, 0.5f32)');
    expect(checkSpec(PACK_HALF_PROBE)).toEqual([]);
  });

  it.each([
    [
      'an f16 operand',
      { op: 'pack_half', type: 'u32', args: [low, { op: 'const', type: 'f16', value: 1 }] },
      'args[1]',
      /pack_half operand has type f16 but f32 is required/,
    ],
    [
      'a u32 operand',
      { op: 'pack_half', type: 'u32', args: [{ op: 'const', type: 'u32', value: 1 }, low] },
      'args[0]',
      /f32 is required/,
    ],
    [
      'an f32 result',
      { op: 'pack_half', type: 'f32', args: [low, low] },
      'type',
      /is f32 but the expression has type u32/,
    ],
    ['one arg', { op: 'pack_half', type: 'u32', args: [low] }, 'args', /must have 2 argument/],
    ['a stray field', { op: 'pack_half', type: 'u32', args: [low, low], half: 0 }, 'half', /./],
  ] as const)('rejects %s at its path', (_name, expression, field, message) => {
    const issues = checkSpec(probeWith(expression));
    const issue = issues.find((candidate) => candidate.path === `body[1].then[2].value.${field}`);
    expect(issue?.message, JSON.stringify(issues)).toMatch(message);
  });
});
