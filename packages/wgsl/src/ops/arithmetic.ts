import {
  ir,
  type BinaryOp,
  type Expr,
  type ScalarType,
  type UnaryOp,
  type WordOp,
} from '@forge/ir';

/** Renders an op from its operands' text; `type` is the operand type. */
export type Template = (args: readonly string[], type: ScalarType) => string;

const call =
  (name: string): Template =>
  (args) =>
    `${name}(${args.join(', ')})`;
const infix =
  (operator: string): Template =>
  (args) =>
    `(${args[0]} ${operator} ${args[1]})`;
const logicalOrBitwise =
  (logical: string, bitwise: string): Template =>
  (args, type) =>
    `(${args[0]} ${type === 'bool' ? logical : bitwise} ${args[1]})`;

/**
 * How the WGSL backend writes each unary op, given its operand's text and type. Backend detail,
 * exported for tests; engines do not need it.
 */
export const UNARY_TEMPLATES: Readonly<Record<UnaryOp, Template>> = {
  neg: (args) => `(-${args[0]})`,
  abs: call('abs'),
  not: (args, type) => `(${type === 'bool' ? '!' : '~'}${args[0]})`,
  sqrt: call('sqrt'),
  rsqrt: call('inverseSqrt'),
  rcp: (args, type) => `(1.0${type === 'f16' ? 'h' : 'f'} / ${args[0]})`,
  exp2: call('exp2'),
  log2: call('log2'),
  floor: call('floor'),
};

/**
 * How the WGSL backend writes each binary op, given its operands' text and type (bool
 * `and`/`or`/`xor` become `&&`, `||`, `!=`). Backend detail, exported for tests; engines do not
 * need it.
 */
export const BINARY_TEMPLATES: Readonly<Record<BinaryOp, Template>> = {
  add: infix('+'),
  sub: infix('-'),
  mul: infix('*'),
  div: infix('/'),
  rem: infix('%'),
  min: call('min'),
  max: call('max'),
  and: logicalOrBitwise('&&', '&'),
  or: logicalOrBitwise('||', '|'),
  // Bool xor is inequality.
  xor: logicalOrBitwise('!=', '^'),
  shl: infix('<<'),
  shr: infix('>>'),
  eq: infix('=='),
  ne: infix('!='),
  lt: infix('<'),
  le: infix('<='),
  gt: infix('>'),
  ge: infix('>='),
};

export const FMA_TEMPLATE: Template = call('fma');

/**
 * How WGSL computes a word op: a template (with the language extension its builtin needs, for a
 * `requires` directive), or an expansion into other IR ops, applied before printing (expandWordOps).
 */
export type WordLowering =
  | { readonly template: Template; readonly requires?: string }
  | { readonly expand: (args: readonly [Expr, Expr, Expr]) => Expr };

/** Each word op's lowering; typed over every WordOp, so a new one must be listed. */
export const WORD_LOWERINGS: { readonly [K in WordOp]: WordLowering } = {
  // The packed_4x8_integer_dot_product builtin plus the accumulator; i32 addition wraps.
  dot4_i8: {
    template: (args) => `(${args[2]} + dot4I8Packed(${args[0]}, ${args[1]}))`,
    requires: 'packed_4x8_integer_dot_product',
  },
  // (lo >> s) | ((hi << 1) << (31 - s)): exact for s in 0..31 although WGSL takes shift amounts
  // modulo 32 (`hi << (32 - s)` would keep hi at s = 0); binding then folds constant parts with
  // wrapping IR semantics, as Tint rejects a constant `<<` that shifts out a 1 bit.
  funnel_shift_right: {
    expand: ([lo, hi, shift]) => ir.or(ir.shr(lo, shift), ir.shl(ir.shl(hi, 1), ir.sub(31, shift))),
  },
  // (a & mask) | (b & ~mask); binding folds `~mask` of a constant mask into one literal.
  bit_select: { expand: ([mask, a, b]) => ir.or(ir.and(a, mask), ir.and(b, ir.not(mask))) },
};

/** WGSL's select takes (false value, true value, condition). */
export const SELECT_TEMPLATE: Template = (args) => `select(${args[2]}, ${args[1]}, ${args[0]})`;
