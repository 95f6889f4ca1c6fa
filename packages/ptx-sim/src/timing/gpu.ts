import type { IssueClass } from '../executor/issue-class.js';

/** Cycles from an instruction's issue until a dependent one may use its result. */
export interface Latencies {
  /** Arithmetic results, by issue class (the scoreboard's wait for a dependent instruction). */
  readonly classes: Readonly<Record<IssueClass, number>>;
  /** A shared-memory load of one wavefront. */
  readonly shared: number;
  /** A global load that hits the SM's L1. */
  readonly l1: number;
  /** A global load that misses L1 and hits L2. */
  readonly l2: number;
  /** A global load that misses L2 (DRAM), unloaded. */
  readonly dram: number;
  /** From the last warp's arrival at a CTA barrier to the release of its warps. */
  readonly barrier: number;
}

/**
 * A GPU's figures, as the timing model uses them; the package README's table names each one's
 * source. Rates are warp instructions per clock per SM (results per clock ÷ 32 lanes).
 */
export interface GpuSpec {
  /** Name as `--gpu` takes it. */
  readonly name: string;
  /** Compute capability of its SMs (ptxas's -arch for the register count). */
  readonly arch: 'sm_80' | 'sm_90';
  readonly sms: number;
  /** Boost clock in Hz. */
  readonly clockHz: number;
  /** Warp schedulers (SM sub-partitions) per SM, each issuing one warp instruction per clock. */
  readonly schedulersPerSm: number;
  /** Warp instructions per clock per SM, by class; `control` is bounded by the schedulers alone. */
  readonly classRates: Readonly<Record<Exclude<IssueClass, 'control'>, number>>;
  readonly maxBlocksPerSm: number;
  readonly maxWarpsPerSm: number;
  /** 32-bit registers per SM, allocated per warp in units of `registerAllocationUnit`. */
  readonly registersPerSm: number;
  readonly registerAllocationUnit: number;
  /** Shared memory an SM can give its blocks, and what the system reserves per block. */
  readonly sharedBytesPerSm: number;
  readonly sharedReservedPerBlock: number;
  /** L1 and shared memory together: what shared memory leaves of it caches global loads. */
  readonly l1SharedBytesPerSm: number;
  /** Bytes per clock the SM's L1 data path returns (one 128-byte wavefront a clock). */
  readonly l1BytesPerClock: number;
  /** Shared-memory wavefronts per clock per SM. */
  readonly sharedWavefrontsPerClock: number;
  /** DRAM bandwidth on the datasheet, and what read streams sustain (the model's queue runs at it). */
  readonly dramBytesPerSecond: number;
  readonly dramSustainedBytesPerSecond: number;
  /** L2 bandwidth, measured. */
  readonly l2BytesPerSecond: number;
  /** Most bytes per clock one SM moves to and from L2, however few SMs share the bandwidth. */
  readonly smL2BytesPerClock: number;
  readonly latencies: Latencies;
  /** Gap a dependent kernel launch adds on a stream, and per kernel node when a CUDA graph replays. */
  readonly launchSeconds: number;
  readonly graphLaunchSeconds: number;
}

// Rates shared by sm_80 and sm_90: CUDA C++ Programming Guide, "Arithmetic Instructions" table (results/clk/SM ÷ 32).
const COMMON_RATES = {
  int: 2, // 32-bit integer add, shift, compare, logic (the ALU pipe): 64 results
  imad: 2, // 32-bit integer multiply, multiply-add, dot product (the FMA pipe): 64 results
  fp16: 4, // half2 add/mul/fma: 256 results
  sfu: 0.5, // reciprocal, rsqrt, log2, exp2, sin, cos: 16 results
  conversion: 0.5, // conversions from and to 64-bit types and "all other": 16 results
  bitcount: 0.5, // popc, clz, brev: 16 results
  shuffle: 1, // warp shuffle: 32 results
  memory: 1, // 32 LD/ST units per SM (A100 and H100 whitepapers: 8 per sub-partition)
} as const;

// Dependent-issue latencies in cycles: fp32, int, fp64 measured on A100 (Abdelkhalik et al.); sfu and
// tensor from Accel-Sim's tuned configs; shuffle and conversion assumed (no published figure).
const classLatencies = (fp64: number, tensor: number): Readonly<Record<IssueClass, number>> => ({
  fp32: 4,
  fp16: 4,
  fp64,
  int: 4,
  imad: 4,
  sfu: 23,
  conversion: 6,
  bitcount: 6,
  shuffle: 23,
  memory: 4,
  tensor,
  control: 1,
});

const SM_80_90 = {
  schedulersPerSm: 4,
  maxBlocksPerSm: 32,
  maxWarpsPerSm: 64,
  registersPerSm: 65536,
  registerAllocationUnit: 256,
  sharedReservedPerBlock: 1024,
  l1BytesPerClock: 128,
  sharedWavefrontsPerClock: 1,
  // Assumed (two 32-byte sectors a clock): no single-SM measurement is published.
  smL2BytesPerClock: 64,
} as const;

const HOPPER = {
  ...SM_80_90,
  arch: 'sm_90',
  sms: 132,
  clockHz: 1.98e9,
  classRates: { ...COMMON_RATES, fp32: 4, fp64: 2, tensor: 1 },
  sharedBytesPerSm: 228 * 1024,
  l1SharedBytesPerSm: 256 * 1024,
  // RRZE gpu-benches, H200: 9.8 TB/s from L2 (the same die and clock as the H100 SXM5).
  l2BytesPerSecond: 9.8e12,
  // L2: the mean of the near (264) and far (~490) partitions; DRAM: 610–688 measured on GH200 and H800.
  latencies: {
    classes: classLatencies(8, 24),
    shared: 29,
    l1: 32,
    l2: 380,
    dram: 650,
    barrier: 20,
  },
} as const;

/** The GPUs the timing model knows, by name. */
export const GPUS: Readonly<Record<string, GpuSpec>> = {
  A100: {
    ...SM_80_90,
    name: 'A100',
    arch: 'sm_80',
    sms: 108,
    clockHz: 1.41e9,
    // FP32 64 results/clk/SM on 8.0; FP64 32; mma.m16n8k16 f16: 1024 dense FMA/clk/SM ÷ 2048 per warp instruction.
    classRates: { ...COMMON_RATES, fp32: 2, fp64: 1, tensor: 0.5 },
    sharedBytesPerSm: 164 * 1024,
    l1SharedBytesPerSm: 192 * 1024,
    dramBytesPerSecond: 2.039e12,
    dramSustainedBytesPerSecond: 1.78e12,
    l2BytesPerSecond: 5.4e12,
    // L2: mean of near (205) and far (~400) partitions; DRAM: 520–566 measured.
    latencies: {
      classes: classLatencies(6, 25),
      shared: 29,
      l1: 33,
      l2: 300,
      dram: 540,
      barrier: 20,
    },
    launchSeconds: 2.6e-6,
    graphLaunchSeconds: 1.34e-6,
  },
  H100: {
    ...HOPPER,
    name: 'H100',
    dramBytesPerSecond: 3.35e12,
    dramSustainedBytesPerSecond: 3.18e12,
    launchSeconds: 2.1e-6,
    graphLaunchSeconds: 1.3e-6,
  },
  H200: {
    ...HOPPER,
    name: 'H200',
    dramBytesPerSecond: 4.8e12,
    dramSustainedBytesPerSecond: 4.48e12,
    launchSeconds: 2.4e-6,
    graphLaunchSeconds: 1.26e-6,
  },
};

/** The named GPU, or undefined; names match case-insensitively. */
export function findGpu(name: string): GpuSpec | undefined {
  const key = Object.keys(GPUS).find((known) => known.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : GPUS[key];
}
