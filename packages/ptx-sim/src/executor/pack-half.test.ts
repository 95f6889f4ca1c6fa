import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { simulate } from './simulate.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

// Pairs (low, high) and the word round-to-nearest-even gives them, worked out by hand: ties both
// ways, f16 subnormal ties, the overflow threshold, and NaN (cvt's canonical 0x7fff).
const PAIRS: readonly (readonly [number, number, number])[] = [
  [1, -2, 0xc0003c00],
  [0.1, 65520, 0x7c002e66],
  [1 + 2 ** -11, 1 + 3 * 2 ** -11, 0x3c023c00],
  [2 ** -25, 3 * 2 ** -25, 0x00020000],
  [Number.NaN, -0, 0x80007fff],
];

describe('f16 packing in nvcc output', () => {
  it.each(['sm_75', 'sm_80'])('__floats2half2_rn on %s packs nearest-even halves', (arch) => {
    const source = fixture(`pack-half.${arch}.ptx`);
    // sm_75: two cvt.rn.f16.f32 and a mov.b32 pack; sm_80: one cvt.rn.f16x2.f32.
    expect(source).toMatch(
      arch === 'sm_75' ? /mov\.b32 %r\d+, \{low,high\}/ : /cvt\.rn\.f16x2\.f32/,
    );
    const x = Float32Array.from(PAIRS.flatMap(([low, high]) => [low, high]));
    const out = new Uint32Array(PAIRS.length);
    const result = simulate(parsePtx(source), {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: {
        pack_half_param_0: { kind: 'buffer', bytes: new Uint8Array(x.buffer) },
        pack_half_param_1: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
        pack_half_param_2: { kind: 'scalar', value: PAIRS.length },
      },
    });
    expect(result.findings).toEqual([]);
    expect([...out].map((word) => word.toString(16))).toEqual(PAIRS.map(([, , word]) => word.toString(16))); // prettier-ignore
  });
});
