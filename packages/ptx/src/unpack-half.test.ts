import { describe, expect, it } from 'vitest';
import { UNPACK_HALF_PROBE, UNPACK_HALF_VALUES, unpackHalfProbeWords } from '@forge/test-fixtures';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';
import { PTX_ARCHS } from './targets.js';

describe('unpack_half on PTX', () => {
  it('splits the word once and widens only the half it needs', () => {
    const source = emitPtx(UNPACK_HALF_PROBE, {}, ptxTarget('sm_80')).source;
    expect(source).toMatch(/mov\.b32 \{%h\d+, _\}, %r\d+;\n\tcvt\.f32\.f16 %f\d+, %h\d+;/);
    expect(source).toMatch(/mov\.b32 \{_, %h\d+\}, %r\d+;\n\tcvt\.f32\.f16 %f\d+, %h\d+;/);
  });

  for (const arch of PTX_ARCHS) {
    it(`assembles and computes exact values on the simulator, ${arch}`, () => {
      const shader = emitPtx(UNPACK_HALF_PROBE, {}, ptxTarget(arch));
      expect(assemblePtx(shader.source, arch).ok).toBe(true);
      const words = unpackHalfProbeWords();
      const out = new Float32Array(2 * words.length);
      const result = simulate(parsePtx(shader.source), {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: {
          param_words: { kind: 'buffer', bytes: new Uint8Array(words.buffer) },
          param_out: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
          param_n: { kind: 'scalar', value: words.length },
        },
      });
      expect(result.findings).toEqual([]);
      expect([...out]).toEqual(UNPACK_HALF_VALUES.map(([, value]) => value));
      expect(Object.is(out[out.length - 1], -0)).toBe(true);
    });
  }
});
