import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalizedMse, packWords, q6kGemv as kernel, type PtxArch } from '@forge/ir';
import { parsePtx, sectorEfficiency, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { ptxTarget } from './targets.js';

const ORACLE = new URL('../../../../shared/oracle/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const asBytes = (array: Float32Array | Uint32Array): Uint8Array =>
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

describe("q6k-gemv on the PTX simulator against ggml's oracle", () => {
  for (const arch of ['sm_75', 'sm_80', 'sm_90'] as const satisfies readonly PtxArch[]) {
    // sm_90 runs 3 workgroups for the 16 row groups, so the grid-stride loop is covered too.
    const grid = arch === 'sm_90' ? 3 : 16;
    it(`64 x 512 on ${arch}, ${grid} workgroups: exact y within 1e-10 NMSE, each weight byte loaded once`, () => {
      const w = bytes('Q6_K_64x512.w.bin');
      const x = bytes('Q6_K_64x512.x.f32');
      const y = new Float32Array(64);
      const shader = emitPtx(kernel.spec, {}, ptxTarget(arch));
      const result = simulate(parsePtx(shader.source), {
        grid: [grid, 1, 1],
        block: [128, 1, 1],
        args: {
          param_w: { kind: 'buffer', bytes: asBytes(packWords(w)) },
          param_x: { kind: 'buffer', bytes: x.slice() },
          param_y: { kind: 'buffer', bytes: asBytes(y) },
          param_n_in: { kind: 'scalar', value: 512 },
          param_n_out: { kind: 'scalar', value: 64 },
        },
      });
      expect(result.findings).toEqual([]);
      const exact = new Float32Array(bytes('Q6_K_64x512.y.f32').buffer);
      expect(normalizedMse(y, exact)).toBeLessThanOrEqual(kernel.tolerance);
      // 420-byte rows are whole words: every weight word is loaded once.
      const read = result.counters.buffers['param_w']?.bytesRead ?? Infinity;
      expect(read).toBeLessThanOrEqual(1.02 * w.length);
      expect(read).toBe(w.length);
      // Rows start mid-sector (16-byte steps here): 15 sectors for 420 bytes, or 14 (93.75% overall).
      expect(sectorEfficiency(result.counters, ['param_w'])).toBeGreaterThanOrEqual(0.9);
    });
  }
});
