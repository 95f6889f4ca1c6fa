import type { BufferTraffic, Counters } from './executor/counters.js';
import type { BlockSample, SimulationResult } from './executor/simulate.js';

/** Why a sample cannot stand for the whole grid, or undefined when its blocks did identical work. */
export function sampleMismatch(sample: BlockSample): string | undefined {
  // A reduce, not Math.min(...): a sample may hold more blocks than a call takes arguments.
  const least = sample.warpInstructions.reduce((a, b) => Math.min(a, b), Infinity);
  const most = sample.warpInstructions.reduce((a, b) => Math.max(a, b), -Infinity);
  return least === most
    ? undefined
    : `the ${sample.blocks} sampled blocks issued ${least} to ${most} warp instructions each, not identical work`;
}

/**
 * The counters the whole grid would give, from a run of K of its N blocks that did identical work:
 * instructions and request-level traffic scale by N/K; DRAM reads are the first block's (cold
 * misses, shared data such as a gemv's x included) plus the other blocks' mean times N - 1, since
 * shared data stays in L2; DRAM writes scale by N/K. Without a sample the counters are returned.
 */
export function scaleSample(result: SimulationResult): Counters {
  const { sample, counters } = result;
  if (sample === undefined) return counters;
  const blocks = result.grid[0] * result.grid[1] * result.grid[2];
  const factor = blocks / sample.blocks;
  const scale = (record: Readonly<Record<string, number>>): Record<string, number> =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, value * factor]));
  const buffers: Record<string, BufferTraffic> = {};
  for (const [name, traffic] of Object.entries(counters.buffers)) {
    const first = sample.firstBlockDramBytesRead[name] ?? 0;
    buffers[name] = {
      bytesRead: traffic.bytesRead * factor,
      bytesWritten: traffic.bytesWritten * factor,
      requestedBytes: traffic.requestedBytes * factor,
      sectorBytes: traffic.sectorBytes * factor,
      dramBytesRead: first + ((traffic.dramBytesRead - first) / (sample.blocks - 1)) * (blocks - 1),
      dramBytesWritten: traffic.dramBytesWritten * factor,
    };
  }
  return {
    warpInstructions: scale(counters.warpInstructions),
    warpInstructionsByClass: scale(
      counters.warpInstructionsByClass,
    ) as Counters['warpInstructionsByClass'],
    threadInstructions: counters.threadInstructions * factor,
    buffers,
  };
}
