// How each get-rows kernel reads value i of table row `row`, rounding as ggml's dequantization does
// (products in f32 in the codec's order, so results are exact).
import { QUANT_FORMATS } from '../quant/formats.js';
import {
  joinNibbles,
  signedByte,
  tableByte,
  tableHalf,
  type GetRowsType,
  type RowValue,
} from './get-rows.js';
import { q4kScalesMins } from './q4k-scales.js';

export const F32_ROWS: GetRowsType<'f32'> = {
  id: 'get-rows-f32',
  semanticVersion: 1,
  element: 'f32',
  layout: 'of f32',
  value: ({ table, row, i, nEmbd }) => table.at(row.mul(nEmbd).add(i)),
};

export const F16_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-f16',
  semanticVersion: 1,
  element: 'u32',
  layout: 'of f16, two a u32 word (element 2k the low half of word k)',
  value: ({ b, table, row, i, nEmbd }) => {
    const { element } = b.let({ element: row.mul(nEmbd).add(i) });
    return table.at(element.shr(1)).shr(element.and(1).shl(4)).unpackHalf(0);
  },
};

/** The value's block, counted from the table's start, for 2^log2BlockSize-value blocks. */
const blockOf = ({ b, row, i, nEmbd }: RowValue<'u32'>, log2BlockSize: number) =>
  b.let('block', row.mul(nEmbd.shr(log2BlockSize)).add(i.shr(log2BlockSize)));

export const Q8_0_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-q8_0',
  semanticVersion: 1,
  element: 'u32',
  layout: 'in native GGUF Q8_0 blocks (read as u32 words)',
  value: (at) => {
    const { b, table, i } = at;
    // A block: the f16 scale d, then 32 int8 quants.
    const { start } = b.let({ start: blockOf(at, 5).mul(QUANT_FORMATS.q8_0.blockBytes) });
    const { dAt, qAt } = b.let({ dAt: start, qAt: start.add(2).add(i.and(31)) });
    return signedByte(tableByte(table, qAt)).mul(tableHalf(table, dAt));
  },
};

export const Q4K_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-q4k',
  semanticVersion: 1,
  element: 'u32',
  layout: 'in native GGUF Q4_K blocks (read as u32 words)',
  value: (at) => {
    const { b, table, i } = at;
    // A block: word 0 the f16 d and dmin, 12 scale bytes, then 128 bytes of nibbles.
    const { base, j } = b.let({
      base: blockOf(at, 8).mul(QUANT_FORMATS.q4_K.blockBytes / 4),
      j: i.and(255),
    });
    // Value j: sub-block j >> 5, chunk j >> 6 of qs, low nibbles for even sub-blocks.
    const { part } = b.let({ part: j.shr(5) });
    const { qs } = b.let({ qs: table.at(base.add(4).add(j.shr(6).shl(3).add(j.and(31).shr(2)))) });
    const nibble = qs.shr(j.and(3).shl(3).add(part.and(1).shl(2))).and(15);
    const head = b.let('head', table.at(base));
    // The scale and min of sub-block `part`: byte part & 3 of the first or the second four.
    const scaleWord = (k: number) => b.let('scale_word', table.at(base.add(k)));
    const { scales, mins, highScales, highMins } = q4kScalesMins(
      [scaleWord(1), scaleWord(2), scaleWord(3)],
      4,
    );
    const { first, shift } = b.let({ first: part.lt(4), shift: part.and(3).shl(3) });
    const scale = first.select(scales, highScales).shr(shift).and(255);
    const least = first.select(mins, highMins).shr(shift).and(255);
    const d = head.unpackHalf(0).mul(scale.to('f32'));
    const m = head.unpackHalf(1).mul(least.to('f32'));
    return d.mul(nibble.to('f32')).sub(m);
  },
};

export const Q6K_ROWS: GetRowsType<'u32'> = {
  id: 'get-rows-q6k',
  semanticVersion: 1,
  element: 'u32',
  layout: 'in native GGUF Q6_K blocks (read as u32 words)',
  value: (at) => {
    const { b, table, i } = at;
    const { start } = b.let({ start: blockOf(at, 8).mul(QUANT_FORMATS.q6_K.blockBytes) });
    // Value j of the block: half n = j >> 7, quarter g = (j >> 5) & 3, position l = j & 31.
    const { half, quarter, l } = b.let({
      half: i.and(255).shr(7),
      quarter: i.shr(5).and(3),
      l: i.and(31),
    });
    // A block: 128 bytes ql (low nibbles), 64 qh (2 high bits), 16 int8 scales, the f16 d.
    const { qlAt, qhAt, scaleAt, dAt } = b.let({
      qlAt: start.add(half.shl(6)).add(l.add(quarter.and(1).shl(5))),
      qhAt: start.add(128).add(half.shl(5).add(l)),
      scaleAt: start.add(192).add(half.shl(3).add(l.shr(4)).add(quarter.shl(1))),
      dAt: start.add(208),
    });
    const ql = tableByte(table, qlAt).shr(quarter.shr(1).shl(2));
    const qh = tableByte(table, qhAt).shr(quarter.shl(1));
    const q = joinNibbles(ql.and(15), qh.and(3)).to('f32').sub(32);
    return tableHalf(table, dAt)
      .mul(signedByte(tableByte(table, scaleAt)))
      .mul(q);
  },
};
