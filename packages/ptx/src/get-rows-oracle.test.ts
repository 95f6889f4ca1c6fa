import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packWords } from '@forge/ir/gguf';
import { getRowsQ4k, getRowsQ6k, getRowsQ8_0 } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';

const ORACLE = new URL('../../../fixtures/ggml/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));

// ggml's 64 x 512 oracle matrices as embedding tables (bytes a row): rows 17, 63 and 0 against
// ggml's floats.
const CASES = [
  ['Q8_0', getRowsQ8_0, 544],
  ['Q4_K', getRowsQ4k, 288],
  ['Q6_K', getRowsQ6k, 420],
] as const;
const IDS = [17, 63, 0];

describe.each(CASES)(
  'get-rows on %s on the PTX simulator against ggml’s oracle',
  (prefix, kernel, rowBytes) => {
    it('gives ggml’s dequantized rows bit for bit, the table read only at those rows', () => {
      const deq = new Float32Array(bytes(`${prefix}_64x512.deq.f32`).buffer);
      const table = packWords(bytes(`${prefix}_64x512.w.bin`));
      const out = new Float32Array(3 * 512);
      const shader = emitPtx(kernel.spec, {}, ptxTarget('sm_80'));
      const params = kernel.params({ n_vocab: 64, n_embd: 512, n_rows: 3 });
      const result = simulateShader(shader, { table, ids: Uint32Array.from(IDS), out }, params);
      expect(result.findings).toEqual([]);
      expect(out).toEqual(Float32Array.from(IDS.flatMap((id) => [...deq.subarray(512 * id, 512 * id + 512)]))); // prettier-ignore
      // DRAM moves the three rows' bytes, in whole sectors (a partial one at each end), no more.
      const read = result.counters.buffers['param_table']?.dramBytesRead ?? Infinity;
      expect(read).toBeGreaterThanOrEqual(3 * rowBytes);
      expect(read).toBeLessThanOrEqual(3 * (rowBytes + 64));
    });
  },
);
