import { afterAll, describe, expect, it } from 'vitest';
import { MMA_PROBE, mmaProbeCase } from '@forge/test-fixtures';
import { UnsupportedError, interpret } from '@forge/ir';
import { normalizedMse } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { wgslDiagnostics } from './runner/compile.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget, type WgslFeature } from './targets.js';

afterAll(closeSharedWebGpu);

const PAIRS = 2;
const K_CHUNKS = 3;

describe('mma on WebGPU', () => {
  it('exchanges fragments through workgroup memory: two barriers and a loop over k, no f16 feature', () => {
    const shader = emitWgsl(MMA_PROBE, {}, wgslTarget([]));
    expect(shader.source).not.toContain('enable f16');
    expect(shader.source).not.toContain('forge_warp_scratch');
    // 4 A and 2 B words per invocation (64 of them): 1536 bytes, counted in the launch.
    expect(shader.source).toContain('var<workgroup> forge_mma_a: array<u32, 256>;');
    expect(shader.source).toContain('var<workgroup> forge_mma_b: array<u32, 128>;');
    expect(shader.launch.sharedBytes).toBe(1536);
    expect(shader.source.match(/workgroupBarrier\(\);/g)).toHaveLength(2);
    // D starts from C and adds the 16 products in increasing k: two per pass of an 8-pass loop.
    expect(shader.source).toMatch(/var v_d0: f32 = v_acc0;/);
    // Eight passes, a count the compiler cannot fold (so lavapipe does not unroll the loop).
    expect(shader.source).toMatch(
      /let (forge_t\d+): u32 = select\(8u, 0u, num_workgroups.x == 0u\);\n\s*for \(var (forge_t\d+): u32 = 0u; \2 < \1;/,
    );
    expect(
      shader.source.match(/v_d0 = v_d0 \+ forge_t\d+\.[xy] \* forge_t\d+\.[xy];/g),
    ).toHaveLength(2);
  });

  it('counts its exchange arrays against the workgroup memory limit, naming shared', () => {
    const json = JSON.parse(JSON.stringify(MMA_PROBE)) as { shared: unknown[] };
    // 31 KiB of the probe's own plus 1.5 KiB of exchange passes the 32 KiB the backend allows.
    json.shared = [{ name: 'pad', element: 'u32', length: '7936' }];
    expect(() => emitWgsl(json, {}, wgslTarget([]))).toThrow(
      /shared: 33280 bytes of workgroup memory \(incl\. 1536 for warp exchange\) exceed 32768/,
    );
  });

  it('rejects an mma in warp-uniform but not workgroup-uniform control flow, naming op and path', () => {
    const json = JSON.parse(JSON.stringify(MMA_PROBE)) as { body: unknown[] };
    const index = json.body.findIndex((s) => (s as { op: string }).op === 'for');
    json.body[index] = {
      op: 'if',
      condition: { op: 'eq', type: 'bool', args: [{ op: 'builtin', type: 'u32', name: 'warp_id' }, { op: 'const', type: 'u32', value: 0 }] }, // prettier-ignore
      then: [json.body[index]],
      else: [],
    };
    // Valid IR (and fine on PTX), but WGSL's warp exchanges need the whole workgroup.
    expect(() => emitWgsl(json, {}, wgslTarget([]))).toThrow(UnsupportedError);
    expect(() => emitWgsl(json, {}, wgslTarget([]))).toThrow(
      new RegExp(
        `does not support op 'mma': body\\[${index}\\]\\.then\\[0\\]\\.body\\[\\d+\\]: WGSL emulates`,
      ),
    );
  });

  for (const features of [[], ['f16', 'subgroups']] as (readonly WgslFeature[])[]) {
    it(`compiles in Tint and matches the interpreter bit for bit, features ${features.join(',') || 'none'}`, async () => {
      const shader = emitWgsl(MMA_PROBE, {}, wgslTarget(features));
      const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
      expect(await wgslDiagnostics(context, shader.source)).toEqual([]);
      const { a, b, c, reference } = mmaProbeCase(PAIRS, K_CHUNKS);
      const d = new Float32Array(PAIRS * 256);
      await runWgsl(context, shader, {
        buffers: { a, b, c, d },
        params: { k_chunks: K_CHUNKS, pairs: PAIRS },
      });
      expect(normalizedMse(d, reference)).toBeLessThan(1e-12);
      const expected = new Float32Array(PAIRS * 256);
      interpret(MMA_PROBE, {
        params: { k_chunks: K_CHUNKS, pairs: PAIRS },
        buffers: { a, b, c, d: expected },
      });
      expect([...d]).toEqual([...expected]);
    });
  }
});
