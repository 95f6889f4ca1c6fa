import { ValidationError } from '../errors.js';
import { QUANT_FORMATS, dequantize, quantizedBytes } from '../quant/formats.js';
import type { QuantType } from '../quant/formats.js';
import { writeF16 } from '../quant/scalar.js';
import { packWords, unpackWords } from '../quant/words.js';
import type { KernelSpec } from '../spec.js';
import { siluMulReference } from './elementwise.js';
import type { Rng } from './random.js';
import type { CatalogKernel, Shape, WeightStream } from './catalog-kernel.js';

/** What distinguishes one gemv kernel in the catalog; the rest every gemv kernel shares. */
export interface GemvCatalogOptions {
  readonly spec: KernelSpec;
  readonly type: QuantType;
  /** Bytes the kernel's u32 offsets may address past the weights (the weights stay below 2^32 less it). */
  readonly offsetHeadroom: number;
  /** Weight buffer bytes for a shape, when the layout is not native rows. */
  readonly layoutBytes?: (nOut: number, nIn: number) => number;
  /** Native GGUF rows from the weight buffer's bytes, when the layout is not native rows. */
  readonly toNative?: (bytes: Uint8Array, nOut: number, nIn: number) => Uint8Array;
  /** The weight buffer's bytes from native GGUF rows, when the layout is not native rows. */
  readonly fromNative?: (native: Uint8Array, nOut: number, nIn: number) => Uint8Array;
  /** NMSE the kernel guarantees against the float64 reference. */
  readonly tolerance: number;
  /** A second matrix `w_up` of W's shape and layout: y = silu(W x) · (W_up x) (SwiGLU). */
  readonly gated?: boolean;
  /** Random weights of the shape as u32 words, with |w| at most `magnitude`. */
  readonly generateWeights: (nOut: number, nIn: number, rng: Rng, magnitude: number) => Uint32Array;
}

export const shapeSize = (shape: Shape, name: string): number => shape[name] ?? 0;
/** n_in and n_out of a gemv shape (0 where missing, which checkShape rejects). */
export const gemvShape = (shape: Shape) => ({ nIn: shapeSize(shape, 'n_in'), nOut: shapeSize(shape, 'n_out') }); // prettier-ignore

/** Throws a ValidationError naming a shape field the kernel cannot run. */
export function shapeProblem(path: string, message: string): never {
  throw new ValidationError([{ path, message }]);
}

/** y = W x in float64, W [nOut][nIn] row-major, each row summed in column order. */
export function matVec(w: ArrayLike<number>, x: ArrayLike<number>, nOut: number, nIn: number) {
  const y = new Float64Array(nOut);
  for (let r = 0; r < nOut; r++) {
    let dot = 0;
    for (let c = 0; c < nIn; c++) dot += (w[r * nIn + c] ?? 0) * (x[c] ?? 0);
    y[r] = dot;
  }
  return y;
}

/** [n_out, n_in] of a gemv shape, the order the quant helpers take. */
const dims = (shape: Shape): [number, number] => [shapeSize(shape, 'n_out'), shapeSize(shape, 'n_in')]; // prettier-ignore

/** y = W x for every gemv kernel: W rows of `type` blocks, x and y f32, shapes n_in and n_out. */
export function gemvCatalogKernel(options: GemvCatalogOptions): CatalogKernel {
  const { type, layoutBytes, toNative, fromNative, gated = false } = options;
  const matrices = gated ? ['w', 'w_up'] : ['w'];
  const { blockSize } = QUANT_FORMATS[type];
  const payload = (shape: Shape) => quantizedBytes(type, ...dims(shape));
  const bytes = (shape: Shape) => (layoutBytes ? layoutBytes(...dims(shape)) : payload(shape));
  const weights: WeightStream = {
    buffer: 'w',
    type,
    bytes,
    ...(layoutBytes && { paddingBytes: (shape: Shape) => bytes(shape) - payload(shape) }),
    ...(fromNative && { fromNative: (native: Uint8Array, shape: Shape) => fromNative(native, ...dims(shape)) }), // prettier-ignore
  };
  return {
    spec: options.spec,
    shapeNames: ['n_in', 'n_out'],
    defaultShape: { n_in: 512, n_out: 64 },
    params: (shape) => ({ n_in: shapeSize(shape, 'n_in'), n_out: shapeSize(shape, 'n_out') }),
    bufferLengths: (shape) => ({
      ...Object.fromEntries(matrices.map((name) => [name, Math.ceil(bytes(shape) / 4)])),
      ...{ x: shapeSize(shape, 'n_in'), y: shapeSize(shape, 'n_out') },
    }),
    outputs: ['y'],
    checkShape(shape) {
      const { nIn, nOut } = gemvShape(shape);
      if (!Number.isSafeInteger(nIn) || nIn < blockSize || nIn % blockSize !== 0)
        shapeProblem('n_in', `${nIn} is not a multiple of ${blockSize}, the ${type} block size`);
      if (!Number.isSafeInteger(nOut) || nOut < 1)
        shapeProblem('n_out', `${nOut} is not at least 1`);
      if (bytes(shape) > 2 ** 32 - options.offsetHeadroom)
        shapeProblem('n_out', `${nOut} rows of ${nIn} ${type} values exceed 32-bit byte offsets`);
    },
    weights,
    generateInput: ({ buffer, shape, rng, magnitude }) =>
      matrices.includes(buffer)
        ? options.generateWeights(...dims(shape), rng, magnitude)
        : undefined,
    reference(inputs, params) {
      const [nOut, nIn] = dims(params);
      const product = (name: string) => {
        const stored = unpackWords(inputs[name] ?? [], bytes(params));
        const native = toNative === undefined ? stored : toNative(stored, nOut, nIn);
        return matVec(dequantize(type, native, nOut, nIn), inputs['x'] ?? [], nOut, nIn);
      };
      const y = product('w');
      if (!gated) return { y };
      const up = product('w_up');
      return { y: y.map((gate, r) => siluMulReference(gate, up[r] ?? 0)) };
    },
    tolerance: options.tolerance,
  };
}

/**
 * Random native Q6_K rows: random ql, qh and scale bytes (every 6-bit value and signed scale) and
 * a d that keeps |d · scale · q| <= d · 128 · 32 below the magnitude.
 */
export function randomQ6kBlocks(nOut: number, nIn: number, rng: Rng, magnitude: number) {
  const blockBytes = QUANT_FORMATS.q6_K.blockBytes;
  const native = new Uint8Array(quantizedBytes('q6_K', nOut, nIn));
  for (let start = 0; start < native.length; start += blockBytes) {
    for (let k = 0; k < blockBytes - 2; k += 4) {
      const word = rng.nextU32();
      for (let byte = 0; byte < 4 && k + byte < blockBytes - 2; byte++)
        native[start + k + byte] = (word >>> (8 * byte)) & 255;
    }
    writeF16(native, start + blockBytes - 2, (rng.uniform(0.25, 0.99) * magnitude) / 4096);
  }
  return native;
}

/**
 * Random native Q4_K rows as u32 words, rather than quantized floats: ggml's Q4_K search quantizes
 * ~0.2M values/s, too slow for 8M-value cases, and random bytes reach every 6-bit scale, min and
 * nibble.
 */
export function randomQ4kWords(nOut: number, nIn: number, rng: Rng, magnitude: number) {
  const blockWords = QUANT_FORMATS.q4_K.blockBytes / 4;
  const words = new Uint32Array(quantizedBytes('q4_K', nOut, nIn) / 4);
  const header = new Uint8Array(4);
  for (let start = 0; start < words.length; start += blockWords) {
    // d * 63 * 15 and dmin * 63 stay below the magnitude, so |w| <= magnitude.
    writeF16(header, 0, (rng.uniform(0.25, 0.99) * magnitude) / (63 * 15));
    writeF16(header, 2, (rng.uniform(0, 0.99) * magnitude) / 63);
    words[start] = packWords(header)[0] ?? 0;
    for (let k = 1; k < blockWords; k++) words[start + k] = rng.nextU32();
  }
  return words;
}
