import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { sectorEfficiency } from './counters.js';
import { simulate } from './simulate.js';

// block-sum.sm_80.ptx is `nvcc -ptx -arch=sm_80 -O3 block-sum.cu` (CUDA 13.0), checked in so the
// test needs no nvcc: warp shuffles with __shfl_xor_sync, then __syncthreads and shared memory.
const source = readFileSync(new URL('../fixtures/block-sum.sm_80.ptx', import.meta.url), 'utf8');

describe('a kernel compiled by nvcc', () => {
  it('sums each block of x exactly as the CUDA code says, with no findings', () => {
    const n = 1000;
    const block = 256;
    const blocks = Math.ceil(n / block);
    const x = new Float32Array(n).map((_, index) => Math.sin(index) * 10);
    const out = new Float32Array(blocks);
    const result = simulate(parsePtx(source), {
      grid: [blocks, 1, 1],
      block: [block, 1, 1],
      args: {
        block_sum_param_0: { kind: 'buffer', bytes: new Uint8Array(x.buffer) },
        block_sum_param_1: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
        block_sum_param_2: { kind: 'scalar', value: n },
      },
    });
    expect(result.findings).toEqual([]);
    for (let b = 0; b < blocks; b++) {
      let expected = 0;
      for (let i = b * block; i < Math.min(n, (b + 1) * block); i++) expected += x[i] as number;
      expect(out[b]).toBeCloseTo(expected, 3);
    }
    // Each x element is read once, in fully coalesced 4-byte loads.
    expect(result.counters.buffers['block_sum_param_0']?.bytesRead).toBe(n * 4);
    expect(sectorEfficiency(result.counters, ['block_sum_param_0'])).toBe(1);
    expect(result.counters.warpInstructions['shfl']).toBe(blocks * (8 * 5 + 5));
    expect(result.counters.warpInstructions['bar']).toBe(blocks * 8);
  });
});
