// The GGUF block formats Forge reads and writes, and row-major (de)quantization of whole matrices.
import { ValidationError } from '../errors.js';
import { BLOCK_GEOMETRY } from './geometry.js';
import { dequantizeBlockQ4_0, quantizeBlockQ4_0 } from './q4-0.js';
import { dequantizeBlockQ4_K, quantizeBlockQ4_K } from './q4-k.js';
import { dequantizeBlockQ6_K, quantizeBlockQ6_K } from './q6-k.js';
import { dequantizeBlockQ8_0, quantizeBlockQ8_0 } from './q8-0.js';

/** ggml's type names, as GGUF tools print them. */
export type QuantType = 'q4_0' | 'q8_0' | 'q4_K' | 'q6_K';

/** Every quantization type Forge can encode and decode, in ggml's spelling. */
export const QUANT_TYPES: readonly QuantType[] = ['q4_0', 'q8_0', 'q4_K', 'q6_K'];

/** Encodes the block of `blockSize` floats at `srcOffset` into `blockBytes` bytes at `dstOffset`. */
export type QuantizeBlock = (
  src: Float32Array,
  srcOffset: number,
  dst: Uint8Array,
  dstOffset: number,
) => void;

/** Decodes the block at `srcOffset` into `blockSize` floats at `dstOffset`. */
export type DequantizeBlock = (
  src: Uint8Array,
  srcOffset: number,
  dst: Float32Array,
  dstOffset: number,
) => void;

/**
 * One GGUF block format: its ggml type id, block geometry and ggml-exact block codecs. Rows of a
 * matrix are whole blocks, so a row's length must be a multiple of `blockSize`.
 */
export interface QuantFormat {
  readonly type: QuantType;
  /** ggml's enum ggml_type value (also GGUF's tensor type id). */
  readonly ggmlTypeId: number;
  /** Values per block. */
  readonly blockSize: number;
  /** Bytes per block. */
  readonly blockBytes: number;
  readonly quantizeBlock: QuantizeBlock;
  readonly dequantizeBlock: DequantizeBlock;
}

/** The block format of every QuantType, by type. */
export const QUANT_FORMATS: Readonly<Record<QuantType, QuantFormat>> = {
  q4_0: {
    type: 'q4_0',
    ggmlTypeId: 2,
    ...BLOCK_GEOMETRY.q4_0,
    quantizeBlock: quantizeBlockQ4_0,
    dequantizeBlock: dequantizeBlockQ4_0,
  },
  q8_0: {
    type: 'q8_0',
    ggmlTypeId: 8,
    ...BLOCK_GEOMETRY.q8_0,
    quantizeBlock: quantizeBlockQ8_0,
    dequantizeBlock: dequantizeBlockQ8_0,
  },
  q4_K: {
    type: 'q4_K',
    ggmlTypeId: 12,
    ...BLOCK_GEOMETRY.q4_K,
    quantizeBlock: quantizeBlockQ4_K,
    dequantizeBlock: dequantizeBlockQ4_K,
  },
  q6_K: {
    type: 'q6_K',
    ggmlTypeId: 14,
    ...BLOCK_GEOMETRY.q6_K,
    quantizeBlock: quantizeBlockQ6_K,
    dequantizeBlock: dequantizeBlockQ6_K,
  },
};

/** The canonical name for `name`, matched case-insensitively (`Q4_K`, `q4_k` → `q4_K`); undefined if unknown. */
export function parseQuantType(name: string): QuantType | undefined {
  return QUANT_TYPES.find((type) => type.toLowerCase() === name.toLowerCase());
}

/** The format of `type`; an unknown name is a ValidationError at path `type`. */
export function quantFormat(type: string): QuantFormat {
  const known = parseQuantType(type);
  if (known === undefined)
    throw new ValidationError([
      { path: 'type', message: `unknown quant type '${type}' (known: ${QUANT_TYPES.join(', ')})` },
    ]);
  return QUANT_FORMATS[known];
}

/** Checks rows and cols and returns the format; cols must be a whole number of blocks. */
export function checkQuantShape(type: QuantType, rows: number, cols: number): QuantFormat {
  const format = quantFormat(type);
  for (const [path, value] of [
    ['rows', rows],
    ['cols', cols],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new ValidationError([
        { path, message: `expected a non-negative integer, got ${String(value)}` },
      ]);
  }
  if (cols % format.blockSize !== 0)
    throw new ValidationError([
      {
        path: 'cols',
        message: `expected a multiple of ${format.blockSize} (the ${format.type} block size), got ${cols}`,
      },
    ]);
  return format;
}

/** Bytes of one quantized row of `cols` values. */
export function quantizedRowBytes(type: QuantType, cols: number): number {
  const format = checkQuantShape(type, 1, cols);
  return (cols / format.blockSize) * format.blockBytes;
}

/** Bytes of a rows × cols matrix quantized row by row. */
export function quantizedBytes(type: QuantType, rows: number, cols: number): number {
  const format = checkQuantShape(type, rows, cols);
  return rows * (cols / format.blockSize) * format.blockBytes;
}

function checkLength(path: string, unit: string, expected: number, actual: number, shape: string) {
  if (actual !== expected)
    throw new ValidationError([
      { path, message: `expected ${expected} ${unit} (${shape}), got ${actual}` },
    ]);
}

/** Quantizes a row-major rows × cols matrix as ggml's quantize_row_<type>_ref does, row by row. */
export function quantize(
  type: QuantType,
  values: Float32Array,
  rows: number,
  cols: number,
): Uint8Array {
  const format = checkQuantShape(type, rows, cols);
  checkLength('values', 'values', rows * cols, values.length, `${rows} rows × ${cols} cols`);
  const blocks = (rows * cols) / format.blockSize;
  const out = new Uint8Array(blocks * format.blockBytes);
  for (let b = 0; b < blocks; b++)
    format.quantizeBlock(values, b * format.blockSize, out, b * format.blockBytes);
  return out;
}

/** Dequantizes rows × cols row-major blocks into float32, as ggml's dequantize_row_<type> does. */
export function dequantize(
  type: QuantType,
  bytes: Uint8Array,
  rows: number,
  cols: number,
): Float32Array {
  const format = checkQuantShape(type, rows, cols);
  const blocks = (rows * cols) / format.blockSize;
  checkLength(
    'bytes',
    'bytes',
    blocks * format.blockBytes,
    bytes.length,
    `${rows} rows × ${cols / format.blockSize} blocks × ${format.blockBytes} bytes for ${format.type}`,
  );
  const out = new Float32Array(rows * cols);
  for (let b = 0; b < blocks; b++)
    format.dequantizeBlock(bytes, b * format.blockBytes, out, b * format.blockSize);
  return out;
}

/** Quantizes one row of `cols` values. */
export function quantizeRow(type: QuantType, values: Float32Array, cols: number): Uint8Array {
  return quantize(type, values, 1, cols);
}

/** Dequantizes one row of `cols` values. */
export function dequantizeRow(type: QuantType, bytes: Uint8Array, cols: number): Float32Array {
  return dequantize(type, bytes, 1, cols);
}
