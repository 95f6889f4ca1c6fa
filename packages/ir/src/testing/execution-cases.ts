import { ForgeError } from '../errors.js';
import { allocateElements, type ElementArray } from '../interpreter/memory.js';
import { normalizedMse, type CatalogKernel, type Shape } from '../kernels/catalog-kernel.js';
import { magnitudeLabel, scheduleLabel } from './case-labels.js';
import {
  Q4K_GEMV_CASES,
  Q6K_GEMV_CASES,
  Q6K_SOA_GEMV_CASES,
  Q8_0_GEMV_CASES,
} from './gemv-cases.js';
import { Rng, fillUniform, seedFromString } from './random.js';

/**
 * Test data: one execution of a catalog kernel that every engine (the IR interpreter, WebGPU and
 * the PTX simulator) runs and checks against the kernel's float64 reference. Inputs are generated
 * from `seed`, so every engine sees the same numbers.
 */
export interface ExecutionCase {
  /** Unique, human-readable; used as the test name. */
  readonly name: string;
  readonly kernelId: string;
  /** Schedule overrides (knobs left out take their defaults). */
  readonly schedule: Readonly<Record<string, number>>;
  readonly shape: Shape;
  readonly seed: number;
  /** Inputs are uniform in [-magnitude, magnitude] unless `magnitudes` names the buffer. */
  readonly magnitude: number;
  /** Per-buffer magnitudes overriding `magnitude` (rmsnorm's weights `w` stay at 1). */
  readonly magnitudes?: Readonly<Record<string, number>>;
  /** Rows of `x` forced to zero; a row is `length(x) / shape.rows` elements. */
  readonly zeroRows?: readonly number[];
  /** Bounds the simulator's counters must meet on the kernel's weight stream. */
  readonly weightTraffic?: WeightTrafficBounds;
  /** The engines that run the case (all when omitted): the largest shapes are too slow for some. */
  readonly engines?: readonly ExecutionEngine[];
}

/** Test data: the engines an ExecutionCase can be limited to. */
export type ExecutionEngine = 'interpreter' | 'webgpu' | 'ptx-sim';

/** Bandwidth bounds on a kernel's weight stream, as the PTX simulator counts it. */
export interface WeightTrafficBounds {
  /** Most bytes loaded from the weight buffer per payload byte. */
  readonly maxReadRatio: number;
  /** Least sector efficiency (requested over 32-byte sectors touched) of the weight loads. */
  readonly minSectorEfficiency: number;
}

/** How an engine's outputs compare with the float64 reference. */
export interface CaseCheck {
  /** Largest normalized MSE over the kernel's outputs. */
  readonly nmse: number;
  readonly maxAbsError: number;
  /** The kernel's tolerance on `nmse`. */
  readonly tolerance: number;
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
  options: { schedule?: Readonly<Record<string, number>>; rows?: number; zeroRows?: number[] } = {},
): ExecutionCase {
  const schedule = options.schedule ?? {};
  const rows = options.rows ?? 3;
  const zero = options.zeroRows === undefined ? '' : ` zero-rows=${options.zeroRows.join('+')}`;
  const name = `rmsnorm rows=${rows} n_embd=${nEmbd} |x|<=${magnitudeLabel(magnitude)}${zero} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: 'rmsnorm',
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

/** Test data: the execution cases every engine's test suite is instantiated over. */
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
  ...Q8_0_GEMV_CASES,
  ...Q4K_GEMV_CASES,
  ...Q6K_GEMV_CASES,
  ...Q6K_SOA_GEMV_CASES,
];

/** Test data: the EXECUTION_CASES that `engine` runs. */
export function executionCasesFor(engine: ExecutionEngine): ExecutionCase[] {
  return EXECUTION_CASES.filter((testCase) => testCase.engines?.includes(engine) ?? true);
}

/**
 * Every buffer of the case, by name: inputs filled with seeded values (in spec order, from one
 * generator) — the kernel's own `generateInput` where it has one, else uniform f32 — outputs zeroed.
 * A shape the kernel cannot run is its `checkShape`'s ValidationError.
 */
export function makeCaseInputs(
  kernel: CatalogKernel,
  testCase: ExecutionCase,
): Record<string, ElementArray> {
  if (kernel.spec.id !== testCase.kernelId) {
    throw new ForgeError(
      `case '${testCase.name}' is for ${testCase.kernelId}, not ${kernel.spec.id}`,
    );
  }
  kernel.checkShape?.(testCase.shape);
  const lengths = kernel.bufferLengths(testCase.shape);
  const rng = new Rng(testCase.seed);
  const buffers: Record<string, ElementArray> = {};
  for (const buffer of kernel.spec.buffers) {
    const length = lengths[buffer.name];
    if (length === undefined) {
      throw new ForgeError(`${kernel.spec.id}.bufferLengths gives no length for '${buffer.name}'`);
    }
    buffers[buffer.name] = kernel.outputs.includes(buffer.name)
      ? allocateElements(buffer.element, length)
      : generateInput(kernel, testCase, buffer.name, buffer.element, length, rng);
  }
  if (testCase.zeroRows !== undefined) zeroRows(buffers, testCase);
  return buffers;
}

function generateInput(
  kernel: CatalogKernel,
  testCase: ExecutionCase,
  name: string,
  element: string,
  length: number,
  rng: Rng,
): ElementArray {
  const magnitude = testCase.magnitudes?.[name] ?? testCase.magnitude;
  const shape = testCase.shape;
  const data = kernel.generateInput?.({ buffer: name, length, shape, rng, magnitude });
  if (data !== undefined) {
    if (data.length !== length)
      throw new ForgeError(
        `${kernel.spec.id}.generateInput gives ${data.length} elements for '${name}', not ${length}`,
      );
    return data;
  }
  if (element !== 'f32') {
    throw new ForgeError(
      `case '${testCase.name}': buffer '${name}' holds ${element}; only f32 inputs are generated unless the kernel generates them`,
    );
  }
  return fillUniform(new Float32Array(length), rng, magnitude);
}

function zeroRows(buffers: Record<string, ElementArray>, testCase: ExecutionCase): void {
  const x = buffers['x'];
  const rows = testCase.shape['rows'];
  if (x === undefined || rows === undefined || rows < 1) {
    throw new ForgeError(`case '${testCase.name}': zeroRows needs a buffer 'x' and a 'rows' shape`);
  }
  const width = x.length / rows;
  for (const row of testCase.zeroRows ?? []) {
    if (!Number.isInteger(row) || row < 0 || row >= rows) {
      throw new ForgeError(`case '${testCase.name}': zero row ${row} is not in [0, ${rows})`);
    }
    x.fill(0, row * width, (row + 1) * width);
  }
}

/** Compares an engine's `outputs` with the float64 reference computed from the case's inputs. */
export function checkCase(
  kernel: CatalogKernel,
  testCase: ExecutionCase,
  outputs: Readonly<Record<string, ArrayLike<number>>>,
): CaseCheck {
  return compareWithReference(
    kernel,
    makeCaseInputs(kernel, testCase),
    kernel.params(testCase.shape),
    outputs,
  );
}

/** Errors of `outputs` against the float64 reference computed from `inputs` and `params`. */
export function compareWithReference(
  kernel: CatalogKernel,
  inputs: Readonly<Record<string, ArrayLike<number>>>,
  params: Readonly<Record<string, number>>,
  outputs: Readonly<Record<string, ArrayLike<number>>>,
): CaseCheck & { readonly maxRelError: number } {
  const expected = kernel.reference(inputs, params);
  let nmse = 0;
  let maxAbsError = 0;
  let maxRelError = 0;
  for (const name of kernel.outputs) {
    const want = expected[name];
    const got = outputs[name];
    if (want === undefined) throw new ForgeError(`${kernel.spec.id}.reference gives no '${name}'`);
    if (got === undefined || got.length !== want.length) {
      return {
        nmse: Infinity,
        maxAbsError: Infinity,
        maxRelError: Infinity,
        tolerance: kernel.tolerance,
      };
    }
    nmse = Math.max(nmse, normalizedMse(got, want));
    for (let index = 0; index < want.length; index++) {
      const reference = want[index] as number;
      const error = Math.abs((got[index] ?? Number.NaN) - reference);
      // NaN compares false, so `!(error <= max)` also records a NaN as an infinite error.
      if (!(error <= maxAbsError)) maxAbsError = Number.isNaN(error) ? Infinity : error;
      const relative = reference === 0 ? (error === 0 ? 0 : Infinity) : error / Math.abs(reference);
      if (!(relative <= maxRelError)) maxRelError = Number.isNaN(relative) ? Infinity : relative;
    }
  }
  return { nmse, maxAbsError, maxRelError, tolerance: kernel.tolerance };
}
