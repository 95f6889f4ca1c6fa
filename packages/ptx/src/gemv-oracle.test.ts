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

interface OracleRowsGemv {
  readonly kernel: CatalogKernel;
  /** File prefix of the 64 × 512 oracle vectors. */
  readonly oracle: string;
  /** The weight buffer's bytes from the native GGUF rows. */
  readonly layout: (native: Uint8Array) => Uint8Array;
  /** x_factors floats a 32-value group. */
  readonly factors: number;
  /** Weight bytes requested per weight byte, and sector efficiency, the step geometry gives. */
  readonly requestedRatio: number;
  readonly weightSectorEfficiency: number;
}

// Per block: 3 pieces × 4 lanes × 3 word pairs, 2 halves × 3 scale words, the d word: 316 of 210.
const REQUESTED_Q6K = 316 / 210;
// Its requests touch 30.25 sectors a block in all (8 bytes of a sector a lane and pair): 316 / 968.
const SECTORS_Q6K = 316 / 968;
const ROWS_CASES: readonly OracleRowsGemv[] = [
  // Lanes of a block share its header's request; header and qs runs are separate requests over
  // shared sectors: 3/4 of the sector bytes used.
  {
    kernel: q4kGemv,
    oracle: 'Q4_K',
    layout: (w) => w,
    factors: 5,
    requestedRatio: 1,
    weightSectorEfficiency: 0.75,
  },
  // A lane asks for the three 16-byte vectors holding its 34-byte block, each alone in its sector;
  // L1 serves the overlap of neighbouring lanes' windows.
  {
    kernel: q8_0Gemv,
    oracle: 'Q8_0',
    layout: (w) => w,
    factors: 1,
    requestedRatio: 48 / 34,
    weightSectorEfficiency: 0.5,
  },
  // 448-byte rows for 420 payload bytes: ql and qh in whole sectors, the 32 scale bytes and the 4
  // d bytes each in a request of their own; each GGUF byte requested once, padding never.
  {
    kernel: q6kSoaGemv,
    oracle: 'Q6_K',
    layout: (w) => repack('q6_K', w, 64, 512),
    factors: 5,
    requestedRatio: 1,
    weightSectorEfficiency: 0.9375,
  },
  // Native 210-byte blocks: a lane asks for the 3 aligned word pairs holding each 16-byte piece,
  // the 3 words holding its 8 scale bytes and the d word; L1 serves the words neighbouring lanes
  // ask for again.
  {
    kernel: q6kGemv,
    oracle: 'Q6_K',
    layout: (w) => w,
    factors: 5,
    requestedRatio: REQUESTED_Q6K,
    weightSectorEfficiency: SECTORS_Q6K,
  },
];

// The row-streaming gemvs quantize x in a dispatch of their own, then stream rows: 64 rows are 8
// groups of 4 warps × 2 rows, so 1 or 2 row workgroups cover the grid-stride loop.
for (const {
  kernel,
  oracle,
  layout,
  factors,
  requestedRatio,
  weightSectorEfficiency,
} of ROWS_CASES) {
  const entry = kernel.spec.entryPoint;
  describe(`${kernel.spec.id} on the PTX simulator against ggml's oracle`, () => {
    const groups = distinctBodies((arch) => emitPtx(kernel.spec, {}, ptxTarget(arch)));
    for (const [group, grid] of groups.flatMap((body) => [2, 1].map((g) => [body, g] as const))) {
      it(`64 x 512 on ${group.archs.join('+')}, ${grid} row workgroups: y within tolerance, each weight byte read from DRAM once`, () => {
        expect(bodyMismatches(group)).toEqual([]);
        const native = bytes(`${oracle}_64x512.w.bin`);
        const w = layout(native);
        const x = bytes(`${oracle}_64x512.x.f32`);
        const y = new Float32Array(64);
        const args = {
          param_w: { kind: 'buffer', bytes: asBytes(packWords(w)) },
          param_x: { kind: 'buffer', bytes: x.slice() },
          param_y: { kind: 'buffer', bytes: asBytes(y) },
          param_x_quant: { kind: 'buffer', bytes: new Uint8Array(512 * 2) },
          param_x_factors: { kind: 'buffer', bytes: new Uint8Array((512 / 32) * factors * 4) },
          param_n_in: { kind: 'scalar', value: 512 },
          param_n_out: { kind: 'scalar', value: 64 },
        } as const;
        const module = parsePtx(group.shader.source);
        // The quantizing dispatch: a warp a workgroup, a thread a 32-value group (16 groups here).
        const quantize = simulate(module, { entry, grid: [1, 1, 1], block: [32, 1, 1], args });
        const rows = simulate(module, { entry: `${entry}_rows`, grid: [grid, 1, 1], block: [128, 1, 1], args }); // prettier-ignore
        expect([...quantize.findings, ...rows.findings]).toEqual([]);
        const exact = new Float32Array(bytes(`${oracle}_64x512.y.f32`).buffer);
        expect(normalizedMse(y, exact)).toBeLessThanOrEqual(kernel.tolerance);
        const { counters } = rows;
        expect(counters.buffers['param_w']?.requestedBytes).toBe(native.length * requestedRatio);
        expect(sectorEfficiency(counters, ['param_w'])).toBe(weightSectorEfficiency);
        expect(dramBytesRead(counters, ['param_w'])).toBeLessThanOrEqual(1.02 * w.length);
        // x is read once, by the quantizing dispatch, a thread a 32-value group.
        expect(quantize.counters.buffers['param_x']?.bytesRead).toBe(x.length);
        expect(quantize.counters.buffers['param_x']?.dramBytesRead).toBe(x.length);
        expect(rows.counters.buffers['param_x']?.bytesRead).toBe(0);
      });
    }
  });
}
