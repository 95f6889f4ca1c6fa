import { describe, expect, it } from 'vitest';
import { MMA_PROBE, mmaProbeCase } from '@forge/test-fixtures';
import { parsePtx, simulate, type KernelArgument } from '@forge/ptx-sim';
import { interpret } from '@forge/ir';
import { normalizedMse } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { MMA_FORMS, mmaForm } from './ops/mma.js';
import { PTX_ARCHS, ptxTarget, type PtxTarget } from './targets.js';

const buffer = (array: Float32Array | Uint32Array): KernelArgument => ({
  kind: 'buffer',
  bytes: new Uint8Array(array.buffer),
});

const PAIRS = 2;
const K_CHUNKS = 3;

/** D from the interpreter, the order every engine here shares. */
function interpreted(): Float32Array {
  const { a, b, c } = mmaProbeCase(PAIRS, K_CHUNKS);
  const d = new Float32Array(PAIRS * 256);
  interpret(MMA_PROBE, { params: { k_chunks: K_CHUNKS, pairs: PAIRS }, buffers: { a, b, c, d } });
  return d;
}

// sm_75 at its default ISA (6.5) has m16n8k8; at its lowest (6.3) no mma form.
const TARGETS: readonly PtxTarget[] = [
  ...PTX_ARCHS.map((arch) => ptxTarget(arch)),
  { ...ptxTarget('sm_75'), ptxVersion: '6.3' },
];
const label = (target: PtxTarget): string => `${target.arch} ISA ${target.ptxVersion}`;

describe('mma on PTX', () => {
  it('picks m16n8k16 on sm_80+, two m16n8k8 on sm_75 from ISA 6.5, and shuffles below', () => {
    const forms = TARGETS.map((target) => mmaForm('m16n8k16', target)?.instruction);
    expect(forms).toEqual([
      MMA_FORMS.m16n8k16[1]?.instruction,
      ...PTX_ARCHS.slice(1).map(() => MMA_FORMS.m16n8k16[0]?.instruction),
      undefined,
    ]);
    const sm80 = emitPtx(MMA_PROBE, {}, ptxTarget('sm_80')).source;
    expect(sm80).toMatch(
      /mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32 \{(%f\d+), %f\d+, %f\d+, %f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, \{%r\d+, %r\d+\}, \{%f\d+, %f\d+, %f\d+, %f\d+\};/,
    );
    const sm75 = emitPtx(MMA_PROBE, {}, ptxTarget('sm_75')).source;
    const steps = [...sm75.matchAll(/mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.f16\.f16\.f32 (\{[^}]+\}), \{(%r\d+), (%r\d+)\}, \{(%r\d+)\}, (\{[^}]+\});/g)]; // prettier-ignore
    expect(steps).toHaveLength(2);
    const [first, second] = steps as [RegExpMatchArray, RegExpMatchArray];
    // The second step accumulates onto the first's D, with the other A and B words.
    expect(second[5]).toBe(first[1]);
    expect(second[1]).toBe(first[1]);
    expect(new Set([first[2], first[3], first[4], second[2], second[3], second[4]]).size).toBe(6);
    const sm75Old = emitPtx(MMA_PROBE, {}, TARGETS.at(-1) as PtxTarget).source;
    expect(sm75Old).not.toContain('mma.sync');
    expect(sm75Old.match(/shfl\.sync\.idx\.b32/g)).toHaveLength(32);
  });

  for (const target of TARGETS) {
    it(`assembles, runs clean on the simulator and matches the interpreter, ${label(target)}`, () => {
      const shader = emitPtx(MMA_PROBE, {}, target);
      const assembled = assemblePtx(shader.source, target.arch);
      expect(assembled.ok, JSON.stringify(assembled)).toBe(true);
      expect([assembled.spillStores, assembled.spillLoads, assembled.diagnostics]).toEqual([
        0,
        0,
        '',
      ]);
      const { a, b, c, reference } = mmaProbeCase(PAIRS, K_CHUNKS);
      const d = new Float32Array(PAIRS * 256);
      const result = simulate(parsePtx(shader.source), {
        grid: [PAIRS, 1, 1],
        block: [64, 1, 1],
        args: {
          param_a: buffer(a),
          param_b: buffer(b),
          param_c: buffer(c),
          param_d: buffer(d),
          param_k_chunks: { kind: 'scalar', value: K_CHUNKS },
          param_pairs: { kind: 'scalar', value: PAIRS },
        },
      });
      expect(result.findings).toEqual([]);
      expect(normalizedMse(d, reference)).toBeLessThan(1e-12);
      // The simulator adds the products in increasing k, rounding each sum to f32, as the IR does.
      expect([...d]).toEqual([...interpreted()]);
    });
  }
});
