import {
  BINARY_OPERANDS,
  EXPR_OPS,
  SCALAR_TYPES,
  UNARY_OPERANDS,
  WORD_OP_SIGNATURES,
  assertNever,
  isBinaryOp,
  isFloatType,
  isIntegerType,
  isUnaryOp,
  type ExprOp,
  type ScalarType,
} from '@forge/ir';

/** An op that computes from operands: every expression op but leaves and loads. */
export type ComputeOp = Exclude<
  ExprOp,
  'const' | 'var' | 'param' | 'schedule' | 'builtin' | 'load'
>;

/** Every computing op of the registry, in its order. */
export const COMPUTE_OPS: readonly ComputeOp[] = (Object.keys(EXPR_OPS) as ExprOp[]).filter(
  (op): op is ComputeOp => EXPR_OPS[op].category !== 'leaf' && EXPR_OPS[op].category !== 'memory',
);

const NUMERIC: readonly ScalarType[] = SCALAR_TYPES.filter((type) => type !== 'bool');
const WORDS: readonly ScalarType[] = ['f32', 'i32', 'u32'];

/** Whether unary `op` takes `type`, read from the registry's `UNARY_OPERANDS`. */
export function unaryTakes(op: keyof typeof UNARY_OPERANDS, type: ScalarType): boolean {
  const takes = UNARY_OPERANDS[op];
  switch (takes) {
    case 'float':
      return isFloatType(type);
    case 'signed':
      return isFloatType(type) || type === 'i32';
    case 'integer_or_bool':
      return isIntegerType(type) || type === 'bool';
    default:
      return assertNever(takes, 'unary operand kind');
  }
}

/** Whether binary `op` takes a left operand of `type`, read from the registry's `BINARY_OPERANDS`. */
export function binaryTakes(op: keyof typeof BINARY_OPERANDS, type: ScalarType): boolean {
  const takes = BINARY_OPERANDS[op];
  switch (takes) {
    case 'arithmetic':
      return type !== 'bool';
    case 'integer':
    case 'shift':
      return isIntegerType(type);
    case 'bitwise':
      return isIntegerType(type) || type === 'bool';
    case 'comparison':
      return type !== 'bool' || op === 'eq' || op === 'ne';
    default:
      return assertNever(takes, 'binary operand kind');
  }
}

/**
 * The operand (source) types `op` takes paired with the type it yields, from the registry: one
 * entry per type for unary/binary/fma/select, one per (from, to) pair for conversions, and a word
 * op's first operand type to its result (`WORD_OP_SIGNATURES`).
 */
export function opTypes(op: ComputeOp): readonly (readonly [from: ScalarType, to: ScalarType])[] {
  if (isUnaryOp(op)) return SCALAR_TYPES.filter((t) => unaryTakes(op, t)).map((t) => [t, t]);
  if (isBinaryOp(op)) {
    const result = (t: ScalarType): ScalarType => (BINARY_OPERANDS[op] === 'comparison' ? 'bool' : t); // prettier-ignore
    return SCALAR_TYPES.filter((t) => binaryTakes(op, t)).map((t) => [t, result(t)]);
  }
  const category = EXPR_OPS[op].category;
  switch (category) {
    case 'fma':
      return SCALAR_TYPES.filter(isFloatType).map((t) => [t, t]);
    case 'word': {
      const { operands, result } = WORD_OP_SIGNATURES[op as keyof typeof WORD_OP_SIGNATURES];
      return [[operands[0], result]];
    }
    case 'select':
      return SCALAR_TYPES.map((t) => [t, t]);
    case 'conversion': {
      const types = op === 'bitcast' ? WORDS : NUMERIC;
      return types.flatMap((from) => types.map((to) => [from, to] as const));
    }
    case 'unpack':
      return [['u32', 'f32']];
    case 'pack':
      return [['f32', 'u32']];
    case 'unary':
    case 'binary':
    case 'leaf':
    case 'memory':
      throw new TypeError(`${op} is not a ${category} op the probe handles here`);
    default:
      return assertNever(category, 'expression category');
  }
}
