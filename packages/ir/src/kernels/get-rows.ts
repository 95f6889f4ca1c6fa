// The get-rows kernels: embedding rows by id, dequantized to f32. One thread per value over a
// grid-stride loop in x (values) and y (rows): a lookup moves n_rows rows, too few bytes for
// staging to pay. An id at or past n_vocab writes a row of zeros; its reads are clamped to the
// last row, so no thread reads outside the table.
import { defineKernel, type BodyBuilder, type MemoryHandle } from '../builder.js';
import type { Expr } from '../body.js';
import type { Local, Value } from '../expression-methods.js';

/** The table element types a get-rows kernel reads: f32 values, or u32 words of halves or blocks. */
export type TableElement = 'f32' | 'u32';

/** The builder a get-rows body sees: `table` of element E, `ids` u32, `out` f32. */
export type GetRowsBuilder<E extends TableElement> = BodyBuilder<{
  readonly memory: { readonly table: E; readonly ids: 'u32'; readonly out: 'f32' };
  readonly params: { readonly n_vocab: 'u32'; readonly n_embd: 'u32'; readonly n_rows: 'u32' };
}>;

/** Where one output value comes from: table row `row` (a valid id), value `i` of it. */
export interface RowValue<E extends TableElement> {
  readonly b: GetRowsBuilder<E>;
  readonly table: MemoryHandle<E>;
  readonly row: Local<'u32'>;
  readonly i: Local<'u32'>;
  readonly nEmbd: Value<'u32'>;
}

/** One table type: its element, blocks and how a value of a row dequantizes. */
export interface GetRowsType<E extends TableElement> {
  readonly id: string;
  readonly semanticVersion: number;
  readonly element: E;
  /** How the table holds rows, for the description (`native GGUF Q8_0 blocks`). */
  readonly layout: string;
  /** Value `i` of row `row`, in f32, as ggml's dequantization rounds it. */
  readonly value: (at: RowValue<E>) => Expr<'f32'>;
}

/** out[r][i] = dequant(table)[ids[r]][i] for r < n_rows, i < n_embd. */
/**
 * out[r][i] = dequant(table)[ids[r]][i] for r < n_rows, i < n_embd. One thread per value, over a
 * grid-stride loop in x (values) and y (rows): a lookup moves n_rows rows, too few bytes for
 * staging to pay. An id at or past n_vocab writes a row of zeros; its reads are clamped to the
 * last row, so no thread reads outside the table.
 */
export function getRowsSpec<E extends TableElement>(type: GetRowsType<E>) {
  const { id, semanticVersion, element, layout } = type;
  return defineKernel(
    {
      ...{ id, semanticVersion, entryPoint: id.replaceAll('-', '_') },
      description: `out[r][i] = dequant(table)[ids[r]][i], table rows of n_embd values ${layout}, out f32; an id >= n_vocab writes zeros`,
      buffers: [
        { group: 0, binding: 0, name: 'table', element, access: 'read' },
        { group: 0, binding: 1, name: 'ids', element: 'u32', access: 'read' },
        { group: 0, binding: 2, name: 'out', element: 'f32', access: 'read_write' },
      ],
      params: [
        { name: 'n_vocab', type: 'u32' },
        { name: 'n_embd', type: 'u32' },
        { name: 'n_rows', type: 'u32' },
      ],
      shared: [],
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup, one value each',
          default: 256,
          bounds: {
            ptx: { min: 32, max: 1024, multipleOf: 32 },
            wgsl: { min: 32, max: 1024, multipleOf: 32 },
          },
        },
      ],
      launch: {
        workgroupSize: 'workgroupSize',
        // WebGPU caps a grid dimension at 65535 workgroups; more runs as a grid-stride loop.
        grid: ['min(ceil_div(n_embd, workgroupSize), 65535)', 'min(n_rows, 65535)', '1'],
      },
    },
    (b) => getRowsBody(b, type),
  );
}

function getRowsBody<E extends TableElement>(b: GetRowsBuilder<E>, type: GetRowsType<E>): void {
  const { table, ids, out } = b.memory;
  const size = b.schedule('workgroupSize');
  const [nVocab, nEmbd, nRows] = [b.param('n_vocab'), b.param('n_embd'), b.param('n_rows')];
  const { stride } = b.let({ stride: b.numWorkgroups().mul(size) });
  const start = b.workgroupId().mul(size).add(b.localId());
  const rows = { start: b.workgroupId('y'), end: nRows, step: b.numWorkgroups('y') };
  b.for('r', rows, (_, r) => {
    const { id } = b.let({ id: ids.at(r) });
    const { valid, row, outBase } = b.let({
      valid: id.lt(nVocab),
      row: id.min(nVocab.sub(1)),
      outBase: r.mul(nEmbd),
    });
    b.for('i', { start, end: nEmbd, step: stride }, (_, i) => {
      const value = type.value({ b, table, row, i, nEmbd });
      out.store(outBase.add(i), valid.select(value, 0));
    });
  });
}

/** Byte `k` (k < 4, a u32 expression) of `word`, as a u32. */
export const byteOf = (word: Value<'u32'>, k: Value<'u32'>): Value<'u32'> =>
  word.shr(k.shl(3)).and(255);

/** The byte at byte offset `at` of the u32 table, as a u32. */
export const tableByte = (table: MemoryHandle<'u32'>, at: Value<'u32'>): Value<'u32'> =>
  byteOf(table.at(at.shr(2)), at.and(3));

/** The f16 at an even byte offset `at` of the u32 table, as an exact f32. */
export const tableHalf = (table: MemoryHandle<'u32'>, at: Value<'u32'>): Value<'f32'> =>
  table.at(at.shr(2)).shr(at.and(2).shl(3)).unpackHalf(0);

/** An int8 in the low byte of a u32, sign-extended, as an f32. */
export const signedByte = (byte: Value<'u32'>): Value<'f32'> =>
  byte.shl(24).bitcast('i32').shr(24).to('f32');

/** `(high << 4) | low` for two small u32 fields. */
export const joinNibbles = (low: Value<'u32'>, high: Value<'u32'>): Value<'u32'> =>
  low.or(high.shl(4));
