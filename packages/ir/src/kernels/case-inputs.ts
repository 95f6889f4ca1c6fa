import { ForgeError } from '../errors.js';
import { allocateElements, type ElementArray } from '../interpreter/memory.js';
import { isInputBuffer, normalizedMse, type CatalogKernel, type Shape } from './catalog-kernel.js';
import { Rng, fillUniform } from './random.js';

/**
 * A seeded run of a catalog kernel: the shape, the schedule, and how its inputs are generated.
 * `makeCaseInputs` turns it into buffers, so every engine (and `forge run`) sees the same numbers.
 */
export interface KernelCase {
  /** Unique, human-readable; used in messages. */
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
  /** One of the kernel's `inputFamilies`: its `generateFamily` draws every input at once. */
  readonly family?: string;
}

/** How an engine's outputs compare with the float64 reference. */
export interface CaseCheck {
  /** Normalized MSE of the output furthest past its tolerance (the largest, as a rule). */
  readonly nmse: number;
  readonly maxAbsError: number;
  /** That output's tolerance on `nmse`: the kernel's, or its `outputTolerance`. */
  readonly tolerance: number;
}

/**
 * Every buffer of the case, by name: inputs (and outputs updated in place) filled with seeded
 * values (in spec order, from one generator) — the kernel's own `generateInput` where it has one,
 * else uniform f32 — other outputs zeroed.
 * A shape the kernel cannot run is its `checkShape`'s ValidationError.
 */
export function makeCaseInputs(
  kernel: CatalogKernel,
  testCase: KernelCase,
): Record<string, ElementArray> {
  if (kernel.spec.id !== testCase.kernelId) {
    throw new ForgeError(
      `case '${testCase.name}' is for ${testCase.kernelId}, not ${kernel.spec.id}`,
    );
  }
  kernel.checkShape?.(testCase.shape);
  const lengths = kernel.bufferLengths(testCase.shape);
  const rng = new Rng(testCase.seed);
  const family = testCase.family === undefined ? undefined : familyInputs(kernel, testCase, rng);
  const buffers: Record<string, ElementArray> = {};
  for (const buffer of kernel.spec.buffers) {
    const length = lengths[buffer.name];
    if (length === undefined) {
      throw new ForgeError(`${kernel.spec.id}.bufferLengths gives no length for '${buffer.name}'`);
    }
    buffers[buffer.name] = isInputBuffer(kernel, buffer.name)
      ? (family?.[buffer.name] ??
        generateInput(kernel, testCase, buffer.name, buffer.element, length, rng))
      : allocateElements(buffer.element, length);
  }
  if (testCase.zeroRows !== undefined) zeroRows(buffers, testCase);
  return buffers;
}

function familyInputs(
  kernel: CatalogKernel,
  testCase: KernelCase,
  rng: Rng,
): Record<string, ElementArray> {
  const family = testCase.family ?? '';
  if (kernel.generateFamily === undefined || !(kernel.inputFamilies ?? []).includes(family))
    throw new ForgeError(
      `case '${testCase.name}': ${kernel.spec.id} has no input family '${family}' (known: ${(kernel.inputFamilies ?? []).join(', ') || 'none'})`,
    );
  const { shape, magnitude } = testCase;
  const inputs = kernel.generateFamily({ family, shape, rng, magnitude });
  const lengths = kernel.bufferLengths(shape);
  for (const [name, data] of Object.entries(inputs))
    if (data.length !== lengths[name])
      throw new ForgeError(
        `${kernel.spec.id}.generateFamily gives ${data.length} elements for '${name}', not ${lengths[name]}`,
      );
  return inputs;
}

function generateInput(
  kernel: CatalogKernel,
  testCase: KernelCase,
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

function zeroRows(buffers: Record<string, ElementArray>, testCase: KernelCase): void {
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
  testCase: KernelCase,
  outputs: Readonly<Record<string, ArrayLike<number>>>,
): CaseCheck {
  return compareWithReference(
    kernel,
    makeCaseInputs(kernel, testCase),
    kernel.params(testCase.shape),
    outputs,
  );
}

/**
 * Errors of `outputs` against the float64 reference computed from `inputs` and `params`. A NaN
 * output counts as an infinite error, but for a kernel compared exactly (tolerance 0, such as
 * argmax and kv-store, which copy values): there an output identical to its reference, a NaN to a
 * NaN and an infinity to the same infinity too, is no error (and no energy), as any other
 * output equal to its reference is.
 */
export function compareWithReference(
  kernel: CatalogKernel,
  inputs: Readonly<Record<string, ArrayLike<number>>>,
  params: Readonly<Record<string, number>>,
  outputs: Readonly<Record<string, ArrayLike<number>>>,
): CaseCheck & { readonly maxRelError: number } {
  const expected = kernel.reference(inputs, params);
  // The output furthest past its tolerance gives the check's NMSE and tolerance.
  let worst = { nmse: 0, tolerance: kernel.tolerance, ratio: 0 };
  let maxAbsError = 0;
  let maxRelError = 0;
  for (const name of kernel.outputs) {
    const expectedOutput = expected[name];
    const output = outputs[name];
    const tolerance = kernel.outputTolerance?.[name] ?? kernel.tolerance;
    if (expectedOutput === undefined)
      throw new ForgeError(`${kernel.spec.id}.reference gives no '${name}'`);
    if (output === undefined || output.length !== expectedOutput.length) {
      return { nmse: Infinity, maxAbsError: Infinity, maxRelError: Infinity, tolerance };
    }
    const [got, want] =
      tolerance === 0 ? withoutIdentical(output, expectedOutput) : [output, expectedOutput];
    const nmse = normalizedMse(got, want);
    const ratio = nmse === 0 ? 0 : tolerance === 0 ? Infinity : nmse / tolerance;
    if (ratio > worst.ratio) worst = { nmse, tolerance, ratio };
    for (let index = 0; index < want.length; index++) {
      const reference = want[index] as number;
      const error = Math.abs((got[index] ?? Number.NaN) - reference);
      // NaN compares false, so `!(error <= max)` also records a NaN as an infinite error.
      if (!(error <= maxAbsError)) maxAbsError = Number.isNaN(error) ? Infinity : error;
      const relative = reference === 0 ? (error === 0 ? 0 : Infinity) : error / Math.abs(reference);
      if (!(relative <= maxRelError)) maxRelError = Number.isNaN(relative) ? Infinity : relative;
    }
  }
  return { nmse: worst.nmse, maxAbsError, maxRelError, tolerance: worst.tolerance };
}

/**
 * `got` and `want` with each position where both hold a NaN, or both the same infinity, set to 0
 * in both, so the comparison counts it as equal and as no energy (a difference of two NaNs or two
 * infinities is NaN); every other element, NaN or not, is left as it is.
 */
function withoutIdentical(
  got: ArrayLike<number>,
  want: ArrayLike<number>,
): [ArrayLike<number>, ArrayLike<number>] {
  const identical = (index: number): boolean => {
    const [a, b] = [got[index] ?? 0, want[index] ?? 0];
    return Number.isFinite(b) ? false : a === b || (Number.isNaN(a) && Number.isNaN(b));
  };
  let index = 0;
  while (index < want.length && !identical(index)) index++;
  if (index === want.length) return [got, want];
  const [outputs, references] = [Array.from(got), Array.from(want)];
  for (; index < want.length; index++) if (identical(index)) outputs[index] = references[index] = 0;
  return [outputs, references];
}
