import type { ElementArray } from '../interpreter/memory.js';
import type { QuantType } from '../quant/formats.js';
import type { KernelSpec } from '../spec.js';
import type { Rng } from './random.js';

/** Problem sizes a user chooses (`n`, `rows`, `n_embd`). */
export type Shape = Readonly<Record<string, number>>;
/**
 * Buffer contents by buffer name, as a catalog kernel's `reference` reads them: the same values the
 * kernel's buffers hold (quantized weights as u32 words).
 */
export type BufferData = Readonly<Record<string, ArrayLike<number>>>;

/** What input generation asks of a kernel for one of its input buffers. */
export interface InputRequest {
  readonly buffer: string;
  /** Elements the buffer holds (from `bufferLengths`). */
  readonly length: number;
  readonly shape: Shape;
  /** The case's generator, shared by all buffers in spec order. */
  readonly rng: Rng;
  /** Values are drawn uniform in [-magnitude, magnitude] before any encoding. */
  readonly magnitude: number;
}

/** What a kernel's family generator gets for a case that names an input family. */
export interface FamilyRequest {
  /** The family's name, one of the kernel's `inputFamilies`. */
  readonly family: string;
  readonly shape: Shape;
  /** The case's generator. */
  readonly rng: Rng;
  readonly magnitude: number;
}

/** A buffer of quantized weights, judged by the bandwidth a kernel spends streaming it. */
export interface WeightStream {
  readonly buffer: string;
  /** The GGUF block format of the weights (`q8_0`, `q4_K`, …), for checking a tensor before running it. */
  readonly type: QuantType;
  /** Payload bytes for a shape; the buffer holds them zero-padded to whole elements. */
  bytes(shape: Shape): number;
  /** Bytes of `bytes` that are alignment padding (zero, never read); none when omitted. */
  paddingBytes?(shape: Shape): number;
  /** The buffer's bytes from native GGUF rows, for layouts other than native (repacked rows). */
  fromNative?(native: Uint8Array, shape: Shape): Uint8Array;
}

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
  /**
   * Outputs the kernel updates in place (rope's q and k): generated and read like inputs, the
   * reference given their values from before the run; none when omitted.
   */
  readonly inPlace?: readonly string[];
  /** The float64 reference, written from the math (never by running the IR). */
  reference(
    inputs: BufferData,
    params: Readonly<Record<string, number>>,
  ): Record<string, Float64Array>;
  /** Largest normalized mean squared error accepted against the reference. */
  readonly tolerance: number;
  /**
   * An output's own tolerance where it differs from `tolerance`: quantized words, whose rounding
   * ties follow the kernel's f32 sums, which the float64 reference cannot follow bit for bit.
   */
  readonly outputTolerance?: Readonly<Record<string, number>>;
  /** Throws a ValidationError naming the shape the kernel cannot run (an n_in that is not whole blocks). */
  checkShape?(shape: Shape): void;
  /** Generates an input the default uniform f32 fill cannot (quantized weights); undefined keeps the default. */
  generateInput?(request: InputRequest): ElementArray | undefined;
  /** Named input families beyond the uniform fill (adversarial cases) a case may ask for. */
  readonly inputFamilies?: readonly string[];
  /** Every input buffer of a case of one of `inputFamilies`, drawn whole (the buffers depend on each other). */
  generateFamily?(request: FamilyRequest): Record<string, ElementArray>;
  /** The quantized weights: raw input files hold exactly their payload bytes. */
  readonly weights?: WeightStream;
  /**
   * How an input file of `buffer` is laid out for `shape` (`4096 × 2 × 128 raw IEEE halves …`), for
   * a size error; undefined for buffers of plain values, which say their count and element type.
   */
  describeInput?(buffer: string, shape: Shape): string | undefined;
}

/** Whether the kernel reads `buffer` before the run: an input, or an output it updates in place. */
export function isInputBuffer(kernel: CatalogKernel, buffer: string): boolean {
  return !kernel.outputs.includes(buffer) || (kernel.inPlace?.includes(buffer) ?? false);
}

/**
 * Normalized MSE: sum (a-b)^2 / sum b^2 (0 when both are exactly zero); infinite when a NaN or an
 * infinity makes it undefined (an infinite error over an infinite energy too).
 */
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
  return energy === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : error / energy;
}
