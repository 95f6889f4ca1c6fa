import { seedFromString, type KernelCase } from '@forge/ir/kernels';
import { magnitudeLabel, scheduleLabel } from './case-labels.js';
import { ADD_CASES, ARGMAX_CASES, SILU_MUL_CASES } from './elementwise-cases.js';
import {
  Q4K_GEMV_CASES,
  Q4K_SWIGLU_GEMV_CASES,
  Q6K_GEMV_CASES,
  Q6K_SOA_GEMV_CASES,
  Q8_0_GEMV_CASES,
} from './gemv-cases.js';
import { ROPE_CASES } from './rope-cases.js';
import { ROPE_KV_STORE_CASES } from './rope-kv-store-cases.js';
import { GET_ROWS_CASES } from './get-rows-cases.js';
import { DENSE_GEMV_CASES } from './dense-gemv-cases.js';
import { KV_STORE_CASES } from './kv-store-cases.js';
import { SDPA_DECODE_CASES } from './sdpa-cases.js';
import { Q4K_SOA_WMMA_CASES, WMMA_GEMV_CASES } from './wmma-cases.js';
import { sampleForTier, type TestTier } from './test-tier.js';

/**
 * One execution of a catalog kernel that every engine (the IR interpreter, WebGPU and the PTX
 * simulator) runs and checks against the kernel's float64 reference (`checkCase` of
 * `@forge/ir/kernels`). Inputs are generated from `seed`, so every engine sees the same numbers.
 */
export interface ExecutionCase extends KernelCase {
  /** Bounds the simulator's counters must meet on the kernel's weight stream. */
  readonly weightTraffic?: WeightTrafficBounds;
  /**
   * Inputs the kernel reads only in part (a sliding window hides cache positions), exempt from the
   * simulator's check that every input byte is read.
   */
  readonly partlyRead?: readonly string[];
  /** Outputs the kernel writes only in part (kv-store writes one row of its caches). */
  readonly partlyWritten?: readonly string[];
  /** The engines that run the case (all when omitted): the largest shapes are too slow for some. */
  readonly engines?: readonly ExecutionEngine[];
}

/** The engines an ExecutionCase can be limited to. */
export type ExecutionEngine = 'interpreter' | 'webgpu' | 'ptx-sim';

/** Bandwidth bounds on a kernel's weight stream, as the PTX simulator counts it. */
export interface WeightTrafficBounds {
  /** Most bytes loaded from the weight buffer per payload byte. */
  readonly maxReadRatio: number;
  /** Least sector efficiency (requested over 32-byte sectors touched) of the weight loads. */
  readonly minSectorEfficiency: number;
}

function affineCase(n: number, schedule: Readonly<Record<string, number>> = {}): ExecutionCase {
  const name = `affine-f32 n=${n} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: 'affine-f32',
    schedule,
    shape: { n },
    seed: seedFromString(name),
    magnitude: 1,
  };
}

function rmsnormCase(
  nEmbd: number,
  magnitude: number,
  options: {
    schedule?: Readonly<Record<string, number>>;
    rows?: number;
    zeroRows?: number[];
    kernelId?: 'rmsnorm' | 'add-rmsnorm' | 'add-rmsnorm-quantize';
  } = {},
): ExecutionCase {
  const kernelId = options.kernelId ?? 'rmsnorm';
  const schedule = options.schedule ?? {};
  const rows = options.rows ?? 3;
  const zero = options.zeroRows === undefined ? '' : ` zero-rows=${options.zeroRows.join('+')}`;
  const name = `${kernelId} rows=${rows} n_embd=${nEmbd} |x|<=${magnitudeLabel(magnitude)}${zero} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { rows, n_embd: nEmbd },
    seed: seedFromString(name),
    magnitude,
    magnitudes: { w: 1 },
    ...(options.zeroRows === undefined ? {} : { zeroRows: options.zeroRows }),
  };
}

const AFFINE_SIZES = [1, 7, 255, 256, 257, 4096, 5000];
const RMSNORM_WIDTHS = [1, 7, 32, 4096, 5000];
const MAGNITUDES = [1e-3, 1, 1e3];

/** The execution cases every engine's test suite is instantiated over. */
export const EXECUTION_CASES: readonly ExecutionCase[] = [
  ...AFFINE_SIZES.map((n) => affineCase(n)),
  affineCase(257, { workgroupSize: 64 }),
  affineCase(5000, { workgroupSize: 64 }),
  ...RMSNORM_WIDTHS.flatMap((nEmbd) =>
    MAGNITUDES.map((magnitude) => rmsnormCase(nEmbd, magnitude)),
  ),
  rmsnormCase(4096, 1, { zeroRows: [1] }),
  rmsnormCase(7, 1, { schedule: { workgroupSize: 32 } }),
  rmsnormCase(4096, 1, { schedule: { workgroupSize: 32 } }),
  rmsnormCase(1, 1, { schedule: { workgroupSize: 128 } }),
  rmsnormCase(5000, 1e3, { schedule: { workgroupSize: 128 } }),
  rmsnormCase(32, 1, { schedule: { workgroupSize: 1024 } }),
  rmsnormCase(5000, 1, { schedule: { workgroupSize: 1024 } }),
  rmsnormCase(4096, 1, { schedule: { workgroupSize: 1024 }, zeroRows: [0, 2] }),
  // The residual add fused with the norm after it: the vec4 and scalar paths, the knob's edges.
  ...[1, 7, 4096, 5000].flatMap((nEmbd) =>
    [1e-3, 1e3].map((magnitude) => rmsnormCase(nEmbd, magnitude, { kernelId: 'add-rmsnorm' })),
  ),
  rmsnormCase(4096, 1, { kernelId: 'add-rmsnorm', rows: 1 }),
  rmsnormCase(7, 1, { kernelId: 'add-rmsnorm', schedule: { workgroupSize: 32 } }),
  rmsnormCase(5000, 1, { kernelId: 'add-rmsnorm', schedule: { workgroupSize: 1024 } }),
  // The same with y quantized as the row-streaming mat-vecs quantize x: whole groups of 128, a
  // group a thread (fewer groups than threads at 128, more at 4096 with 32 threads).
  ...[128, 4096].flatMap((nEmbd) =>
    [1e-3, 1e3].map((magnitude) =>
      rmsnormCase(nEmbd, magnitude, { kernelId: 'add-rmsnorm-quantize' }),
    ),
  ),
  rmsnormCase(4096, 1, { kernelId: 'add-rmsnorm-quantize', rows: 1 }),
  rmsnormCase(640, 1, { kernelId: 'add-rmsnorm-quantize', schedule: { workgroupSize: 32 } }),
  rmsnormCase(4096, 1, { kernelId: 'add-rmsnorm-quantize', schedule: { workgroupSize: 1024 } }),
  // A row in one workgroup; in 16 (most past its 4 groups); in 2 of 32 threads (8 steps a part).
  rmsnormCase(640, 1, { kernelId: 'add-rmsnorm-quantize', schedule: { parts: 1 } }),
  rmsnormCase(128, 1e3, { kernelId: 'add-rmsnorm-quantize', schedule: { parts: 16, workgroupSize: 32 } }), // prettier-ignore
  rmsnormCase(4096, 1, { kernelId: 'add-rmsnorm-quantize', schedule: { parts: 2, workgroupSize: 32 } }), // prettier-ignore
  ...Q8_0_GEMV_CASES,
  ...Q4K_GEMV_CASES,
  ...Q4K_SWIGLU_GEMV_CASES,
  ...Q6K_GEMV_CASES,
  ...Q6K_SOA_GEMV_CASES,
  ...SDPA_DECODE_CASES,
  ...WMMA_GEMV_CASES,
  ...Q4K_SOA_WMMA_CASES,
  ...ROPE_CASES,
  ...GET_ROWS_CASES,
  ...ADD_CASES,
  ...SILU_MUL_CASES,
  ...ARGMAX_CASES,
  ...DENSE_GEMV_CASES,
  ...KV_STORE_CASES,
  ...ROPE_KV_STORE_CASES,
];

/**
 * The EXECUTION_CASES that `engine` runs: all of them in the full tier; in the quick tier
 * (`pnpm test`) one a kernel, its first at the default schedule where it has one.
 */
export function executionCasesFor(
  engine: ExecutionEngine,
  tier: TestTier = 'full',
): ExecutionCase[] {
  const cases = EXECUTION_CASES.filter((testCase) => testCase.engines?.includes(engine) ?? true);
  return sampleForTier(cases, tier, (testCase) => testCase.kernelId, {
    preferred: (testCase) => Object.keys(testCase.schedule).length === 0,
  });
}
