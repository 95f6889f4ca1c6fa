import {
  BINARY_OPS,
  UNARY_OPS,
  type BinaryExpr,
  type BinaryOp,
  type Expr,
  type ExprOp,
  type Stmt,
  type StmtOp,
  type UnaryExpr,
  type UnaryOp,
  type WordExpr,
} from './body.js';
import { InternalError } from './errors.js';
import type { ScalarType } from './types.js';
import {
  bitSelectSemantics,
  dot4I8Semantics,
  funnelShiftRightSemantics,
} from './interpreter/scalar-ops.js';

/**
 * Marks a switch or chain of checks as exhaustive: the argument's type must be `never`, so a new
 * op (or any new union member) is a compile error here until it is handled; at run time (only
 * reachable through unchecked JSON) it throws InternalError.
 */
export function assertNever(value: never, what: string): never {
  const op = (value as { op?: unknown } | null)?.op;
  throw new InternalError('ir', `unhandled ${what}: ${JSON.stringify(op ?? value)}`);
}

/**
 * What kind of node an expression op is: a leaf without operands, or how it combines its `args`
 * (`word`: integer ops on u32 words with one fixed signature, each declared once in `WORD_OPS`).
 */
export type ExprCategory =
  | 'leaf'
  | 'unary'
  | 'binary'
  | 'fma'
  | 'word'
  | 'select'
  | 'conversion'
  | 'unpack'
  | 'pack'
  | 'memory';

/** One expression op's shape: its JSON fields and argument count. */
export interface ExprOpInfo<K extends ExprOp = ExprOp> {
  /** The op's kind of node. */
  readonly category: ExprCategory;
  /** The node's JSON keys, in the order the IR documents them. */
  readonly fields: readonly (keyof Extract<Expr, { op: K }> & string)[];
  /** How many operands `args` must hold (0 for nodes without `args`); the type checker checks it. */
  readonly arity: 0 | 1 | 2 | 3;
}

/** One statement op's shape: its JSON fields and whether it opens nested blocks. */
export interface StmtOpInfo<K extends StmtOp = StmtOp> {
  /** The node's JSON keys, in the order the IR documents them. */
  readonly fields: readonly (keyof Extract<Stmt, { op: K }> & string)[];
  /** The keys holding nested statement lists. */
  readonly blocks: readonly (keyof Extract<Stmt, { op: K }> & string)[];
}

/** A word op's declaration: operand and result types, and what it computes. */
export interface WordOpInfo<R extends ScalarType = ScalarType> {
  /** The three operands' types, in order. */
  readonly operands: readonly [ScalarType, ScalarType, ScalarType];
  /** The result type, whatever the node says (the type checker holds the node to it). */
  readonly result: R;
  /** The reference semantics on numbers, used by the interpreter and constant folding. */
  readonly semantics: (a: number, b: number, c: number) => number;
  /** What it computes, for the IR's readers. */
  readonly description: string;
  /** Why constant operands (undefined where not constant) are undefined behaviour, if they are. */
  readonly constantFault?: (args: readonly unknown[]) => string | undefined;
}

/** `info`, typed by its result type (so each WORD_OPS entry keeps its literal result). */
const word = <R extends ScalarType>(info: WordOpInfo<R>): WordOpInfo<R> => info;

/**
 * Every word op, declared once. A new one is an entry here plus a PTX instruction
 * (`WORD_INSTRUCTIONS` in @forge/ptx) and a WGSL template or expansion (`WORD_LOWERINGS` in
 * @forge/wgsl); the IR's checking, printing, folding and interpretation read this table.
 */
export const WORD_OPS = {
  dot4_i8: word({
    operands: ['u32', 'u32', 'i32'],
    result: 'i32',
    semantics: dot4I8Semantics,
    description:
      'args[2] plus the dot product of the 4 sign-extended little-endian bytes of args[0] and args[1], wrapping to i32',
  }),
  funnel_shift_right: word({
    operands: ['u32', 'u32', 'u32'],
    result: 'u32',
    semantics: funnelShiftRightSemantics,
    constantFault: ([, , shift]) =>
      typeof shift === 'number' && shift >= 32
        ? `funnel shift by constant ${shift} (must be below 32)`
        : undefined,
    description:
      'the low 32 bits of (args[1] * 2^32 + args[0]) >> args[2]: args[0] at a shift of 0, undefined from 32 on',
  }),
  bit_select: word({
    operands: ['u32', 'u32', 'u32'],
    result: 'u32',
    semantics: bitSelectSemantics,
    description: "(args[1] & args[0]) | (args[2] & ~args[0]): args[1]'s bits where the mask is 1",
  }),
};

/** An op of the `word` category: fixed operand and result types, whatever the node says. */
export type WordOp = keyof typeof WORD_OPS;
/** The word ops, in declaration order. */
export const WORD_OP_NAMES = Object.keys(WORD_OPS) as readonly WordOp[];
/** Each word op's declaration, typed as WordOpInfo (WORD_OPS keeps the literal types). */
export const WORD_OP_SIGNATURES: { readonly [K in WordOp]: WordOpInfo } = WORD_OPS;
const wordInfo = { category: 'word', fields: ['op', 'type', 'args'], arity: 3 } as const;

/** True for a string naming a word op. */
export const isWordOp = (op: unknown): op is WordOp =>
  typeof op === 'string' && Object.hasOwn(WORD_OPS, op);

const unaryInfo = { category: 'unary', fields: ['op', 'type', 'args'], arity: 1 } as const;
const binaryInfo = { category: 'binary', fields: ['op', 'type', 'args'], arity: 2 } as const;

/** The registry of expression ops; typed over every `Expr['op']`, so a new op must be added here. */
export const EXPR_OPS: { readonly [K in ExprOp]: ExprOpInfo<K> } = {
  const: { category: 'leaf', fields: ['op', 'type', 'value'], arity: 0 },
  var: { category: 'leaf', fields: ['op', 'type', 'name'], arity: 0 },
  param: { category: 'leaf', fields: ['op', 'type', 'name'], arity: 0 },
  schedule: { category: 'leaf', fields: ['op', 'type', 'name'], arity: 0 },
  builtin: { category: 'leaf', fields: ['op', 'type', 'name', 'axis'], arity: 0 },
  load: { category: 'memory', fields: ['op', 'type', 'memory', 'args'], arity: 1 },
  unpack_half: { category: 'unpack', fields: ['op', 'type', 'half', 'args'], arity: 1 },
  pack_half: { category: 'pack', fields: ['op', 'type', 'args'], arity: 2 },
  fma: { category: 'fma', fields: ['op', 'type', 'args'], arity: 3 },
  select: { category: 'select', fields: ['op', 'type', 'args'], arity: 3 },
  convert: { category: 'conversion', fields: ['op', 'type', 'args'], arity: 1 },
  bitcast: { category: 'conversion', fields: ['op', 'type', 'args'], arity: 1 },
  ...(Object.fromEntries(UNARY_OPS.map((op) => [op, unaryInfo])) as Record<UnaryOp, typeof unaryInfo>), // prettier-ignore
  ...(Object.fromEntries(BINARY_OPS.map((op) => [op, binaryInfo])) as Record<BinaryOp, typeof binaryInfo>), // prettier-ignore
  ...(Object.fromEntries(WORD_OP_NAMES.map((op) => [op, wordInfo])) as Record<WordOp, typeof wordInfo>), // prettier-ignore
};

/** The registry of statement ops, in the order error messages list them. */
export const STMT_OPS: { readonly [K in StmtOp]: StmtOpInfo<K> } = {
  let: { fields: ['op', 'name', 'type', 'value'], blocks: [] },
  assign: { fields: ['op', 'name', 'value'], blocks: [] },
  store: { fields: ['op', 'memory', 'index', 'value'], blocks: [] },
  load_vector: { fields: ['op', 'names', 'type', 'memory', 'index'], blocks: [] },
  store_vector: { fields: ['op', 'memory', 'index', 'values'], blocks: [] },
  if: { fields: ['op', 'condition', 'then', 'else'], blocks: ['then', 'else'] },
  for: { fields: ['op', 'name', 'type', 'start', 'end', 'step', 'body'], blocks: ['body'] },
  barrier: { fields: ['op'], blocks: [] },
  shuffle: { fields: ['op', 'mode', 'name', 'type', 'value', 'lane'], blocks: [] },
  reduce: { fields: ['op', 'reduction', 'name', 'type', 'value'], blocks: [] },
  mma: { fields: ['op', 'shape', 'names', 'a', 'b', 'c'], blocks: [] },
};

/** Which operand types a unary op takes: floats only, floats or i32, or integers and bool. */
export type UnaryOperands = 'float' | 'signed' | 'integer_or_bool';
/** The operand types of each unary op; typed over every UnaryOp, so a new one must be listed. */
export const UNARY_OPERANDS: { readonly [K in UnaryOp]: UnaryOperands } = {
  neg: 'signed', abs: 'signed', not: 'integer_or_bool',
  sqrt: 'float', rsqrt: 'float', rcp: 'float', exp2: 'float', log2: 'float', floor: 'float',
}; // prettier-ignore

/**
 * Which operand types a binary op takes: numbers (`arithmetic`), integers (`integer`), integers or
 * bool (`bitwise`), an integer and a u32 (`shift`), or any one type, yielding bool (`comparison`).
 */
export type BinaryOperands = 'arithmetic' | 'integer' | 'bitwise' | 'shift' | 'comparison';
/** The operand types of each binary op; typed over every BinaryOp, so a new one must be listed. */
export const BINARY_OPERANDS: { readonly [K in BinaryOp]: BinaryOperands } = {
  add: 'arithmetic', sub: 'arithmetic', mul: 'arithmetic', div: 'arithmetic', min: 'arithmetic', max: 'arithmetic',
  rem: 'integer', and: 'bitwise', or: 'bitwise', xor: 'bitwise', shl: 'shift', shr: 'shift',
  eq: 'comparison', ne: 'comparison', lt: 'comparison', le: 'comparison', gt: 'comparison', ge: 'comparison',
}; // prettier-ignore

/** True for a string naming an expression op (for checking unvalidated JSON). */
export const isExprOp = (op: unknown): op is ExprOp =>
  typeof op === 'string' && Object.hasOwn(EXPR_OPS, op);

/** True for a string naming a statement op (for checking unvalidated JSON). */
export const isStmtOp = (op: unknown): op is StmtOp =>
  typeof op === 'string' && Object.hasOwn(STMT_OPS, op);

// Sets, not the arrays: the interpreter asks these for every expression node it evaluates.
const UNARY_OP_SET: ReadonlySet<string> = new Set(UNARY_OPS);
const BINARY_OP_SET: ReadonlySet<string> = new Set(BINARY_OPS);

/** True for a unary op tag. */
export const isUnaryOp = (op: string): op is UnaryOp => UNARY_OP_SET.has(op);

/** True for a binary op tag. */
export const isBinaryOp = (op: string): op is BinaryOp => BINARY_OP_SET.has(op);

/** Narrows an expression to a unary op node; its `else` branch keeps every other kind. */
export const isUnaryExpr = (expression: Expr): expression is UnaryExpr => isUnaryOp(expression.op);

/** Narrows an expression to a binary op node; its `else` branch keeps every other kind. */
export const isBinaryExpr = (expression: Expr): expression is BinaryExpr =>
  isBinaryOp(expression.op);

/** True for an expression whose op is a word op (see WORD_OPS). */
export const isWordExpr = (expression: Expr): expression is WordExpr => isWordOp(expression.op);

/** An expression node with operands. */
export type ExprWithArgs = Extract<Expr, { readonly args: readonly unknown[] }>;

/**
 * Narrows an expression to a node with operands (`args`), read as an own field only: a leaf (a
 * constant, a variable) never finds `args` on a polluted Object.prototype, as `'args' in` would.
 */
export const hasArgs = (expression: Expr): expression is ExprWithArgs =>
  Object.hasOwn(expression, 'args');
