import { BINARY_OPS, UNARY_OPS, type Expr, type Stmt } from './body.js';
import type { ValidationIssue } from './errors.js';
import { f16FromBits, packHalfBits } from './f16.js';
import {
  BINARY_SEMANTICS,
  UNARY_SEMANTICS,
  bitcastValue,
  convertValue,
  type Value,
} from './interpreter/scalar-ops.js';
import { joinPath } from './json-shape.js';
import {
  WORD_OP_SIGNATURES,
  assertNever,
  hasArgs,
  isBinaryExpr,
  isUnaryExpr,
  isWordExpr,
  isWordOp,
} from './ops.js';
import { isFloatType, type ScalarType } from './types.js';

// WGSL evaluates an expression whose operands are all constants at shader-creation time, and Tint
// rejects the shader when that evaluation faults. These are the faults Tint reports (measured with
// Dawn): integer division or remainder by 0, a shift by 32 or more, a float result that is not
// finite in f32 or beyond ±65504 in f16 (f16 does not round down to its maximum), sqrt of a
// negative, log2 and inverseSqrt of a value not above 0, bitcast or unpack2x16float giving an
// infinity or a NaN, and pack2x16float of a value outside f16's finite range. A `let` is not a
// constant in WGSL, so only the operands written inline count.

const F16_MAX = 65504;

/** A number for a message: at most 7 significant digits (`3e+38`, not `3.0000000054977558e+38`). */
const show = (value: Value | undefined): string =>
  typeof value === 'number' ? String(Number(value.toPrecision(7))) : String(value);
const I32_MIN = -(2 ** 31);

/** A constant's value, or undefined when the expression is not constant (or faulted). */
type Folded = Value | undefined;

class ConstantFolder {
  readonly issues: ValidationIssue[] = [];
  // Each distinct node is folded once, so shared sub-expressions cost nothing more.
  private readonly folded = new Map<Expr, Folded>();
  // Nodes bindConstants turns into a literal (integer and bool ops on literals).
  private readonly literal = new Set<Expr>();

  constructor(private readonly sharedLengths: ReadonlyMap<string, number>) {}

  block(body: readonly Stmt[], path: string): void {
    body.forEach((statement, index) => this.statement(statement, joinPath(path, index)));
  }

  private statement(statement: Stmt, path: string): void {
    const at = (key: string): string => joinPath(path, key);
    switch (statement.op) {
      case 'let':
      case 'assign':
        this.expression(statement.value, at('value'));
        return;
      case 'store':
        this.index(statement.memory, this.expression(statement.index, at('index')), at('index'));
        this.expression(statement.value, at('value'));
        return;
      case 'load_vector':
        this.vectorIndex(statement, statement.names.length, at('index'));
        return;
      case 'store_vector':
        this.vectorIndex(statement, statement.values.length, at('index'));
        statement.values.forEach((value, k) => this.expression(value, joinPath(at('values'), k)));
        return;
      case 'if':
        this.expression(statement.condition, at('condition'));
        this.block(statement.then, at('then'));
        this.block(statement.else, at('else'));
        return;
      case 'for':
        this.expression(statement.start, at('start'));
        this.expression(statement.end, at('end'));
        this.expression(statement.step, at('step'));
        this.block(statement.body, at('body'));
        return;
      case 'shuffle':
        this.expression(statement.lane, at('lane'));
        this.expression(statement.value, at('value'));
        return;
      case 'reduce':
        this.expression(statement.value, at('value'));
        return;
      case 'mma':
        for (const key of ['a', 'b', 'c'] as const)
          statement[key].forEach((value, k) => this.expression(value, joinPath(at(key), k)));
        return;
      case 'barrier':
        return;
      default:
        return assertNever(statement, 'statement op');
    }
  }

  private expression(expression: Expr, path: string): Folded {
    if (this.folded.has(expression)) return this.folded.get(expression);
    const value = this.fold(expression, path);
    this.folded.set(expression, value);
    return value;
  }

  private fault(path: string, message: string): undefined {
    this.issues.push({ path, message: `${message} (Tint folds constants)` });
    return undefined;
  }

  /** A constant index into a shared array of known length must lie inside it. */
  private index(memory: string, index: Folded, path: string): void {
    const length = this.sharedLengths.get(memory);
    if (typeof index === 'number' && length !== undefined && index >= length)
      this.fault(
        path,
        `constant index ${index} is out of bounds of '${memory}' (length ${length})`,
      );
  }

  /**
   * A vector access at a constant index must be aligned to the whole vector (PTX's `ld.v4` and the
   * interpreter require it) and, in a shared array of known length, lie inside it. Tint does not
   * check either (WGSL reads a vector through a `let` base index), nor does ptxas: only a run
   * would find the access, so these are faults of their own, not Tint's.
   */
  private vectorIndex(
    statement: {
      readonly op: 'load_vector' | 'store_vector';
      readonly memory: string;
      readonly index: Expr;
    },
    width: number,
    path: string,
  ): void {
    const index = this.expression(statement.index, path);
    if (typeof index !== 'number') return;
    const { op, memory } = statement;
    if (index % width !== 0)
      this.issues.push({
        path,
        message: `constant index ${index} of a ${width}-wide ${op} is not a multiple of ${width} (a vector access is aligned to the whole vector)`,
      });
    const length = this.sharedLengths.get(memory);
    if (length !== undefined && index + width > length)
      this.issues.push({
        path,
        message: `constant index ${index} of a ${width}-wide ${op} is out of bounds of '${memory}' (length ${length}; it reaches element ${index + width - 1})`,
      });
  }

  /** Checks that a float result exists in `type`; returns it rounded. */
  private float(value: number, type: ScalarType, path: string, what: string): Folded {
    if (type === 'f16') {
      if (!Number.isFinite(value) || Math.abs(value) > F16_MAX)
        return this.fault(path, `${what} gives ${show(value)}, which f16 cannot represent`);
      return convertValue(value, 'f32', 'f16');
    }
    const rounded = Math.fround(value);
    if (!Number.isFinite(rounded))
      return this.fault(path, `${what} gives ${show(value)}, which f32 cannot represent`);
    return rounded;
  }

  private fold(expression: Expr, path: string): Folded {
    if (expression.op === 'const') {
      const value = expression.value;
      if (!isFloatType(expression.type)) this.literal.add(expression);
      // Literals are rounded to their type as the emitters print them.
      if (typeof value === 'number' && isFloatType(expression.type))
        return convertValue(value, 'f32', expression.type);
      return value;
    }
    if (!hasArgs(expression)) return undefined;
    const args = expression.args.map((arg, index) =>
      this.expression(arg, joinPath(joinPath(path, 'args'), index)),
    );
    if (expression.op === 'load') {
      this.index(expression.memory, args[0], joinPath(joinPath(path, 'args'), 0));
      return undefined;
    }
    const type = expression.type;
    const operandType = expression.args[0].type;
    const number = (value: Value | undefined): number => value as number;
    const op = expression.op;
    // A constant divisor or shift amount is checked whatever the other operand is.
    if ((op === 'div' || op === 'rem') && !isFloatType(operandType) && args[1] === 0)
      return this.fault(path, `integer ${op === 'div' ? 'division' : 'remainder'} by constant 0`);
    if ((op === 'shl' || op === 'shr') && number(args[1]) >= 32)
      return this.fault(path, `shift by constant ${number(args[1])} (must be below 32)`);
    const wordFault = isWordOp(op) ? WORD_OP_SIGNATURES[op].constantFault?.(args) : undefined;
    if (wordFault !== undefined) return this.fault(path, wordFault);
    if (args.some((arg) => arg === undefined)) return undefined;
    const [a, b, c] = args as Value[];
    if (!expression.args.every((arg) => this.literal.has(arg))) {
      const fault = integerOverflow(op, number(a), number(b), operandType);
      if (fault !== undefined) return this.fault(path, fault);
    } else if (FOLDED_BY_BINDING.has(op)) this.literal.add(expression);
    switch (expression.op) {
      case 'select':
        return a === true ? b : c;
      case 'fma': {
        const product = this.float(
          number(a) * number(b),
          type,
          path,
          `fma's ${show(a)} * ${show(b)}`,
        );
        if (product === undefined) return undefined;
        return this.float(
          number(product) + number(c),
          type,
          path,
          `fma(${show(a)}, ${show(b)}, ${show(c)})`,
        );
      }
      case 'convert':
        if (type === 'f16') return this.float(number(a), type, path, `convert of ${show(a)}`);
        return convertValue(number(a), operandType, type);
      case 'bitcast': {
        const value = bitcastValue(number(a), operandType, type);
        if (type === 'f32' && !Number.isFinite(value))
          return this.fault(path, `bitcast of ${a} gives ${value} as a constant f32`);
        return value;
      }
      case 'unpack_half': {
        const word = number(a);
        // unpack2x16float evaluates both halves, so either one being inf/NaN faults.
        for (const half of [word & 0xffff, word >>> 16])
          if ((half & 0x7c00) === 0x7c00)
            return this.fault(path, `unpack_half of constant ${word} holds an inf/NaN half`);
        return f16FromBits(expression.half === 0 ? word & 0xffff : word >>> 16);
      }
      case 'pack_half':
        // pack2x16float of constants outside f16's finite range is a shader-creation error.
        for (const value of [number(a), number(b)])
          if (!(Math.abs(value) <= F16_MAX))
            return this.fault(path, `pack_half of constant ${show(value)} (outside ±65504 of f16)`);
        return packHalfBits(number(a), number(b));
    }
    if (isWordExpr(expression)) return WORD_OP_SIGNATURES[expression.op].semantics(number(a), number(b), number(c)); // prettier-ignore
    if (isUnaryExpr(expression)) {
      const x = number(a);
      if (!isFloatType(type)) return UNARY_SEMANTICS[expression.op](x, type);
      switch (expression.op) {
        case 'sqrt':
          if (x < 0) return this.fault(path, `sqrt of constant ${show(x)} (needs a value >= 0)`);
          return this.float(Math.sqrt(x), type, path, `sqrt(${show(x)})`);
        case 'log2':
        case 'rsqrt':
          if (!(x > 0))
            return this.fault(path, `${expression.op} of constant ${show(x)} (needs a value > 0)`);
          return this.float(
            expression.op === 'log2' ? Math.log2(x) : 1 / Math.sqrt(x),
            type,
            path,
            `${expression.op}(${show(x)})`,
          );
        case 'rcp':
          return this.float(1 / x, type, path, `rcp(${show(x)})`);
        case 'exp2':
          return this.float(2 ** x, type, path, `exp2(${show(x)})`);
        default:
          return UNARY_SEMANTICS[expression.op](x, type);
      }
    }
    if (!isBinaryExpr(expression)) return assertNever(expression, 'expression op');
    const binary = expression.op;
    if (
      isFloatType(operandType) &&
      (op === 'add' || op === 'sub' || op === 'mul' || op === 'div')
    ) {
      const [x, y] = [number(a), number(b)];
      const exact = op === 'add' ? x + y : op === 'sub' ? x - y : op === 'mul' ? x * y : x / y;
      return this.float(exact, type, path, `constant ${op}(${show(x)}, ${show(y)})`);
    }
    return BINARY_SEMANTICS[binary](a as Value, b as Value, operandType);
  }
}

// bindConstants folds integer and bool ops on literals itself, wrapping; Tint only evaluates (and
// checks for overflow) what is left: ops with an operand behind convert, bitcast, select…
const FOLDED_BY_BINDING = new Set<string>([...UNARY_OPS, ...BINARY_OPS]);

/** The overflow Tint's constant evaluation reports for an integer op it evaluates itself. */
function integerOverflow(op: string, a: number, b: number, type: ScalarType): string | undefined {
  if (type === 'i32' && (op === 'div' || op === 'rem') && a === I32_MIN && b === -1)
    return `constant ${op}(${a}, -1) overflows i32`;
  if (op !== 'shl' || b === 0) return undefined;
  // u32 may not shift out a 1 bit; i32 may not shift out a bit that differs from the sign.
  const lost = type === 'u32' ? a >>> (32 - b) !== 0 : ![0, -1].includes(a >> (31 - b));
  return lost && (type === 'u32' || type === 'i32')
    ? `constant shl(${a}, ${b}) overflows ${type}`
    : undefined;
}

/**
 * Faults of the constant expressions in a type-checked body: what Tint would reject when it
 * evaluates them, constant indices past a shared array's length (`sharedLengths` holds the lengths
 * known so far; a vector access counts every element it reaches), and constant vector indices not
 * aligned to their vector. Walks each distinct node once.
 */
export function constantFaults(
  body: readonly Stmt[],
  path: string,
  sharedLengths: ReadonlyMap<string, number>,
): ValidationIssue[] {
  const folder = new ConstantFolder(sharedLengths);
  folder.block(body, path);
  return folder.issues;
}
