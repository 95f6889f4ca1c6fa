import type { KernelSpec } from '../spec.js';

/** Problem sizes a user chooses (`n`, `rows`, `n_embd`). */
export type Shape = Readonly<Record<string, number>>;
export type BufferData = Readonly<Record<string, ArrayLike<number>>>;

/** A catalog kernel: its spec plus what a test or `forge run` needs to execute and check it. */
export interface CatalogKernel {
  readonly spec: KernelSpec;
  /** Shape names, each also a u32 param of the same name. */
  readonly shapeNames: readonly string[];
  readonly defaultShape: Shape;
  /** Every param's value for a shape (shape params plus fixed ones such as `eps`). */
  params(shape: Shape): Readonly<Record<string, number>>;
  /** Element count of every buffer for a shape. */
  bufferLengths(shape: Shape): Readonly<Record<string, number>>;
  /** Buffers the kernel writes and the reference computes. */
  readonly outputs: readonly string[];
  /** The float64 reference, written from the math (never by running the IR). */
  reference(
    inputs: BufferData,
    params: Readonly<Record<string, number>>,
  ): Record<string, Float64Array>;
  /** Largest normalized mean squared error accepted against the reference. */
  readonly tolerance: number;
}

/** Normalized MSE: sum (a-b)^2 / sum b^2 (0 when both are exactly zero). */
export function normalizedMse(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let error = 0;
  let energy = 0;
  for (let index = 0; index < expected.length; index++) {
    const difference = (actual[index] ?? Number.NaN) - (expected[index] ?? 0);
    error += difference * difference;
    energy += (expected[index] ?? 0) ** 2;
  }
  if (actual.length !== expected.length || Number.isNaN(error)) return Number.POSITIVE_INFINITY;
  if (energy === 0) return error === 0 ? 0 : Number.POSITIVE_INFINITY;
  return error / energy;
}
