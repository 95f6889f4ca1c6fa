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
  it('is lowered to 32 warp shuffles and f32 arithmetic, without the f16 feature', () => {
    const shader = emitWgsl(MMA_PROBE, {}, wgslTarget([]));
    expect(shader.source).not.toContain('enable f16');
    expect(shader.source.match(/\/\/ let __d0_\w+: u32 = shuffle_idx/g)).toHaveLength(32);
    // D starts from C and adds the 16 products in increasing k.
    expect(shader.source.match(/v_d0 = \(v_d0 \+ \(unpack2x16float/g)).toHaveLength(16);
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
