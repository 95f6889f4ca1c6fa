import { seedFromString } from '@forge/ir/kernels';
import { magnitudeLabel, scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

/** The sizes issue #15 asks of its element-wise kernels and argmax: edges of a 256-thread workgroup, a vocab. */
export const ELEMENTWISE_SIZES: readonly number[] = [1, 7, 255, 256, 257, 4096, 32000];

interface CaseOptions {
  readonly schedule?: Readonly<Record<string, number>>;
  readonly family?: string;
  readonly magnitudes?: Readonly<Record<string, number>>;
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
  };
}

/** add: every size, and the knob's edges (32 and 1024 threads) at a tail of 1 and 3 elements. */
export const ADD_CASES: readonly ExecutionCase[] = [
  ...ELEMENTWISE_SIZES.map((n) => elementwiseCase('add', n)),
  elementwiseCase('add', 257, { schedule: { workgroupSize: 32 } }),
  elementwiseCase('add', 4099, { schedule: { workgroupSize: 1024 } }),
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
];

/**
 * argmax: every size on uniform logits; ties, a max at 0 and at n−1, all equal, all negative and
 * signed zeros; one warp and 1024 threads.
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
  elementwiseCase('argmax', 7, { family: 'ties', schedule: { workgroupSize: 32 } }),
  elementwiseCase('argmax', 32000, { family: 'ties', schedule: { workgroupSize: 1024 } }),
  elementwiseCase('argmax', 1000, { family: 'max-last', schedule: { workgroupSize: 32 } }),
];
