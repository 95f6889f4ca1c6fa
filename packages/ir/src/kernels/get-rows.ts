import type { Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { defineKernel, type BodyBuilder } from '../builder.js';
import {
  add,
  and,
  bitcast,
  convert,
  f32,
  lt,
  min,
  mul,
  or,
  select,
  shl,
  shr,
  sub,
  unpackHalf,
} from '../expressions.js';

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
  readonly row: Var<'u32'>;
  readonly i: Var<'u32'>;
  readonly nEmbd: Expr<'u32'>;
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
    (b) => getRowsBody(b as unknown as GetRowsBuilder<E>, type),
  );
}

function getRowsBody<E extends TableElement>(b: GetRowsBuilder<E>, type: GetRowsType<E>): void {
  const size = b.schedule('workgroupSize');
  const [nVocab, nEmbd, nRows] = [b.param('n_vocab'), b.param('n_embd'), b.param('n_rows')];
  const { stride } = b.let({ stride: mul(b.numWorkgroups('x'), size) });
  const start = add(mul(b.workgroupId('x'), size), b.localId());
  const rows = { start: b.workgroupId('y'), end: nRows, step: b.numWorkgroups('y') };
  b.for('r', rows, (outer, r) => {
    const { id } = outer.let({ id: outer.load('ids', r) });
    const { valid, row, outBase } = outer.let({
      valid: lt(id, nVocab),
      row: min(id, sub(nVocab, 1)),
      outBase: mul(r, nEmbd),
    });
    outer.for('i', { start, end: nEmbd, step: stride }, (inner, i) => {
      const value = type.value({ b: inner, row, i, nEmbd });
      inner.store('out', add(outBase, i), select(valid, value, f32(0)));
    });
  });
}

/** Byte `k` (k < 4, a u32 expression) of `word`, as a u32. */
export const byteOf = (word: Expr<'u32'>, k: Expr<'u32'>): Expr<'u32'> =>
  and(shr(word, shl(k, 3)), 255);

/** The byte at byte offset `at` of the u32 table, as a u32. */
export function tableByte(b: GetRowsBuilder<'u32'>, at: Expr<'u32'>, name: string): Expr<'u32'> {
  const offset = b.let(`${name}_at`, at);
  return byteOf(b.load('table', shr(offset, 2)), and(offset, 3));
}

/** The f16 at an even byte offset `at` of the u32 table, as an exact f32. */
export function tableHalf(b: GetRowsBuilder<'u32'>, at: Expr<'u32'>, name: string): Expr<'f32'> {
  const offset = b.let(`${name}_at`, at);
  const word = b.load('table', shr(offset, 2));
  return unpackHalf(shr(word, shl(and(offset, 2), 3)), 0);
}

/** An int8 in the low byte of a u32, sign-extended, as an f32. */
export const signedByte = (byte: Expr<'u32'>): Expr<'f32'> =>
  convert('f32', shr(bitcast('i32', shl(byte, 24)), 24));

/** `(high << 4) | low` for two small u32 fields. */
export const joinNibbles = (low: Expr<'u32'>, high: Expr<'u32'>): Expr<'u32'> =>
  or(low, shl(high, 4));
