import { seedFromString } from '@forge/ir/kernels';
import { magnitudeLabel, scheduleLabel } from './case-labels.js';
import type { ExecutionCase, ExecutionEngine } from './execution-cases.js';

/** The sizes issue #15 asks of its element-wise kernels and argmax: edges of a 256-thread workgroup, a vocab. */
export const ELEMENTWISE_SIZES: readonly number[] = [1, 7, 255, 256, 257, 4096, 32000];

interface CaseOptions {
  readonly schedule?: Readonly<Record<string, number>>;
  readonly family?: string;
  readonly magnitudes?: Readonly<Record<string, number>>;
  readonly engines?: readonly ExecutionEngine[];
}

/** A case of `kernelId` over n elements (`magnitude` 1 unless `magnitudes` names a buffer). */
function elementwiseCase(kernelId: string, n: number, options: CaseOptions = {}): ExecutionCase {
  const schedule = options.schedule ?? {};
  const family = options.family === undefined ? '' : ` family=${options.family}`;
  const scaled = Object.entries(options.magnitudes ?? {})
    .map(([buffer, magnitude]) => ` |${buffer}|<=${magnitudeLabel(magnitude)}`)
    .join('');
  const name = `${kernelId} n=${n}${family}${scaled} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n },
    seed: seedFromString(name),
    magnitude: 1,
    ...(options.family === undefined ? {} : { family: options.family }),
    ...(options.magnitudes === undefined ? {} : { magnitudes: options.magnitudes }),
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

/**
 * n past what 65535 workgroups of 32 threads take in one round of four elements each (8388480):
 * the grid is capped and the grid-stride loop takes a second round, then a tail of one. WebGPU
 * only: the interpreter and the simulator would take minutes.
 */
export const GRID_STRIDE_N = 65535 * 32 * 4 + 133;
const WEBGPU_ONLY: readonly ExecutionEngine[] = ['webgpu'];

/** add: every size, the knob's edges (32 and 1024 threads) at a tail of 1 and 3, a capped grid. */
export const ADD_CASES: readonly ExecutionCase[] = [
  ...ELEMENTWISE_SIZES.map((n) => elementwiseCase('add', n)),
  elementwiseCase('add', 257, { schedule: { workgroupSize: 32 } }),
  elementwiseCase('add', 4099, { schedule: { workgroupSize: 1024 } }),
  elementwiseCase('add', GRID_STRIDE_N, { schedule: { workgroupSize: 32 }, engines: WEBGPU_ONLY }),
];

/**
 * silu-mul: every size with gates in ±8 (where silu bends), the `extremes` family (gates to ±100,
 * e^-g overflowing and underflowing f32), and the knob's edges.
 */
export const SILU_MUL_CASES: readonly ExecutionCase[] = [
  ...ELEMENTWISE_SIZES.map((n) => elementwiseCase('silu-mul', n, { magnitudes: { gate: 8 } })),
  elementwiseCase('silu-mul', 257, { family: 'extremes' }),
  elementwiseCase('silu-mul', 32000, { family: 'extremes' }),
  elementwiseCase('silu-mul', 255, { schedule: { workgroupSize: 32 }, magnitudes: { gate: 8 } }),
  elementwiseCase('silu-mul', 4099, { schedule: { workgroupSize: 1024 }, family: 'extremes' }),
  elementwiseCase('silu-mul', GRID_STRIDE_N, {
    schedule: { workgroupSize: 32 },
    family: 'extremes',
    engines: WEBGPU_ONLY,
  }),
];

/**
 * argmax: every size on uniform logits; ties, a max at 0 and at n−1, all equal, all negative,
 * signed zeros and infinities; NaN (one, at 0, many of every sign and payload, beside ±inf: the
 * first NaN wins); one warp and 1024 threads; 2^24 + 3 logits on WebGPU (one workgroup scans them).
 */
export const ARGMAX_CASES: readonly ExecutionCase[] = [
  ...ELEMENTWISE_SIZES.map((n) => elementwiseCase('argmax', n)),
  elementwiseCase('argmax', 4096, { family: 'ties' }),
  elementwiseCase('argmax', 32000, { family: 'twin-max' }),
  elementwiseCase('argmax', 257, { family: 'max-first' }),
  elementwiseCase('argmax', 32000, { family: 'max-last' }),
  elementwiseCase('argmax', 255, { family: 'all-equal' }),
  elementwiseCase('argmax', 4096, { family: 'negative' }),
  elementwiseCase('argmax', 1000, { family: 'signed-zeros' }),
  elementwiseCase('argmax', 4099, { family: 'infinities' }),
  elementwiseCase('argmax', 32000, { family: 'nan-one' }),
  elementwiseCase('argmax', 257, { family: 'nan-first' }),
  elementwiseCase('argmax', 4096, { family: 'nan-many' }),
  elementwiseCase('argmax', 1000, { family: 'nan-and-inf' }),
  elementwiseCase('argmax', 1, { family: 'nan-first' }),
  elementwiseCase('argmax', 1000, { family: 'nan-many', schedule: { workgroupSize: 32 } }),
  elementwiseCase('argmax', 32000, { family: 'nan-one', schedule: { workgroupSize: 1024 } }),
  elementwiseCase('argmax', 7, { family: 'ties', schedule: { workgroupSize: 32 } }),
  elementwiseCase('argmax', 32000, { family: 'ties', schedule: { workgroupSize: 1024 } }),
  elementwiseCase('argmax', 1000, { family: 'max-last', schedule: { workgroupSize: 32 } }),
  elementwiseCase('argmax', 2 ** 24 + 3, { family: 'twin-max', engines: WEBGPU_ONLY }),
];
