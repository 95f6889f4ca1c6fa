import { SimulationInputError } from '../errors.js';
import type { GpuSpec } from './gpu.js';

/** What limits how many blocks an SM holds at once. */
export type OccupancyLimit = 'registers' | 'shared' | 'warps' | 'blocks';

/** How a launch sits on the GPU's SMs. */
export interface Occupancy {
  /** Blocks one SM can hold at once, and what stops it holding more. */
  readonly blocksPerSm: number;
  readonly limitedBy: OccupancyLimit;
  readonly warpsPerBlock: number;
  /** Blocks resident on the busiest SM at once (fewer than `blocksPerSm` when the grid is small). */
  readonly residentBlocks: number;
  /** Warps resident on the busiest SM: its resident blocks × warps per block. */
  readonly residentWarps: number;
  /** SMs with at least one block, and those the grid leaves idle. */
  readonly activeSms: number;
  readonly idleSms: number;
  /** Blocks the busiest SM runs over the whole launch (ceil(blocks / SMs)). */
  readonly blocksOnBusiestSm: number;
  /** Rounds of blocks: ceil(blocks / (SMs × blocks per SM)). */
  readonly waves: number;
}

/** A launch as occupancy sees it. */
export interface LaunchResources {
  readonly blocks: number;
  readonly threadsPerBlock: number;
  /** Registers per thread, as ptxas reports them (`Used N registers`). */
  readonly registers: number;
  /** Static and dynamic shared memory of one block. */
  readonly sharedBytes: number;
}

/**
 * Blocks per SM as the CUDA occupancy calculator works it out: registers are allocated per warp in
 * units of `registerAllocationUnit`, shared memory per block plus the system's reserve, and no SM
 * holds more than its warp and block limits.
 */
export function occupancy(launch: LaunchResources, gpu: GpuSpec): Occupancy {
  const { blocks, threadsPerBlock, registers, sharedBytes } = launch;
  if (!Number.isInteger(registers) || registers < 1 || registers > 255)
    throw new SimulationInputError(
      `registers per thread must be an integer in [1, 255] (ptxas's report), got ${registers}`,
    );
  const warpsPerBlock = Math.ceil(threadsPerBlock / 32);
  const unit = gpu.registerAllocationUnit;
  const registersPerWarp = Math.ceil((registers * 32) / unit) * unit;
  // On a tie the hard limits (warps, blocks) are named before the resources (registers, shared).
  const limits: [OccupancyLimit, number][] = [
    ['warps', Math.floor(gpu.maxWarpsPerSm / warpsPerBlock)],
    ['blocks', gpu.maxBlocksPerSm],
    ['registers', Math.floor(Math.floor(gpu.registersPerSm / registersPerWarp) / warpsPerBlock)],
  ];
  if (sharedBytes > 0)
    limits.push([
      'shared',
      Math.floor(gpu.sharedBytesPerSm / (sharedBytes + gpu.sharedReservedPerBlock)),
    ]);
  let [limitedBy, blocksPerSm] = limits[0] as [OccupancyLimit, number];
  for (const [name, count] of limits)
    if (count < blocksPerSm) [limitedBy, blocksPerSm] = [name, count];
  if (blocksPerSm < 1)
    throw new SimulationInputError(
      `a block of ${threadsPerBlock} threads with ${registers} registers each and ${sharedBytes} bytes of shared memory does not fit on one ${gpu.name} SM (${limitedBy})`,
    );
  const activeSms = Math.min(blocks, gpu.sms);
  const blocksOnBusiestSm = Math.ceil(blocks / gpu.sms);
  const residentBlocks = Math.min(blocksPerSm, blocksOnBusiestSm);
  return {
    blocksPerSm,
    limitedBy,
    warpsPerBlock,
    residentBlocks,
    residentWarps: residentBlocks * warpsPerBlock,
    activeSms,
    idleSms: gpu.sms - activeSms,
    blocksOnBusiestSm,
    waves: Math.ceil(blocks / (gpu.sms * blocksPerSm)),
  };
}
