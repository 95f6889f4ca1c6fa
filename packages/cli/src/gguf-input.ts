// `forge run --gguf FILE --tensor NAME`: one quantized tensor of a GGUF file as a kernel's weights.
import { resolve } from 'node:path';
import { type ElementArray } from '@forge/ir';
import { ModelError, readFileBytes, readGgufFileHeader, type GgufHeader } from '@forge/llama';
import { packWords, type QuantType } from '@forge/ir/gguf';
import { type CatalogKernel, type WeightStream } from '@forge/ir/kernels';
import { InputError, UsageError, errnoCode } from './errors.js';

/** A tensor read from a GGUF file: its raw blocks and the matrix they encode. */
export interface GgufTensor {
  readonly file: string;
  readonly name: string;
  readonly type: QuantType;
  /** GGUF's ne: ne[0] is the quantized axis (columns, n_in), ne[1] the rows (n_out). */
  readonly ne: readonly number[];
  readonly rows: number;
  readonly cols: number;
  /** Exactly quantizedBytes(type, rows, cols) bytes, as stored in the file. */
  readonly bytes: Uint8Array;
}

/**
 * Reads tensor `name` of the GGUF file at `path`; it must be stored as `expected` (the kernel's
 * weight type, named `kernelId` in the error).
 */
export async function readGgufTensor(
  path: string,
  name: string,
  expected: QuantType,
  kernelId: string,
): Promise<GgufTensor> {
  let header: GgufHeader;
  try {
    header = await readGgufFileHeader(path);
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    // The reader names the file first; --gguf names it here instead.
    throw new InputError(`--gguf: ${error.message}`);
  }
  const info = header.tensors.find((tensor) => tensor.name === name);
  if (info === undefined) {
    const names = header.tensors.map((tensor) => tensor.name);
    const shown = names.length > 20 ? [...names.slice(0, 20), `… (${names.length} in all)`] : names;
    throw new InputError(
      `--tensor: ${path} has no tensor '${name}' (tensors: ${shown.join(', ')})`,
    );
  }
  if (info.type.name !== expected)
    throw new InputError(
      `--tensor ${name} is ${info.type.name}, but ${kernelId} takes ${expected}`,
    );
  const ne = info.ne;
  const cols = ne[0] ?? 1;
  // A gemv takes a matrix: any dimensions beyond ne[1] (none in practice) fold into the rows.
  const rows = ne.slice(1).reduce((product, size) => product * size, 1);
  let bytes: Uint8Array;
  try {
    bytes = await readFileBytes(path, info.start, info.bytes);
  } catch (error) {
    throw new InputError(`--gguf: cannot read ${path}: ${errnoCode(error)}`);
  }
  if (bytes.length !== info.bytes)
    throw new InputError(`--gguf: ${path} changed while it was read`);
  return { file: path, name, type: expected, ne, rows, cols, bytes };
}

/** The --gguf and --tensor options as given; both or neither. */
export function ggufOptions(
  file: string | undefined,
  tensor: string | undefined,
): { file: string; tensor: string } | undefined {
  if (file === undefined && tensor === undefined) return undefined;
  if (file === undefined) throw new UsageError('--tensor NAME needs --gguf FILE');
  if (tensor === undefined) throw new UsageError('--gguf FILE needs --tensor NAME');
  return { file, tensor };
}

/** What a kernel must offer to run a GGUF tensor: quantized weights and an n_out × n_in shape. */
function gemvWeights(kernel: CatalogKernel): WeightStream {
  const id = kernel.spec.id;
  if (kernel.weights === undefined)
    throw new UsageError(`--gguf: ${id} takes no quantized weights`);
  if (!kernel.shapeNames.includes('n_in') || !kernel.shapeNames.includes('n_out'))
    throw new UsageError(`--gguf: ${id} has no n_in and n_out shape to take a weight matrix`);
  return kernel.weights;
}

/**
 * Reads the tensor for `kernel`, checking the --input and --shape options against it: n_in and
 * n_out come from the tensor, and the weight buffer from the file.
 */
export async function loadGgufInput(
  kernel: CatalogKernel,
  options: { file: string; tensor: string },
  cwd: string,
  shapeArgs: readonly string[],
  inputArgs: readonly string[],
): Promise<GgufTensor> {
  const weights = gemvWeights(kernel);
  if (inputArgs.some((value) => value.startsWith(`${weights.buffer}=`)))
    throw new UsageError(
      `--input ${weights.buffer}: the weights come from --gguf; give one of them`,
    );
  const tensor = await readGgufTensor(
    resolve(cwd, options.file),
    options.tensor,
    weights.type,
    kernel.spec.id,
  );
  const fromTensor: Record<string, number> = { n_in: tensor.cols, n_out: tensor.rows };
  for (const value of shapeArgs) {
    const [name, size] = value.split('=');
    const wanted = name === undefined ? undefined : fromTensor[name];
    if (wanted !== undefined && Number(size) !== wanted)
      throw new UsageError(
        `--shape ${value} conflicts with --tensor ${tensor.name}, whose ne [${tensor.ne.join(', ')}] gives ${name}=${wanted}`,
      );
  }
  return tensor;
}

/** `shape` with n_in and n_out taken from the tensor. */
export function ggufShape(
  shape: Record<string, number>,
  tensor: GgufTensor,
): Record<string, number> {
  return { ...shape, n_in: tensor.cols, n_out: tensor.rows };
}

/** Puts the tensor's blocks into the kernel's weight buffer, as little-endian words zero-padded. */
export function fillGgufWeights(
  kernel: CatalogKernel,
  buffers: Readonly<Record<string, ElementArray>>,
  shape: Record<string, number>,
  tensor: GgufTensor,
): void {
  const weights = gemvWeights(kernel);
  const buffer = buffers[weights.buffer];
  const native = weights.fromNative === undefined ? weights.bytes(shape) : tensor.bytes.length;
  if (buffer === undefined || native !== tensor.bytes.length)
    throw new InputError(
      `--gguf: ${kernel.spec.id} with n_in=${tensor.cols} n_out=${tensor.rows} needs ${weights.bytes(shape)} weight bytes; ${tensor.name} has ${tensor.bytes.length}`,
    );
  // A kernel on repacked rows takes the tensor's native blocks through its own conversion.
  const bytes = weights.fromNative?.(tensor.bytes, shape) ?? tensor.bytes;
  if (!(buffer instanceof Uint32Array))
    throw new InputError(`--gguf: ${kernel.spec.id}'s ${weights.buffer} buffer is not u32 words`);
  buffer.fill(0);
  buffer.set(packWords(bytes).subarray(0, buffer.length));
}

/** The tensor as `forge run` reports it. */
export function ggufReport(tensor: GgufTensor): {
  file: string;
  tensor: string;
  type: QuantType;
  ne: readonly number[];
} {
  return { file: tensor.file, tensor: tensor.name, type: tensor.type, ne: tensor.ne };
}
