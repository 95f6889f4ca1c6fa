import { describe, expect, it } from 'vitest';
import { STORE_VECTOR_PROBE, storeVectorProbeCase } from '@forge/test-fixtures';
import { parsePtx, simulate, type KernelArgument } from '@forge/ptx-sim';
import { defineKernel, ir, validateSpec } from '@forge/ir';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { PTX_ARCHS, ptxTarget } from './targets.js';

const buffer = (array: Float32Array | Uint32Array): KernelArgument => ({
  kind: 'buffer',
  bytes: new Uint8Array(array.buffer),
});

/** Simulates `source` for n groups; returns the outputs and the run's result. */
function simulateProbe(source: string, n: number) {
  const { a } = storeVectorProbeCase(n);
  const out = new Float32Array(4 * n);
  const pairs = new Uint32Array(2 * n + 1);
  const result = simulate(parsePtx(source), {
    grid: [1, 1, 1],
    block: [32, 1, 1],
    args: {
      param_a: buffer(a),
      param_out: buffer(out),
      param_pairs: buffer(pairs),
      param_n: { kind: 'scalar', value: n },
    },
  });
  return { out, pairs, result };
}

describe('store_vector on PTX', () => {
  it('is one vector store per statement, its values in registers', () => {
    const source = emitPtx(STORE_VECTOR_PROBE, {}, ptxTarget('sm_80')).source;
    expect(source).toMatch(/st\.shared\.v4\.f32 \[%r\d+\], \{%f\d+, %f\d+, %f\d+, %f\d+\};/);
    expect(source).toMatch(/st\.global\.v4\.f32 \[%rd\d+\], \{%f\d+, %f\d+, %f\d+, %f\d+\};/);
    expect(source).toMatch(/st\.global\.v2\.u32 \[%rd\d+\], \{%r\d+, %r\d+\};/);
    // A shared array written by 16-byte vector stores is aligned to 16 bytes.
    expect(source).toContain('.shared .align 16 .f32 shared_tile[128];');
    // The literal 5 reaches the vector store through a register.
    expect(source).toMatch(/mov\.b32 %f\d+, 0f40A00000;/);
  });

  for (const arch of PTX_ARCHS) {
    it(`assembles and writes exact values with full sectors on the simulator, ${arch}`, () => {
      const shader = emitPtx(STORE_VECTOR_PROBE, {}, ptxTarget(arch));
      expect(assemblePtx(shader.source, arch).ok).toBe(true);
      const n = 32;
      const expected = storeVectorProbeCase(n);
      const { out, pairs, result } = simulateProbe(shader.source, n);
      expect(result.findings).toEqual([]);
      expect([...out]).toEqual([...expected.out]);
      expect([...pairs]).toEqual([...expected.pairs]);
      // 32 lanes × 16 bytes in one warp instruction: 512 bytes, 16 whole sectors.
      const traffic = result.counters.buffers['param_out'];
      expect(traffic?.requestedBytes).toBe(512);
      expect(traffic?.sectorBytes).toBe(512);
    });
  }

  it('stores f16 values as one .b16 vector, as load_vector reads them', () => {
    const spec = defineKernel(
      {
        id: 'store-vector-f16',
        semanticVersion: 1,
        entryPoint: 'store_vector_f16',
        description: 'h[4k..4k+3] = (k, 1.5, -2, k + 0.5) in f16',
        buffers: [{ group: 0, binding: 0, name: 'h', element: 'f16', access: 'read_write' }],
        params: [],
        shared: [],
        schedule: [],
        launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
      },
      (b) => {
        const k = b.let('k', ir.convert('f16', b.localId()));
        b.storeVector('h', ir.mul(b.localId(), 4), [k, 1.5, -2, ir.add(k, 0.5)]);
      },
    );
    const source = emitPtx(spec, {}, ptxTarget('sm_80')).source;
    expect(source).toMatch(/st\.global\.v4\.b16 \[%rd\d+\], \{%h\d+, %h\d+, %h\d+, %h\d+\};/);
    expect(assemblePtx(source, 'sm_80').ok).toBe(true);
    const h = new Uint16Array(128);
    const result = simulate(parsePtx(source), {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: { param_h: { kind: 'buffer', bytes: new Uint8Array(h.buffer) } },
    });
    expect(result.findings).toEqual([]);
    // f16 bits: 1.5 = 0x3e00, -2 = 0xc000; lane 3: 3 = 0x4200, 3.5 = 0x4300.
    expect([...h.slice(12, 16)]).toEqual([0x4200, 0x3e00, 0xc000, 0x4300]);
  });

  it('a misaligned store_vector is a misaligned finding on the simulator', () => {
    const json = JSON.parse(JSON.stringify(STORE_VECTOR_PROBE)) as {
      body: { then: Record<string, unknown>[] }[];
    };
    const store = json.body[3]?.then[1];
    if (store?.['op'] !== 'store_vector') throw new Error('probe layout changed');
    // tile[first + 2]: 8 bytes past a 16-byte boundary.
    store['index'] = {
      op: 'add',
      type: 'u32',
      args: [
        { op: 'var', type: 'u32', name: 'first' },
        { op: 'const', type: 'u32', value: 2 },
      ],
    };
    const shader = emitPtx(validateSpec(json), {}, ptxTarget('sm_80'));
    const { result } = simulateProbe(shader.source, 1);
    expect(result.findings.map((finding) => [finding.category, finding.instruction])).toEqual([
      ['misaligned', expect.stringMatching(/^st\.shared\.v4\.f32 \[%r\d+\+8\], \{/)],
    ]);
  });
});
