import { describe, expect, it } from 'vitest';
import { GPUS, type GpuSpec } from './gpu.js';
import { occupancy } from './occupancy.js';

const H200 = GPUS['H200'] as GpuSpec;
const A100 = GPUS['A100'] as GpuSpec;

describe('occupancy', () => {
  it.each([
    // 256 threads × 32 registers: 8 warps of 1024 registers, 64 warps fit: the warp limit.
    { gpu: H200, threads: 256, registers: 32, shared: 0, blocks: 8, limit: 'warps' },
    // 128 registers: 4096 a warp, 16 warps of the 64K file: 2 blocks of 8 warps.
    { gpu: H200, threads: 256, registers: 128, shared: 0, blocks: 2, limit: 'registers' },
    // 40 registers round up to 1280 a warp (units of 256): 51 warps, 6 blocks of 8.
    { gpu: H200, threads: 256, registers: 40, shared: 0, blocks: 6, limit: 'registers' },
    // 48 KiB of shared memory and 1 KiB reserved each: 4 blocks of 228 KiB, 3 of A100's 164 KiB.
    { gpu: H200, threads: 128, registers: 32, shared: 48 * 1024, blocks: 4, limit: 'shared' },
    { gpu: A100, threads: 128, registers: 32, shared: 48 * 1024, blocks: 3, limit: 'shared' },
    // 32-thread blocks stop at 32 blocks an SM: half the warps.
    { gpu: A100, threads: 32, registers: 16, shared: 0, blocks: 32, limit: 'blocks' },
  ] as const)(
    '$threads threads, $registers registers, $shared shared bytes on $gpu.name: $blocks blocks ($limit)',
    ({ gpu, threads, registers, shared, blocks, limit }) => {
      const placed = occupancy(
        { blocks: 10_000, threadsPerBlock: threads, registers, sharedBytes: shared },
        gpu,
      );
      expect([placed.blocksPerSm, placed.limitedBy]).toEqual([blocks, limit]);
      expect(placed.residentWarps).toBe(blocks * Math.ceil(threads / 32));
    },
  );

  it('a small grid leaves SMs idle and each busy SM holds its few blocks', () => {
    const placed = occupancy(
      { blocks: 128, threadsPerBlock: 256, registers: 64, sharedBytes: 0 },
      H200,
    );
    expect(placed).toMatchObject({
      activeSms: 128,
      idleSms: 4,
      residentBlocks: 1,
      residentWarps: 8,
      waves: 1,
    });
    const many = occupancy(
      { blocks: 4096, threadsPerBlock: 128, registers: 40, sharedBytes: 0 },
      H200,
    );
    expect(many).toMatchObject({
      blocksOnBusiestSm: 32,
      blocksPerSm: 12,
      residentWarps: 48,
      waves: 3,
    });
  });

  it('refuses a register count ptxas cannot give and a block no SM can hold', () => {
    const launch = { blocks: 1, threadsPerBlock: 1024, sharedBytes: 0 };
    expect(() => occupancy({ ...launch, registers: 0 }, H200)).toThrow(/registers per thread/);
    expect(() => occupancy({ ...launch, registers: 128 }, H200)).toThrow(/does not fit/);
  });
});
