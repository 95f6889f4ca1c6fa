// How each get-rows kernel reads value i of table row `row`, rounding as ggml's dequantization does
// (products in f32 in the codec's order, so results are exact).
import type { Expr } from '../body.js';
import { add, and, convert, lt, mul, select, shl, shr, sub, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import {
  joinNibbles,
  signedByte,
  tableByte,
  tableHalf,
  type GetRowsType,
  type RowValue,
} from './get-rows.js';

const Q4K_BLOCK_WORDS = QUANT_FORMATS.q4_K.blockBytes / 4;

export const F32_ROWS: GetRowsType<'f32'> = {
  id: 'get-rows-f32',
  semanticVersion: 1,
  element: 'f32',
  layout: 'of f32',
  value: ({ b, row, i, nEmbd }) => b.load('table', add(mul(row, nEmbd), i)),
};

export const F16_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-f16',
  semanticVersion: 1,
  element: 'u32',
  layout: 'of f16, two a u32 word (element 2k the low half of word k)',
  value: ({ b, row, i, nEmbd }) => {
    const { element } = b.let({ element: add(mul(row, nEmbd), i) });
    const word = b.load('table', shr(element, 1));
    return unpackHalf(shr(word, shl(and(element, 1), 4)), 0);
  },
};

/** The value's block, counted from the table's start, for `blockSize`-value blocks. */
const blockOf = ({ b, row, i, nEmbd }: RowValue<'u32'>, log2BlockSize: number) =>
  b.let('block', add(mul(row, shr(nEmbd, log2BlockSize)), shr(i, log2BlockSize)));

export const Q8_0_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-q8_0',
  semanticVersion: 1,
  element: 'u32',
  layout: 'in native GGUF Q8_0 blocks (read as u32 words)',
  value: (at) => {
    const { b, i } = at;
    const { start } = b.let({ start: mul(blockOf(at, 5), QUANT_FORMATS.q8_0.blockBytes) });
    const d = tableHalf(b, start, 'd');
    const q = signedByte(tableByte(b, add(add(start, 2), and(i, 31)), 'q'));
    return mul(q, d);
  },
};

export const Q4K_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-q4k',
  semanticVersion: 1,
  element: 'u32',
  layout: 'in native GGUF Q4_K blocks (read as u32 words)',
  value: (at) => {
    const { b, i } = at;
    const { base, j } = b.let({ base: mul(blockOf(at, 8), Q4K_BLOCK_WORDS), j: and(i, 255) });
    // Value j: sub-block j >> 5, chunk j >> 6 of qs, low nibbles for even sub-blocks.
    const { part } = b.let({ part: shr(j, 5) });
    const qsWord = add(add(base, 4), add(shl(shr(j, 6), 3), shr(and(j, 31), 2)));
    const { qs } = b.let({ qs: b.load('table', qsWord) });
    const nibble = and(shr(qs, add(shl(and(j, 3), 3), shl(and(part, 1), 2))), 15);
    const head = b.let('head', b.load('table', base));
    const scaleByte = (k: Expr<'u32'>, name: string) =>
      b.let(name, tableByte(b, add(shl(add(base, 1), 2), k), name));
    // ggml's get_scale_min_k4: 6 bits in bytes part and part + 4 for the first four sub-blocks;
    // after, a nibble of byte part + 4 under the top 2 bits of byte part - 4 (scale) or part (min).
    const a = scaleByte(part, 'sm_a');
    const c = scaleByte(add(part, 4), 'sm_b');
    const low = scaleByte(and(part, 3), 'sm_c');
    const first = lt(part, 4);
    const scale = select(first, and(a, 63), joinNibbles(and(c, 15), shr(low, 6)));
    const least = select(first, and(c, 63), joinNibbles(shr(c, 4), shr(a, 6)));
    const d = mul(unpackHalf(head, 0), convert('f32', scale));
    const m = mul(unpackHalf(head, 1), convert('f32', least));
    return sub(mul(d, convert('f32', nibble)), m);
  },
};

export const Q6K_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-q6k',
  semanticVersion: 1,
  element: 'u32',
  layout: 'in native GGUF Q6_K blocks (read as u32 words)',
  value: (at) => {
    const { b, i } = at;
    const { start } = b.let({ start: mul(blockOf(at, 8), QUANT_FORMATS.q6_K.blockBytes) });
    // Value j of the block: half n = j >> 7, quarter g = (j >> 5) & 3, position l = j & 31.
    const { half, quarter, l } = b.let({
      half: shr(and(i, 255), 7),
      quarter: and(shr(i, 5), 3),
      l: and(i, 31),
    });
    const qlAt = add(add(start, shl(half, 6)), add(l, shl(and(quarter, 1), 5)));
    const ql = shr(tableByte(b, qlAt, 'ql'), shl(shr(quarter, 1), 2));
    const qhAt = add(add(start, 128), add(shl(half, 5), l));
    const qh = shr(tableByte(b, qhAt, 'qh'), shl(quarter, 1));
    const scaleAt = add(add(start, 192), add(add(shl(half, 3), shr(l, 4)), shl(quarter, 1)));
    const scale = signedByte(tableByte(b, scaleAt, 'scale'));
    const d = tableHalf(b, add(start, 208), 'd');
    const q = sub(convert('f32', joinNibbles(and(ql, 15), and(qh, 3))), 32);
    return mul(mul(d, scale), q);
  },
};
