import { ValidationError } from '../errors.js';
import {
  QUANT_FORMATS,
  dequantize,
  quantize,
  quantizedBytes,
  type QuantType,
} from '../quant/formats.js';
import { packWords, unpackWords } from '../quant/words.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { lazyKernel } from './lazy-kernel.js';
import { randomQ4kWords, randomQ6kBlocks } from './gemv-catalog.js';
import { getRowsSpec, type GetRowsType, type TableElement } from './get-rows.js';
import { F16_ROWS, F32_ROWS, Q4K_ROWS, Q6K_ROWS, Q8_0_ROWS } from './get-rows-types.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { fillUniform, type Rng } from './random.js';
import { fields } from './shape-reader.js';

/** The GGUF tensor types an embedding table may have. */
export type TableType = 'f32' | 'f16' | QuantType;

/** The input family whose ids include ones at and past n_vocab (each gives a row of zeros). */
export const GET_ROWS_OUT_OF_RANGE = 'out-of-range';

const blockSize = (type: TableType): number =>
  type === 'f32' || type === 'f16' ? 1 : QUANT_FORMATS[type].blockSize;

/** Payload bytes of an n_vocab × n_embd table of `type`. */
function tableBytes(type: TableType, nVocab: number, nEmbd: number): number {
  if (type === 'f32') return 4 * nVocab * nEmbd;
  if (type === 'f16') return 2 * nVocab * nEmbd;
  return quantizedBytes(type, nVocab, nEmbd);
}

/** Random table values uniform in [-magnitude, magnitude], in the table's buffer encoding. */
function randomTable(type: TableType, nVocab: number, nEmbd: number, rng: Rng, magnitude: number) {
  const values = () => fillUniform(new Float32Array(nVocab * nEmbd), rng, magnitude);
  switch (type) {
    case 'f32':
      return values();
    case 'f16':
      return packF16Words(values());
    case 'q4_K':
      return randomQ4kWords(nVocab, nEmbd, rng, magnitude);
    case 'q6_K':
      return packWords(randomQ6kBlocks(nVocab, nEmbd, rng, magnitude));
    default:
      return packWords(quantize(type, values(), nVocab, nEmbd));
  }
}

/** The table's values as doubles, row-major, from its buffer (the codec's dequantization). */
function tableValues(type: TableType, table: ArrayLike<number>, nVocab: number, nEmbd: number) {
  if (type === 'f32') return Float64Array.from(table);
  if (type === 'f16') return unpackF16Words(table, nVocab * nEmbd);
  const bytes = unpackWords(table, tableBytes(type, nVocab, nEmbd));
  return Float64Array.from(dequantize(type, bytes, nVocab, nEmbd));
}

/**
 * Ids for a case: the last row first (the one a bounds mistake misses), 0 last, random between;
 * the out-of-range family cycles n_vocab, n_vocab - 1, 2^32 - 1 and 0.
 */
function caseIds(nVocab: number, nRows: number, rng: Rng, outOfRange: boolean): Uint32Array {
  const ids = new Uint32Array(nRows);
  for (let r = 0; r < nRows; r++) {
    if (outOfRange) ids[r] = [nVocab, nVocab - 1, 2 ** 32 - 1, 0][r % 4] ?? 0;
    else ids[r] = r === 0 ? nVocab - 1 : r === nRows - 1 ? 0 : rng.integer(0, nVocab - 1);
  }
  return ids;
}

/** A get-rows catalog kernel for tables of `type`, read by `rows`. */
function getRowsKernel<E extends TableElement>(
  type: TableType,
  rows: GetRowsType<E>,
): CatalogKernel {
  const sizes = (shape: Shape) => {
    const size = fields<'n_vocab' | 'n_embd' | 'n_rows'>(shape);
    return [size('n_vocab'), size('n_embd'), size('n_rows')] as const;
  };
  const bytes = (shape: Shape): number => {
    const [nVocab, nEmbd] = sizes(shape);
    return tableBytes(type, nVocab, nEmbd);
  };
  const block = blockSize(type);
  return {
    spec: getRowsSpec(rows),
    shapeNames: ['n_vocab', 'n_embd', 'n_rows'],
    defaultShape: { n_vocab: 256, n_embd: 4096, n_rows: 1 },
    params: (shape) => {
      const [n_vocab, n_embd, n_rows] = sizes(shape);
      return { n_vocab, n_embd, n_rows };
    },
    bufferLengths: (shape) => {
      const [nVocab, nEmbd, nRows] = sizes(shape);
      const table = type === 'f32' ? nVocab * nEmbd : Math.ceil(bytes(shape) / 4);
      return { table, ids: nRows, out: nRows * nEmbd };
    },
    outputs: ['out'],
    checkShape(shape) {
      const [nVocab, nEmbd, nRows] = sizes(shape);
      const problem = (path: string, message: string): never => {
        throw new ValidationError([{ path, message }]);
      };
      const whole = (value: number) => Number.isSafeInteger(value) && value >= 1;
      if (!whole(nVocab)) problem('n_vocab', `${nVocab} is not at least 1`);
      if (!whole(nRows)) problem('n_rows', `${nRows} is not at least 1`);
      if (!whole(nEmbd) || nEmbd % block !== 0)
        problem(
          'n_embd',
          block === 1
            ? `${nEmbd} is not at least 1`
            : `${nEmbd} is not a multiple of ${block}, the ${type} block size`,
        );
      // Offsets are u32 bytes (table) and u32 elements (out).
      if (bytes(shape) > 2 ** 32 - 4)
        problem('n_vocab', `${nVocab} rows of ${nEmbd} ${type} values exceed 32-bit byte offsets`);
      if (nRows * nEmbd > 2 ** 30)
        problem('n_rows', `${nRows} rows of ${nEmbd} f32 values exceed 32-bit byte offsets`);
    },
    generateInput({ buffer, shape, rng, magnitude }) {
      const [nVocab, nEmbd, nRows] = sizes(shape);
      if (buffer === 'table') return randomTable(type, nVocab, nEmbd, rng, magnitude);
      if (buffer === 'ids') return caseIds(nVocab, nRows, rng, false);
      return undefined;
    },
    inputFamilies: [GET_ROWS_OUT_OF_RANGE],
    generateFamily({ family, shape, rng, magnitude }) {
      if (family !== GET_ROWS_OUT_OF_RANGE)
        throw new ValidationError([
          { path: 'family', message: `'${family}' is not ${GET_ROWS_OUT_OF_RANGE}` },
        ]);
      const [nVocab, nEmbd, nRows] = sizes(shape);
      const table = randomTable(type, nVocab, nEmbd, rng, magnitude);
      return { table, ids: caseIds(nVocab, nRows, rng, true) };
    },
    // Not a WeightStream: a lookup reads n_rows rows, not the table; input files are whole words.
    describeInput: (buffer, shape) => {
      if (buffer !== 'table' || type === 'f32') return undefined;
      const [nVocab, nEmbd] = sizes(shape);
      const values = type === 'f16' ? 'raw IEEE halves, little-endian' : `native ${type} blocks`;
      return `[n_vocab ${nVocab}][n_embd ${nEmbd}] ${values}, ${bytes(shape)} bytes zero-padded to whole u32 words`;
    },
    reference(inputs, params) {
      const [nVocab, nEmbd, nRows] = sizes(params);
      const values = tableValues(type, inputs['table'] ?? [], nVocab, nEmbd);
      const ids = inputs['ids'] ?? [];
      const out = new Float64Array(nRows * nEmbd);
      for (let r = 0; r < nRows; r++) {
        const id = ids[r] ?? 0;
        // An id past the table is a row of zeros.
        if (id < nVocab) out.set(values.subarray(id * nEmbd, (id + 1) * nEmbd), r * nEmbd);
      }
      return { out };
    },
    // Every engine rounds as the codec does (f32 products in its order): exact up to contraction.
    tolerance: 1e-12,
  };
}

/** Catalog kernel `get-rows-f32`: embedding rows of an f32 table. */
export const getRowsF32 = lazyKernel('get-rows-f32', () => getRowsKernel('f32', F32_ROWS));
/** Catalog kernel `get-rows-f16`: embedding rows of an f16 table, as f32. */
export const getRowsF16 = lazyKernel('get-rows-f16', () => getRowsKernel('f16', F16_ROWS));
/** Catalog kernel `get-rows-q8_0`: embedding rows of a native Q8_0 table (n_embd a multiple of 32). */
export const getRowsQ8_0 = lazyKernel('get-rows-q8_0', () => getRowsKernel('q8_0', Q8_0_ROWS));
/** Catalog kernel `get-rows-q4k`: embedding rows of a native Q4_K table (n_embd a multiple of 256). */
export const getRowsQ4k = lazyKernel('get-rows-q4k', () => getRowsKernel('q4_K', Q4K_ROWS));
/** Catalog kernel `get-rows-q6k`: embedding rows of a native Q6_K table (n_embd a multiple of 256). */
export const getRowsQ6k = lazyKernel('get-rows-q6k', () => getRowsKernel('q6_K', Q6K_ROWS));

/** The get-rows kernel of each table type. */
export const GET_ROWS_KERNELS: Readonly<Record<TableType, CatalogKernel | undefined>> = {
  f32: getRowsF32,
  f16: getRowsF16,
  q8_0: getRowsQ8_0,
  q4_K: getRowsQ4k,
  q6_K: getRowsQ6k,
  q4_0: undefined,
};
