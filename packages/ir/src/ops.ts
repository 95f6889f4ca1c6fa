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
} from './body.js';
import type { ScalarType } from './types.js';

/**
 * Marks a switch or chain of checks as exhaustive: the argument's type must be `never`, so a new
 * op (or any new union member) is a compile error here until it is handled; at run time (only
 * reachable through unchecked JSON) it throws.
 */
export function assertNever(value: never, what: string): never {
  const op = (value as { op?: unknown } | null)?.op;
  throw new TypeError(`unhandled ${what}: ${JSON.stringify(op ?? value)}`);
}

/**
 * What kind of node an expression op is: a leaf without operands, or how it combines its `args`
 * (`word`: integer ops on u32 words with one fixed signature, listed in `WORD_OP_SIGNATURES`).
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
  dot4_i8: { category: 'word', fields: ['op', 'type', 'args'], arity: 3 },
  funnel_shift_right: { category: 'word', fields: ['op', 'type', 'args'], arity: 3 },
  bit_select: { category: 'word', fields: ['op', 'type', 'args'], arity: 3 },
  select: { category: 'select', fields: ['op', 'type', 'args'], arity: 3 },
  convert: { category: 'conversion', fields: ['op', 'type', 'args'], arity: 1 },
  bitcast: { category: 'conversion', fields: ['op', 'type', 'args'], arity: 1 },
  ...(Object.fromEntries(UNARY_OPS.map((op) => [op, unaryInfo])) as Record<UnaryOp, typeof unaryInfo>), // prettier-ignore
  ...(Object.fromEntries(BINARY_OPS.map((op) => [op, binaryInfo])) as Record<BinaryOp, typeof binaryInfo>), // prettier-ignore
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

/** An op of the `word` category: fixed operand and result types, whatever the node says. */
export type WordOp = 'dot4_i8' | 'funnel_shift_right' | 'bit_select';
/** The operand and result types of each `word` op; the type checker and the op probes read them. */
export const WORD_OP_SIGNATURES: {
  readonly [K in WordOp]: {
    readonly operands: readonly [ScalarType, ScalarType, ScalarType];
    readonly result: Extract<Expr, { op: K }>['type'];
  };
} = {
  dot4_i8: { operands: ['u32', 'u32', 'i32'], result: 'i32' },
  funnel_shift_right: { operands: ['u32', 'u32', 'u32'], result: 'u32' },
  bit_select: { operands: ['u32', 'u32', 'u32'], result: 'u32' },
};

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

/** An expression node with operands. */
export type ExprWithArgs = Extract<Expr, { readonly args: readonly unknown[] }>;

/**
 * Narrows an expression to a node with operands (`args`), read as an own field only: a leaf (a
 * constant, a variable) never finds `args` on a polluted Object.prototype, as `'args' in` would.
 */
export const hasArgs = (expression: Expr): expression is ExprWithArgs =>
  Object.hasOwn(expression, 'args');
