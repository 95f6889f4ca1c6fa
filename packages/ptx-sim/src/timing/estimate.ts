import type { Counters } from '../executor/counters.js';
import type { BlockTrace } from '../executor/trace.js';
import type { GpuSpec } from './gpu.js';
import type { InstructionTiming } from './instruction-timing.js';
import type { Occupancy } from './occupancy.js';
import { hoistLoads } from './hoist-loads.js';
import { replaySm } from './sm-model.js';

/** What binds a launch's time. */
export type Bound = 'latency' | 'issue' | 'shared' | 'DRAM' | 'L2' | 'launch';

/** The timing model's estimate of one launch on one GPU. */
export interface Estimate {
  readonly gpu: string;
  /** The kernel's time on the device, launch gap excluded. */
  readonly seconds: number;
  /** The gap a dependent launch of it adds on a stream (graph replay: `estimateSequence`). */
  readonly launchSeconds: number;
  /** DRAM bytes (read and written) over `seconds`, as a share of the DRAM bandwidth. */
  readonly bandwidthFraction: number;
  /**
   * The limit that binds: the throughput bound within 80% of `seconds` (`issue`, `shared` for the
   * L1/shared data path, `DRAM`, `L2`), else `latency`; `launch` when the launch gap is longer.
   */
  readonly bound: Bound;
  /** The throughput bounds, each alone: the busiest scheduler, the data path, DRAM, L2. */
  readonly limits: {
    readonly issueSeconds: number;
    readonly sharedSeconds: number;
    readonly dramSeconds: number;
    readonly l2Seconds: number;
  };
  readonly dramBytes: number;
  readonly registers: number;
  readonly occupancy: Occupancy;
  /** Mean and peak DRAM-load bytes outstanding on the busiest SM. */
  readonly bytesInFlightPerSm: { readonly mean: number; readonly peak: number };
  /** Dependent DRAM round trips a warp waited for, mean over the timed warps. */
  readonly dramRoundTripsPerWarp: number;
  /** Shared-memory wavefronts of the whole launch and the fewest its accesses could take. */
  readonly sharedWavefronts: number;
  readonly sharedWavefrontsMinimum: number;
  /** Whether the grid was sampled (`sampleBlocks`): the timed SM replays the sampled blocks. */
  readonly sampled: boolean;
}

/** What `simulate` hands the model for one launch. */
export interface LaunchTrace {
  readonly gpu: GpuSpec;
  readonly registers: number;
  readonly occupancy: Occupancy;
  readonly blocks: number;
  /** Traced blocks: the busiest SM's (blocks 0, SMs, 2·SMs, …), or every sampled one. */
  readonly traces: readonly BlockTrace[];
  readonly sampled: boolean;
  readonly registerSlots: number;
  readonly timings: readonly InstructionTiming[];
  /** Counters of the whole grid (a sample's already scaled). */
  readonly counters: Counters;
}

/** Times a traced launch: the busiest SM replayed, bounded below by the whole grid's DRAM traffic. */
export function estimateLaunch(launch: LaunchTrace): Estimate {
  const { gpu, occupancy, traces } = launch;
  const perSm = occupancy.blocksOnBusiestSm;
  // Each warp's loads as ptxas would schedule them, once per traced block.
  const scheduled = traces.map((trace) => ({
    warps: trace.warps.map((stream) => ({
      words: hoistLoads(stream, launch.timings),
      length: stream.length,
    })),
  }));
  // A sample's blocks did identical work: they repeat to fill the busiest SM's share. The first
  // alone met data every block shares cold in L2, as the SM's first block does when the whole grid
  // is traced; the others, which found it there, stand for the SM's later blocks.
  const later = scheduled.length > 1 ? scheduled.slice(1) : scheduled;
  const blocks = launch.sampled
    ? Array.from({ length: perSm }, (_, index) =>
        index === 0 ? scheduled[0]! : later[(index - 1) % later.length]!,
      )
    : scheduled;
  const share = (bytesPerSecond: number): number =>
    Math.min(bytesPerSecond / gpu.clockHz / occupancy.activeSms, gpu.smL2BytesPerClock);
  const sm = replaySm({
    blocks,
    residentBlocks: occupancy.blocksPerSm,
    warpsPerBlock: occupancy.warpsPerBlock,
    registerSlots: launch.registerSlots,
    timings: launch.timings,
    gpu,
    dramBytesPerClock: share(gpu.dramSustainedBytesPerSecond),
    l2BytesPerClock: share(gpu.l2BytesPerSecond),
  });
  let dramBytes = 0;
  for (const traffic of Object.values(launch.counters.buffers))
    dramBytes += traffic.dramBytesRead + traffic.dramBytesWritten;
  const clock = gpu.clockHz;
  const limits = {
    issueSeconds: sm.issueCycles / clock,
    sharedSeconds: sm.dataPathCycles / clock,
    dramSeconds: Math.max(sm.dramCycles / clock, dramBytes / gpu.dramSustainedBytesPerSecond),
    // The SM's L1 misses at its share of L2: the counters' sectors include L1 hits.
    l2Seconds: sm.l2Cycles / clock,
  };
  const seconds = Math.max(sm.cycles / clock, limits.dramSeconds, limits.l2Seconds);
  const candidates: [Bound, number][] = [
    ['DRAM', limits.dramSeconds],
    ['L2', limits.l2Seconds],
    ['issue', limits.issueSeconds],
    ['shared', limits.sharedSeconds],
  ];
  let [bound, longest]: [Bound, number] = ['latency', 0.8 * seconds];
  for (const [name, value] of candidates) if (value >= longest) [bound, longest] = [name, value];
  if (gpu.launchSeconds > seconds) bound = 'launch';
  const scale = launch.blocks / Math.max(1, blocks.length);
  return {
    gpu: gpu.name,
    seconds,
    launchSeconds: gpu.launchSeconds,
    bandwidthFraction: seconds === 0 ? 0 : dramBytes / seconds / gpu.dramBytesPerSecond,
    bound,
    limits,
    dramBytes,
    registers: launch.registers,
    occupancy,
    bytesInFlightPerSm: { mean: sm.meanDramBytesInFlight, peak: sm.peakDramBytesInFlight },
    dramRoundTripsPerWarp: sm.dramRoundTripsPerWarp,
    sharedWavefronts: sm.sharedWavefronts * scale,
    sharedWavefrontsMinimum: sm.sharedWavefrontsMinimum * scale,
    sampled: launch.sampled,
  };
}

/** A chain of launches: stream launches pay `launchSeconds` each, a CUDA graph `graphLaunchSeconds`. */
export interface SequenceEstimate {
  readonly gpu: string;
  readonly graph: boolean;
  /** The kernels' device times summed. */
  readonly seconds: number;
  /** The launch gaps summed, and kernels and gaps together. */
  readonly launchSeconds: number;
  readonly totalSeconds: number;
  /** DRAM bytes over `seconds` as a share of the DRAM bandwidth. */
  readonly bandwidthFraction: number;
  readonly dramBytes: number;
  readonly dispatches: readonly Estimate[];
  /** Index of the longest dispatch; its bound is the chain's unless the launches take longer. */
  readonly dominant: number;
  readonly bound: Bound;
}

/**
 * A chain of dependent launches, each waiting for the one before: kernel times add, and so do the
 * gaps between launches (each launch's on a stream; `graph` replays them as one CUDA graph, at
 * the smaller per-node gap).
 */
export function estimateSequence(
  dispatches: readonly Estimate[],
  gpu: GpuSpec,
  options: { readonly graph?: boolean } = {},
): SequenceEstimate {
  if (dispatches.length === 0) throw new RangeError('estimateSequence: no dispatches');
  const graph = options.graph === true;
  const seconds = dispatches.reduce((sum, part) => sum + part.seconds, 0);
  const launchSeconds = dispatches.length * (graph ? gpu.graphLaunchSeconds : gpu.launchSeconds);
  const dramBytes = dispatches.reduce((sum, part) => sum + part.dramBytes, 0);
  let dominant = 0;
  dispatches.forEach((part, index) => {
    if (part.seconds > (dispatches[dominant] as Estimate).seconds) dominant = index;
  });
  const longest = (dispatches[dominant] as Estimate).bound;
  return {
    gpu: gpu.name,
    graph,
    seconds,
    launchSeconds,
    totalSeconds: seconds + launchSeconds,
    bandwidthFraction: seconds === 0 ? 0 : dramBytes / seconds / gpu.dramBytesPerSecond,
    dramBytes,
    dispatches,
    dominant,
    bound: launchSeconds > seconds ? 'launch' : longest === 'launch' ? 'latency' : longest,
  };
}
