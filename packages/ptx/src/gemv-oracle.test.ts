import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packWords, repack } from '@forge/ir/gguf';
import {
  normalizedMse,
  q4kGemv,
  q6kGemv,
  q6kSoaGemv,
  q8_0Gemv,
  type CatalogKernel,
} from '@forge/ir/kernels';
import { dramBytesRead, parsePtx, sectorEfficiency, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { ptxTarget } from './targets.js';
import { bodyMismatches, distinctBodies } from './arch-bodies.test-support.js';

const ORACLE = new URL('../../../fixtures/ggml/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const asBytes = (array: Float32Array | Uint32Array): Uint8Array =>
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

interface OracleGemv {
  readonly kernel: CatalogKernel;
  /** File prefix of the 64 × 512 oracle vectors. */
  readonly oracle: string;
  /** The weight buffer's bytes from the native GGUF rows. */
  readonly layout: (native: Uint8Array) => Uint8Array;
  /** Weight sector efficiency the 64 × 512 row geometry gives, exactly. */
  readonly weightSectorEfficiency: number;
  /** x bytes the 64 rows load over 64 · |x|: above 1 where neighbouring lanes share an x chunk, below where rows share x loads. */
  readonly xReadRatio: number;
}

const CASES: readonly OracleGemv[] = [
  // 544-byte rows start on 32-byte sectors and are read in whole sectors. Two rows per warp share
  // each x load (× 1/2); a word holding a d and two quants pairs with 2 x in the chunk its
  // neighbour loads too (× 17/16).
  {
    kernel: q8_0Gemv,
    oracle: 'Q8_0_64x512',
    layout: (w) => w,
    weightSectorEfficiency: 1,
    xReadRatio: 0.53125,
  },
  // 288-byte rows start on 32-byte sectors and are read in whole sectors. A warp streams two rows
  // at once and loads their x once: 32 · |x| for the 64 rows.
  {
    kernel: q4kGemv,
    oracle: 'Q4_K_64x512',
    layout: (w) => w,
    weightSectorEfficiency: 1,
    xReadRatio: 0.5,
  },
  // 420-byte rows start mid-sector (16-byte steps): 15 sectors or 14 for 420 bytes, 93.75% overall.
  {
    kernel: q6kGemv,
    oracle: 'Q6_K_64x512',
    layout: (w) => w,
    weightSectorEfficiency: 0.9375,
    xReadRatio: 1,
  },
  // 14 sectors a 448-byte row for its 420 payload bytes: ql 8, qh 4, scales 1 and the d sector.
  // Two rows per warp share their x loads.
  {
    kernel: q6kSoaGemv,
    oracle: 'Q6_K_64x512',
    layout: (w) => repack('q6_K', w, 64, 512),
    weightSectorEfficiency: 0.9375,
    xReadRatio: 0.5,
  },
];

for (const { kernel, oracle, layout, weightSectorEfficiency, xReadRatio } of CASES) {
  describe(`${kernel.spec.id} on the PTX simulator against ggml's oracle`, () => {
    // Once per distinct PTX body; 3 workgroups for the 16 row groups cover the grid-stride loop.
    const groups = distinctBodies((arch) => emitPtx(kernel.spec, {}, ptxTarget(arch)));
    for (const [group, grid] of groups.flatMap((body) => [16, 3].map((g) => [body, g] as const))) {
      it(`64 x 512 on ${group.archs.join('+')}, ${grid} workgroups: exact y within 1e-10 NMSE, each weight byte loaded once`, () => {
        expect(bodyMismatches(group)).toEqual([]);
        const native = bytes(`${oracle}.w.bin`);
        const w = layout(native);
        const x = bytes(`${oracle}.x.f32`);
        const y = new Float32Array(64);
        const shader = group.shader;
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
        const exact = new Float32Array(bytes(`${oracle}.y.f32`).buffer);
        expect(normalizedMse(y, exact)).toBeLessThanOrEqual(kernel.tolerance);
        // Every weight byte of the GGUF rows is loaded exactly once; layout padding never.
        const { counters } = result;
        expect(counters.buffers['param_w']?.bytesRead).toBe(native.length);
        expect(sectorEfficiency(counters, ['param_w'])).toBe(weightSectorEfficiency);
        expect(sectorEfficiency(counters, ['param_w'])).toBeGreaterThanOrEqual(0.9);
        // Behind a modeled L2, x is fetched from DRAM about once however many rows re-read it.
        expect(dramBytesRead(counters)).toBeLessThanOrEqual(
          1.02 * w.length + x.length + y.byteLength,
        );
        expect(counters.buffers['param_x']?.bytesRead).toBe(64 * x.length * xReadRatio);
        // x comes in 16-byte vectors from adjacent lanes: requests fill whole sectors, or nearly.
        expect(sectorEfficiency(counters, ['param_x'])).toBeGreaterThanOrEqual(0.95);
        expect(counters.buffers['param_x']?.dramBytesRead).toBe(x.length);
      });
    }
  });
}
