// Comparison and selection: setp set selp slct.
import type { PtxType } from '../ast.js';
import { f32FromBits, f64FromBits } from './float-bits.js';
import { codecOf, isHalfType, isPacked } from './half.js';
import { aluOp, big, decode, num, toSigned, widthOf, type Decoded } from './modifiers.js';
import { F32, flushSubnormal } from './rounding.js';
import type { AluOp, Bits } from './types.js';

const INT_COMPARISONS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'lo', 'ls', 'hi', 'hs'];
const FLOAT_COMPARISONS = [
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'equ',
  'neu',
  'ltu',
  'leu',
  'gtu',
  'geu',
  'num',
  'nan',
];
const BOOL_OPS = ['and', 'or', 'xor'];
const SETP_TYPES = ['b16', 'b32', 'b64', 'u16', 'u32', 'u64', 's16', 's32', 's64', 'f32', 'f64', 'f16', 'f16x2', 'bf16', 'bf16x2'] as const; // prettier-ignore

type Value = number | bigint;
type Test = (a: Value, b: Value) => boolean;

/** Ordered comparisons are false on NaN; the …u forms are true on NaN. */
function floatTest(comparison: string): Test {
  const unordered = (x: Value, y: Value): boolean => x !== x || y !== y;
  const ordered: Record<string, Test> = {
    eq: (x, y) => x === y,
    ne: (x, y) => x !== y && !unordered(x, y),
    lt: (x, y) => x < y,
    le: (x, y) => x <= y,
    gt: (x, y) => x > y,
    ge: (x, y) => x >= y,
  };
  if (comparison === 'num') return (x, y) => !unordered(x, y);
  if (comparison === 'nan') return unordered;
  const base = ordered[comparison.endsWith('u') ? comparison.slice(0, -1) : comparison] as Test;
  return comparison.endsWith('u') ? (x, y) => unordered(x, y) || base(x, y) : base;
}

const INT_TESTS: Record<string, Test> = {
  eq: (x, y) => x === y,
  ne: (x, y) => x !== y,
  lt: (x, y) => x < y,
  le: (x, y) => x <= y,
  gt: (x, y) => x > y,
  ge: (x, y) => x >= y,
};
const UNSIGNED_ALIASES: Record<string, string> = { lo: 'lt', ls: 'le', hi: 'gt', hs: 'ge' };

/** Reads a source of `type` as a comparable value (signed types signed; f32 flushed under .ftz). */
function reader(type: PtxType, ftz: boolean): (bits: Bits | undefined) => Value {
  const width = widthOf(type);
  if (type === 'f32')
    return ftz
      ? (bits) => flushSubnormal(f32FromBits(num(bits)), F32)
      : (bits) => f32FromBits(num(bits));
  if (type === 'f64') return (bits) => f64FromBits(big(bits));
  if (width === 64)
    return type.startsWith('s') ? (bits) => BigInt.asIntN(64, big(bits)) : (bits) => big(bits);
  return type.startsWith('s') ? (bits) => toSigned(num(bits), width) : (bits) => num(bits);
}

/** The comparison word and its test for a type; fails on combinations the ISA does not define. */
function comparisonTest(d: Decoded, type: PtxType, float: boolean): Test {
  const words = (float ? FLOAT_COMPARISONS : INT_COMPARISONS).filter((word) => d.has(word));
  if (words.length !== 1) return d.fail('expected one comparison operator');
  const comparison = words[0] as string;
  if (float) return floatTest(comparison);
  const alias = UNSIGNED_ALIASES[comparison];
  if (alias !== undefined && !type.startsWith('u')) d.fail(`.${comparison} on .${type}`);
  if (type.startsWith('b') && comparison !== 'eq' && comparison !== 'ne')
    d.fail(`.${comparison} on .${type}`);
  return INT_TESTS[alias ?? comparison] as Test;
}

const combine = (op: string | undefined, t: number, c: number): number =>
  op === 'and' ? t & c : op === 'or' ? t | c : op === 'xor' ? t ^ c : t;

/**
 * setp: p = BoolOp(a cmp b, c) and, with a `p|q` pair, q = BoolOp(!(a cmp b), c). For .f16x2 /
 * .bf16x2, p compares the low halves and q the high halves. A negated `!c` is the executor's to
 * apply before the value reaches evaluate.
 */
function decodeSetp(
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  arity?: readonly number[],
): AluOp {
  const d = decode(opcode, modifiers, [
    ...FLOAT_COMPARISONS,
    'lo',
    'ls',
    'hi',
    'hs',
    ...BOOL_OPS,
    'ftz',
  ]);
  const type = d.type(SETP_TYPES);
  const boolOps = BOOL_OPS.filter((op) => d.has(op));
  if (boolOps.length > 1) d.fail('more than one boolean operator');
  const boolOp = boolOps[0];
  const float = type.startsWith('f') || type.startsWith('bf');
  const ftz = d.has('ftz');
  if (ftz && type !== 'f32' && !(type === 'f16' || type === 'f16x2')) d.fail(`.ftz on .${type}`);
  const test = comparisonTest(d, type, float);
  const expected = boolOp === undefined ? 3 : 4;
  if (operandCount !== expected) d.fail(`expected ${expected} operands`);
  const predicate = boolOp === undefined ? [] : (['pred'] as const);
  if (isHalfType(type)) {
    const { fmt, fromBits } = codecOf(type);
    const read = (bits: number): number =>
      ftz ? flushSubnormal(fromBits(bits), fmt) : fromBits(bits);
    const at = (a: number, b: number, shift: number): number =>
      test(read((a >>> shift) & 0xffff), read((b >>> shift) & 0xffff)) ? 1 : 0;
    if (isPacked(type)) {
      if (arity !== undefined && arity[0] !== 2) d.fail('packed setp needs a p|q destination pair');
      return aluOp(opcode, [type, type, ...predicate], ['pred', 'pred'], ([a, b, c]) => [
        combine(boolOp, at(num(a), num(b), 0), num(c)),
        combine(boolOp, at(num(a), num(b), 16), num(c)),
      ]);
    }
    return setpOp(opcode, type, boolOp, arity, (a, b) => at(num(a), num(b), 0));
  }
  const read = reader(type, ftz);
  return setpOp(opcode, type, boolOp, arity, (a, b) => (test(read(a), read(b)) ? 1 : 0));
}

function setpOp(
  opcode: string,
  type: PtxType,
  boolOp: string | undefined,
  arity: readonly number[] | undefined,
  compare: (a: Bits | undefined, b: Bits | undefined) => number,
): AluOp {
  const sources: PtxType[] = boolOp === undefined ? [type, type] : [type, type, 'pred'];
  if (arity !== undefined && arity[0] === 2) {
    return aluOp(opcode, sources, ['pred', 'pred'], ([a, b, c]) => {
      const t = compare(a, b);
      return [combine(boolOp, t, num(c)), combine(boolOp, t ^ 1, num(c))];
    });
  }
  return aluOp(opcode, sources, ['pred'], ([a, b, c]) => [combine(boolOp, compare(a, b), num(c))]);
}

/** set: like setp but writes all ones (integer) or 1.0f (f32) for true, 0 for false. */
function decodeSet(opcode: string, modifiers: readonly string[], operandCount: number): AluOp {
  const d = decode(opcode, modifiers, [
    ...FLOAT_COMPARISONS,
    'lo',
    'ls',
    'hi',
    'hs',
    ...BOOL_OPS,
    'ftz',
  ]);
  const [destination, source] = d.types;
  if (
    d.types.length !== 2 ||
    (destination !== 'u32' && destination !== 's32' && destination !== 'f32')
  ) {
    return d.fail('expected .dtype (.u32 .s32 .f32) then .stype');
  }
  if (
    source === undefined ||
    !(SETP_TYPES as readonly PtxType[]).includes(source) ||
    isHalfType(source)
  ) {
    return d.fail(`source type .${String(source)}`);
  }
  const boolOps = BOOL_OPS.filter((op) => d.has(op));
  if (boolOps.length > 1) d.fail('more than one boolean operator');
  const boolOp = boolOps[0];
  if (operandCount !== (boolOp === undefined ? 3 : 4)) d.fail('operand count');
  const float = source === 'f32' || source === 'f64';
  const test = comparisonTest(d, source, float);
  const read = reader(source, d.has('ftz'));
  const whenTrue = destination === 'f32' ? 0x3f800000 : 0xffffffff;
  const sources: PtxType[] = boolOp === undefined ? [source, source] : [source, source, 'pred'];
  return aluOp(opcode, sources, [destination], ([a, b, c]) => [
    combine(boolOp, test(read(a), read(b)) ? 1 : 0, num(c)) ? whenTrue : 0,
  ]);
}

const SELECT_TYPES = [
  'b16',
  'b32',
  'b64',
  'u16',
  'u32',
  'u64',
  's16',
  's32',
  's64',
  'f32',
  'f64',
] as const;

function decodeSelp(opcode: string, modifiers: readonly string[]): AluOp {
  const type = decode(opcode, modifiers, []).type(SELECT_TYPES);
  return aluOp(opcode, [type, type, 'pred'], [type], ([a, b, c]) => [(num(c) & 1 ? a : b) ?? 0]);
}

/** slct: d = c ≥ 0 ? a : b, with c an .s32 or an .f32 (NaN selects b; .ftz flushes c). */
function decodeSlct(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, ['ftz']);
  const [type, control] = d.types;
  if (
    d.types.length !== 2 ||
    type === undefined ||
    !(SELECT_TYPES as readonly PtxType[]).includes(type)
  ) {
    return d.fail('expected .dtype then .s32 or .f32');
  }
  if (control !== 's32' && control !== 'f32') return d.fail(`control type .${String(control)}`);
  if (d.has('ftz') && control !== 'f32') d.fail('.ftz needs .f32');
  const read = reader(control, d.has('ftz'));
  return aluOp(opcode, [type, type, control], [type], ([a, b, c]) => [(read(c) >= 0 ? a : b) ?? 0]);
}

type CompareDecoder = (
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  arity?: readonly number[],
) => AluOp;

export const COMPARE_DECODERS: ReadonlyMap<string, CompareDecoder> = new Map<
  string,
  CompareDecoder
>([
  ['setp', decodeSetp],
  ['set', decodeSet],
  ['selp', decodeSelp],
  ['slct', decodeSlct],
]);
