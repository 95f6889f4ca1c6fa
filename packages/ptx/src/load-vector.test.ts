import { describe, expect, it } from 'vitest';
import { LOAD_VECTOR_PROBE, loadVectorProbeCase } from '@forge/test-fixtures';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';
import { PTX_ARCHS } from './targets.js';

const bytes = (array: Float32Array | Uint32Array): Uint8Array => new Uint8Array(array.buffer);

describe('load_vector on PTX', () => {
  it('is one vector load per statement, through the read-only path', () => {
    const source = emitPtx(LOAD_VECTOR_PROBE, {}, ptxTarget('sm_80')).source;
    expect(source).toMatch(/ld\.global\.nc\.v4\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}, \[%rd\d+\];/);
    expect(source).toMatch(/ld\.global\.nc\.v2\.u32 \{%r\d+, %r\d+\}, \[%rd\d+\];/);
    // A shared array read by 16-byte vector loads is aligned to 16 bytes.
    expect(source).toContain('.shared .align 16 .f32 shared_tile[128];');
    expect(source).toMatch(/ld\.shared\.v4\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}, \[%r\d+\];/);
  });

  for (const arch of PTX_ARCHS) {
    it(`assembles and reads exact values with full sectors on the simulator, ${arch}`, () => {
      const shader = emitPtx(LOAD_VECTOR_PROBE, {}, ptxTarget(arch));
      expect(assemblePtx(shader.source, arch).ok).toBe(true);
      const n = 32;
      const { a, b, expected } = loadVectorProbeCase(n);
      const out = new Float32Array(expected.length);
      const result = simulate(parsePtx(shader.source), {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: {
          param_a: { kind: 'buffer', bytes: bytes(a) },
          param_b: { kind: 'buffer', bytes: bytes(b) },
          param_out: { kind: 'buffer', bytes: bytes(out) },
          param_n: { kind: 'scalar', value: n },
        },
      });
      expect(result.findings).toEqual([]);
      expect([...out]).toEqual([...expected]);
      // 32 lanes × 16 bytes in one warp instruction: 512 bytes, 16 whole sectors.
      const traffic = result.counters.buffers['param_a'];
      expect(traffic?.requestedBytes).toBe(512);
      expect(traffic?.sectorBytes).toBe(512);
      expect(result.counters.warpInstructions['ld']).toBeGreaterThan(0);
    });
  }
});
