import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { packWords } from '@forge/ir/gguf';
import { getRowsQ4k, getRowsQ6k, getRowsQ8_0 } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';

afterAll(closeSharedWebGpu);

const ORACLE = new URL('../../../fixtures/ggml/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));

// ggml's 64 x 512 oracle matrices as embedding tables: rows 17, 63 and 0 against ggml's floats.
const CASES = [
  ['Q8_0', getRowsQ8_0],
  ['Q4_K', getRowsQ4k],
  ['Q6_K', getRowsQ6k],
] as const;
const IDS = [17, 63, 0];

describe.each(CASES)('get-rows on %s on WebGPU against ggml’s oracle', (prefix, kernel) => {
  it('gives ggml’s dequantized rows bit for bit', async () => {
    const deq = new Float32Array(bytes(`${prefix}_64x512.deq.f32`).buffer);
    const shader = emitWgsl(kernel.spec, {}, wgslTarget([]));
    const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
    const table = packWords(bytes(`${prefix}_64x512.w.bin`));
    const buffers = { table, ids: Uint32Array.from(IDS), out: new Float32Array(3 * 512) };
    const params = kernel.params({ n_vocab: 64, n_embd: 512, n_rows: 3 });
    await runWgsl(context, shader, { buffers, params });
    expect(buffers.out).toEqual(Float32Array.from(IDS.flatMap((id) => [...deq.subarray(512 * id, 512 * id + 512)]))); // prettier-ignore
  });
});
