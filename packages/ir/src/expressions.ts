import type {
  Axis,
  BinaryExpr,
  BinaryOp,
  BuiltinExpr,
  BuiltinName,
  ConstExpr,
  Expr,
  UnaryExpr,
  UnaryOp,
  UnpackHalfExpr,
} from './body.js';
import { COMPARISON_OPS } from './body.js';
import type { ScalarType } from './types.js';

// Expression constructors used by kernel authors; result types follow the type checker's rules.

export const constant = (type: ScalarType, value: number | boolean): ConstExpr => ({
  op: 'const',
  type,
  value,
});
export const f32 = (value: number): ConstExpr => constant('f32', value);
export const f16 = (value: number): ConstExpr => constant('f16', value);
export const u32 = (value: number): ConstExpr => constant('u32', value);
export const i32 = (value: number): ConstExpr => constant('i32', value);
export const bool = (value: boolean): ConstExpr => constant('bool', value);

export function builtin(name: BuiltinName, axis?: Axis): BuiltinExpr {
  return axis === undefined
    ? { op: 'builtin', type: 'u32', name }
    : { op: 'builtin', type: 'u32', name, axis };
}

function unary(op: UnaryOp) {
  return (value: Expr): UnaryExpr => ({ op, type: value.type, args: [value] });
}

function binary(op: BinaryOp) {
  const comparison = COMPARISON_OPS.includes(op);
  return (left: Expr, right: Expr): BinaryExpr => ({
    op,
    type: comparison ? 'bool' : left.type,
    args: [left, right],
  });
}

export const neg = unary('neg');
export const abs = unary('abs');
export const not = unary('not');
export const sqrt = unary('sqrt');
export const rsqrt = unary('rsqrt');
export const rcp = unary('rcp');
export const exp2 = unary('exp2');
export const log2 = unary('log2');
export const floor = unary('floor');

export const add = binary('add');
export const sub = binary('sub');
export const mul = binary('mul');
export const div = binary('div');
export const rem = binary('rem');
export const min = binary('min');
export const max = binary('max');
export const and = binary('and');
export const or = binary('or');
export const xor = binary('xor');
export const shl = binary('shl');
export const shr = binary('shr');
export const eq = binary('eq');
export const ne = binary('ne');
export const lt = binary('lt');
export const le = binary('le');
export const gt = binary('gt');
export const ge = binary('ge');

export const fma = (a: Expr, b: Expr, c: Expr): Expr => ({
  op: 'fma',
  type: a.type,
  args: [a, b, c],
});
export const select = (condition: Expr, ifTrue: Expr, ifFalse: Expr): Expr => ({
  op: 'select',
  type: ifTrue.type,
  args: [condition, ifTrue, ifFalse],
});
export const convert = (type: ScalarType, value: Expr): Expr => ({
  op: 'convert',
  type,
  args: [value],
});
export const bitcast = (type: ScalarType, value: Expr): Expr => ({
  op: 'bitcast',
  type,
  args: [value],
});
/** The f16 in the low (0) or high (1) half of a u32 word, as an exact f32. */
export const unpackHalf = (word: Expr, half: 0 | 1): UnpackHalfExpr => ({
  op: 'unpack_half',
  type: 'f32',
  half,
  args: [word],
});
