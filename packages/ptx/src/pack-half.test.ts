import { describe, expect, it } from 'vitest';
import { PACK_HALF_PROBE, PACK_HALF_VALUES, packHalfProbeData } from '@forge/test-fixtures';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { PTX_ARCHS, ptxTarget } from './targets.js';

/** Runs the probe's PTX for `arch` on the simulator over `values`, returning the packed words. */
function simulatePack(arch: (typeof PTX_ARCHS)[number], values: Float32Array): Uint32Array {
  const shader = emitPtx(PACK_HALF_PROBE, {}, ptxTarget(arch));
  const out = new Uint32Array(values.length / 2);
  const result = simulate(parsePtx(shader.source), {
    grid: [1, 1, 1],
    block: [32, 1, 1],
    args: {
      param_values: { kind: 'buffer', bytes: new Uint8Array(values.buffer) },
      param_out: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
      param_n: { kind: 'scalar', value: out.length },
    },
  });
  expect(result.findings).toEqual([]);
  return out;
}

describe('pack_half on PTX', () => {
  it('rounds each half with cvt.rn.f16.f32 and joins them with one mov', () => {
    const source = emitPtx(PACK_HALF_PROBE, {}, ptxTarget('sm_80')).source;
    expect(source).toMatch(
      /cvt\.rn\.f16\.f32 (%h\d+), %f\d+;\n\tcvt\.rn\.f16\.f32 (%h\d+), %f\d+;\n\tmov\.b32 %r\d+, \{\1, \2\};/,
    );
  });

  for (const arch of PTX_ARCHS) {
    it(`assembles and computes the nearest-even halves on the simulator, ${arch}`, () => {
      const shader = emitPtx(PACK_HALF_PROBE, {}, ptxTarget(arch));
      expect(assemblePtx(shader.source, arch).ok).toBe(true);
      const { values, words } = packHalfProbeData(PACK_HALF_VALUES);
      const hex = (array: Uint32Array): string[] => [...array].map((word) => word.toString(16));
      expect(hex(simulatePack(arch, values))).toEqual(hex(words));
    });
  }

  it('packs NaN as a quiet NaN (cvt gives the canonical 0x7fff)', () => {
    const [word] = simulatePack('sm_90', Float32Array.of(2, NaN));
    expect(word?.toString(16)).toBe('7fff4000');
  });
});
