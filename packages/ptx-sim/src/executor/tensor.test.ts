import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { simulate } from './simulate.js';

// mma-tile.sm_80.ptx is `nvcc -ptx -arch=sm_80 -O3 mma-tile.cu` (CUDA 13.0): ldmatrix.x4 / .x2 from
// shared memory, then mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, as CUTLASS-style code does.
const source = readFileSync(new URL('../fixtures/mma-tile.sm_80.ptx', import.meta.url), 'utf8');

/** Small integers and halves are exact in f16, so the product is exact in f32. */
function f16Bits(value: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  const bits = view.getUint32(0);
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  return value === 0 ? 0 : ((bits >>> 16) & 0x8000) | (exponent << 10) | ((bits >>> 13) & 0x3ff);
}

describe('tensor cores: ldmatrix + mma.sync compiled by nvcc', () => {
  it('computes D = A·B + C for a 16x16 by 16x8 tile with no findings', () => {
    const a = Array.from({ length: 256 }, (_, index) => ((index * 7) % 11) - 5);
    const b = Array.from({ length: 128 }, (_, index) => (((index * 5) % 9) - 4) / 2);
    const c = Array.from({ length: 128 }, (_, index) => index / 4);
    const d = new Float32Array(128);
    const result = simulate(parsePtx(source), {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: {
        mma_tile_param_0: {
          kind: 'buffer',
          bytes: new Uint8Array(new Uint16Array(a.map(f16Bits)).buffer),
        },
        mma_tile_param_1: {
          kind: 'buffer',
          bytes: new Uint8Array(new Uint16Array(b.map(f16Bits)).buffer),
        },
        mma_tile_param_2: { kind: 'buffer', bytes: new Uint8Array(new Float32Array(c).buffer) },
        mma_tile_param_3: { kind: 'buffer', bytes: new Uint8Array(d.buffer) },
      },
    });
    expect(result.findings).toEqual([]);
    for (let row = 0; row < 16; row++) {
      for (let col = 0; col < 8; col++) {
        let expected = c[row * 8 + col] as number;
        // B is column-major: element (k, col) at col * 16 + k.
        for (let k = 0; k < 16; k++)
          expected += (a[row * 16 + k] as number) * (b[col * 16 + k] as number);
        expect(d[row * 8 + col]).toBe(expected);
      }
    }
    expect(result.counters.warpInstructions['mma']).toBe(1);
    expect(result.counters.warpInstructions['ldmatrix']).toBe(2);
  });

  it('reports an mma that only part of the warp reaches', () => {
    const result = simulate(parsePtx(source), {
      grid: [1, 1, 1],
      block: [16, 1, 1],
      args: Object.fromEntries(
        [0, 1, 2, 3].map((index) => [
          `mma_tile_param_${index}`,
          { kind: 'buffer' as const, bytes: new Uint8Array(1024) },
        ]),
      ),
    });
    expect(result.findings.map((finding) => finding.category)).toContain('shuffle-mask');
  });
});
