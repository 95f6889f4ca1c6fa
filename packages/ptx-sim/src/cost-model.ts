import type { Counters } from './executor/counters.js';
import type { IssueClass } from './executor/issue-class.js';

/**
 * A GPU's published figures, as the cost model uses them. Per-class rates are warp instructions
 * per clock per SM (lanes per clock / 32), from the CUDA C++ Programming Guide's "Throughput of
 * Native Arithmetic Instructions" table (results per clock cycle per multiprocessor, columns
 * 8.0 and 9.0); where that table is silent the source is named at the field.
 */
export interface GpuSpec {
  /** Name as `--gpu` takes it. */
  readonly name: string;
  /** Compute capability of its SMs. */
  readonly arch: 'sm_80' | 'sm_90';
  /** Streaming multiprocessors. */
  readonly sms: number;
  /** Boost clock in Hz. */
  readonly clockHz: number;
  /** Warp schedulers (SM sub-partitions) per SM, each issuing one warp instruction per clock. */
  readonly schedulersPerSm: number;
  /** Warp instructions per clock per SM, by class; `control` is bounded by the schedulers alone. */
  readonly classRates: Readonly<Record<Exclude<IssueClass, 'control'>, number>>;
  /** Most blocks resident on one SM (CUDA Programming Guide, "Technical Specifications": 32). */
  readonly maxBlocksPerSm: number;
  /** Most threads resident on one SM (2048 on sm_80 and sm_90). */
  readonly maxThreadsPerSm: number;
  /** DRAM bandwidth in bytes per second. */
  readonly dramBytesPerSecond: number;
  /** L2 bandwidth in bytes per second. */
  readonly l2BytesPerSecond: number;
}

// Rates shared by sm_80 and sm_90 (Programming Guide table, results/clk/SM ÷ 32 lanes).
const COMMON_RATES = {
  // 32-bit integer add/sub/mul/mad, shift, compare/min/max, bitwise: 64 results → 2.
  int: 2,
  // 16-bit floating-point add/multiply/multiply-add: 256 results, i.e. 128 lanes of f16x2 → 4.
  fp16: 4,
  // 32-bit reciprocal, rsqrt, log2, exp2, sine, cosine (MUFU): 16 → 0.5.
  sfu: 0.5,
  // Type conversions to/from 64-bit types and "all other type conversions": 16 → 0.5.
  conversion: 0.5,
  // Population count, count of leading zeros, bit reverse: 16 → 0.5.
  bitcount: 0.5,
  // Warp shuffle: 32 → 1.
  shuffle: 1,
  // Loads/stores: 32 LD/ST units per SM (A100 and H100 whitepapers, 8 per sub-partition) → 1.
  memory: 1,
} as const;

// L2 bytes per clock (A100 whitepaper: 5120 B/clk; H100 assumed the same per clock — NVIDIA publishes no figure).
const L2_BYTES_PER_CLOCK = 5120;

function gpu(
  spec: Omit<
    GpuSpec,
    'l2BytesPerSecond' | 'maxBlocksPerSm' | 'maxThreadsPerSm' | 'schedulersPerSm'
  >,
): GpuSpec {
  return {
    ...spec,
    schedulersPerSm: 4,
    maxBlocksPerSm: 32,
    maxThreadsPerSm: 2048,
    l2BytesPerSecond: L2_BYTES_PER_CLOCK * spec.clockHz,
  };
}

/** The GPUs the cost model knows, by name. */
export const GPUS: Readonly<Record<string, GpuSpec>> = {
  // NVIDIA A100 Tensor Core GPU Architecture whitepaper / datasheet: 108 SMs, 1410 MHz boost, 2039 GB/s (80 GB SXM4).
  A100: gpu({
    name: 'A100',
    arch: 'sm_80',
    sms: 108,
    clockHz: 1.41e9,
    // FP32 64 results/clk/SM on 8.0 (64 FP32 cores per SM) → 2; FP64 32 → 1; mma.m16n8k16 f16: 1024 dense FMA/clk/SM ÷ 2048 → 0.5.
    classRates: { ...COMMON_RATES, fp32: 2, fp64: 1, tensor: 0.5 },
    dramBytesPerSecond: 2.039e12,
  }),
  // NVIDIA H100 datasheet / Hopper whitepaper: H100 SXM5 132 SMs, 1980 MHz boost, 3.35 TB/s HBM3.
  H100: gpu({
    name: 'H100',
    arch: 'sm_90',
    sms: 132,
    clockHz: 1.98e9,
    // FP32 128 results/clk/SM on 9.0 → 4; FP64 64 → 2; mma.m16n8k16 f16: 2048 dense FMA/clk/SM ÷ 2048 → 1.
    classRates: { ...COMMON_RATES, fp32: 4, fp64: 2, tensor: 1 },
    dramBytesPerSecond: 3.35e12,
  }),
  // NVIDIA H200 datasheet: the H100 SXM5 die (132 SMs, 1980 MHz) with 141 GB HBM3e at 4.8 TB/s.
  H200: gpu({
    name: 'H200',
    arch: 'sm_90',
    sms: 132,
    clockHz: 1.98e9,
    classRates: { ...COMMON_RATES, fp32: 4, fp64: 2, tensor: 1 },
    dramBytesPerSecond: 4.8e12,
  }),
};

/** A cost-model estimate for one launch on one GPU. */
export interface Estimate {
  readonly gpu: string;
  /** Time the busiest SM needs to issue its warp instructions. */
  readonly issueSeconds: number;
  /** max(DRAM bytes / DRAM bandwidth, L2 sector bytes / L2 bandwidth). */
  readonly memorySeconds: number;
  /** max(issueSeconds, memorySeconds); no launch overhead is added. */
  readonly seconds: number;
  /** DRAM bytes / seconds / DRAM bandwidth. */
  readonly bandwidthFraction: number;
  /** What bounds the estimate: `issue` (the schedulers), an instruction class (`fp32`, `sfu`, …), `DRAM` or `L2`. */
  readonly bound: string;
  /** SMs the grid occupies: min(blocks, SMs). */
  readonly activeSms: number;
  /** Blocks the busiest SM runs, over all waves: ceil(blocks / SMs). */
  readonly blocksPerSm: number;
  /** Sub-partitions in use on the busiest SM: min(schedulers, resident warps). */
  readonly schedulersUsed: number;
}

/** A launch's grid in blocks and block in threads (a `SimulationResult` is one). */
export interface LaunchShape {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
}

/** The named GPU, or undefined; names match case-insensitively. */
export function findGpu(name: string): GpuSpec | undefined {
  const key = Object.keys(GPUS).find((known) => known.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : GPUS[key];
}

/**
 * Estimates a launch's time on `gpu` from a simulation's counters. Blocks are assumed to do equal
 * work and to be spread evenly over the SMs, so the busiest SM runs ceil(blocks / SMs) of them;
 * its issue time is the larger of its warp instructions over the schedulers it can use and, per
 * class, its instructions of that class over the class's rate (scaled by the share of
 * sub-partitions in use). Memory time is DRAM bytes over DRAM bandwidth, or L2 sector traffic
 * over L2 bandwidth if larger. Latency is not modeled: a dependent chain is taken to issue at
 * full rate.
 */
export function estimate(counters: Counters, launch: LaunchShape, spec: GpuSpec): Estimate {
  const blocks = launch.grid[0] * launch.grid[1] * launch.grid[2];
  const threads = launch.block[0] * launch.block[1] * launch.block[2];
  const warpsPerBlock = Math.ceil(threads / 32);
  const activeSms = Math.min(blocks, spec.sms);
  const blocksPerSm = Math.ceil(blocks / spec.sms);
  // Residency from threads alone (no register or shared-memory limit): min(32 blocks, 2048 threads).
  const residentBlocks = Math.max(
    1,
    Math.min(spec.maxBlocksPerSm, Math.floor(spec.maxThreadsPerSm / (warpsPerBlock * 32))),
  );
  const residentWarps = Math.min(blocksPerSm, residentBlocks) * warpsPerBlock;
  const schedulersUsed = Math.min(spec.schedulersPerSm, residentWarps);
  const share = blocksPerSm / blocks;
  const byClass = counters.warpInstructionsByClass;
  let total = 0;
  let cycles = 0;
  let bound = 'issue';
  for (const [name, count] of Object.entries(byClass) as [IssueClass, number][]) {
    total += count;
    if (name === 'control') continue;
    const rate = spec.classRates[name] * (schedulersUsed / spec.schedulersPerSm);
    const classCycles = (count * share) / rate;
    if (classCycles > cycles) {
      cycles = classCycles;
      bound = name;
    }
  }
  const schedulerCycles = (total * share) / schedulersUsed;
  if (schedulerCycles >= cycles) {
    cycles = schedulerCycles;
    bound = 'issue';
  }
  const issueSeconds = blocks === 0 ? 0 : cycles / spec.clockHz;
  const { dramBytes, l2Bytes } = memoryTraffic(counters);
  const dramSeconds = dramBytes / spec.dramBytesPerSecond;
  const l2Seconds = l2Bytes / spec.l2BytesPerSecond;
  const memorySeconds = Math.max(dramSeconds, l2Seconds);
  const seconds = Math.max(issueSeconds, memorySeconds);
  if (memorySeconds > issueSeconds) bound = dramSeconds >= l2Seconds ? 'DRAM' : 'L2';
  return {
    gpu: spec.name,
    issueSeconds,
    memorySeconds,
    seconds,
    bandwidthFraction: seconds === 0 ? 0 : dramBytes / seconds / spec.dramBytesPerSecond,
    bound,
    activeSms,
    blocksPerSm,
    schedulersUsed,
  };
}

/** DRAM bytes (read and written) and L2 sector bytes over every buffer. */
function memoryTraffic(counters: Counters): { dramBytes: number; l2Bytes: number } {
  let dramBytes = 0;
  let l2Bytes = 0;
  for (const traffic of Object.values(counters.buffers)) {
    dramBytes += traffic.dramBytesRead + traffic.dramBytesWritten;
    l2Bytes += traffic.sectorBytes;
  }
  return { dramBytes, l2Bytes };
}

/** One launch of a sequence: its counters and its own grid and block (a `SimulationResult` is one). */
export interface SequencePart extends LaunchShape {
  readonly counters: Counters;
}

/**
 * A cost-model estimate for a sequence of launches. `issueSeconds`, `memorySeconds` and `seconds`
 * are the dispatches' sums; `bound`, `activeSms`, `blocksPerSm` and `schedulersUsed` are those of
 * the dispatch that takes the most time (the first such on a tie), whose index `dominant` gives.
 */
export interface SequenceEstimate extends Estimate {
  /** Each dispatch's own estimate, in launch order. */
  readonly dispatches: readonly Estimate[];
  /** Index in `dispatches` of the one that takes the most time. */
  readonly dominant: number;
}

/**
 * Estimates a sequence of launches (a multi-dispatch kernel such as a split-KV attention and its
 * combine) on `gpu`: each dispatch is estimated by `estimate` on its own grid and block, and the
 * times are summed, since the dispatches run one after another (no overlap or launch gap is
 * modeled). The bandwidth fraction is the summed DRAM bytes over the summed time. A sequence of one
 * gives that launch's `estimate`, with `dispatches` added.
 */
export function estimateSequence(parts: readonly SequencePart[], spec: GpuSpec): SequenceEstimate {
  const dispatches = parts.map((part) => estimate(part.counters, part, spec));
  const [first] = dispatches;
  if (first === undefined) throw new RangeError('estimateSequence: no dispatches');
  let dominant = 0;
  let longest = first;
  dispatches.forEach((dispatch, index) => {
    if (dispatch.seconds > longest.seconds) [dominant, longest] = [index, dispatch];
  });
  const sum = (field: (dispatch: Estimate) => number): number =>
    dispatches.reduce((total, dispatch) => total + field(dispatch), 0);
  const seconds = sum((dispatch) => dispatch.seconds);
  const dramBytes = parts.reduce(
    (total, part) => total + memoryTraffic(part.counters).dramBytes,
    0,
  );
  return {
    ...longest,
    issueSeconds: sum((dispatch) => dispatch.issueSeconds),
    memorySeconds: sum((dispatch) => dispatch.memorySeconds),
    seconds,
    bandwidthFraction: seconds === 0 ? 0 : dramBytes / seconds / spec.dramBytesPerSecond,
    dispatches,
    dominant,
  };
}

function duration(seconds: number): string {
  if (seconds >= 1e-3) return `${(seconds * 1e3).toPrecision(3)} ms`;
  return `${(seconds * 1e6).toPrecision(3)} µs`;
}

/**
 * One line: `estimate H200: 12.3 µs (issue 10.1 µs, memory 12.3 µs), 91% of DRAM bandwidth,
 * DRAM-bound on 132 SMs`; a sequence of several dispatches adds each one's time and bound, e.g.
 * `; 2 dispatches: 11.9 µs DRAM-bound + 0.4 µs issue-bound`.
 */
export function formatEstimate(result: Estimate | SequenceEstimate): string {
  const line = `estimate ${result.gpu}: ${duration(result.seconds)} (issue ${duration(result.issueSeconds)}, memory ${duration(result.memorySeconds)}), ${(result.bandwidthFraction * 100).toFixed(0)}% of DRAM bandwidth, ${result.bound}-bound on ${result.activeSms} SMs`;
  if (!('dispatches' in result) || result.dispatches.length < 2) return line;
  const parts = result.dispatches.map((part) => `${duration(part.seconds)} ${part.bound}-bound`);
  return `${line}; ${result.dispatches.length} dispatches: ${parts.join(' + ')}`;
}
