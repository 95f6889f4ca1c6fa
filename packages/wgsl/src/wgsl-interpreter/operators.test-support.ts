import type { At } from './types.test-support.js';
import { arithmetic, rounding, type Scalar } from './values.test-support.js';

// Binary operators fused with their operands into one closure a lane, spelled out per scalar type so
// each is a distinct function V8 optimizes on its own; the results are exactly values.test-support's
// `arithmetic` and `COMPARISONS` (which the fallback still calls for the rarer pairs).

type LaneNumber = (lane: number) => number;
type Operands = readonly [LaneNumber, LaneNumber];

/** `operator` on 32-bit integers (`u32` when `unsigned`), fused; undefined for the rarer ones. */
function integerOperator(operator: string, unsigned: boolean, [a, b]: Operands): At | undefined {
  switch (operator) {
    case '+':
      return unsigned ? (lane) => (a(lane) + b(lane)) >>> 0 : (lane) => (a(lane) + b(lane)) | 0;
    case '-':
      return unsigned ? (lane) => (a(lane) - b(lane)) >>> 0 : (lane) => (a(lane) - b(lane)) | 0;
    case '*':
      return unsigned
        ? (lane) => Math.imul(a(lane), b(lane)) >>> 0
        : (lane) => Math.imul(a(lane), b(lane));
    case '&':
      return unsigned ? (lane) => (a(lane) & b(lane)) >>> 0 : (lane) => a(lane) & b(lane);
    case '|':
      return unsigned ? (lane) => (a(lane) | b(lane)) >>> 0 : (lane) => a(lane) | b(lane);
    case '^':
      return unsigned ? (lane) => (a(lane) ^ b(lane)) >>> 0 : (lane) => a(lane) ^ b(lane);
    case '<<':
      return unsigned
        ? (lane) => (a(lane) << (b(lane) & 31)) >>> 0
        : (lane) => a(lane) << (b(lane) & 31);
    case '>>':
      return unsigned ? (lane) => a(lane) >>> (b(lane) & 31) : (lane) => a(lane) >> (b(lane) & 31);
    default:
      return undefined;
  }
}

/** The same with a constant right operand, the common `x & 255u`, `x >> 8u`, `x * 4u`. */
function integerConstant(
  operator: string,
  unsigned: boolean,
  a: LaneNumber,
  b: number,
): At | undefined {
  const shift = b & 31;
  switch (operator) {
    case '+':
      return unsigned ? (lane) => (a(lane) + b) >>> 0 : (lane) => (a(lane) + b) | 0;
    case '-':
      return unsigned ? (lane) => (a(lane) - b) >>> 0 : (lane) => (a(lane) - b) | 0;
    case '*':
      return unsigned ? (lane) => Math.imul(a(lane), b) >>> 0 : (lane) => Math.imul(a(lane), b);
    case '&':
      return unsigned ? (lane) => (a(lane) & b) >>> 0 : (lane) => a(lane) & b;
    case '|':
      return unsigned ? (lane) => (a(lane) | b) >>> 0 : (lane) => a(lane) | b;
    case '^':
      return unsigned ? (lane) => (a(lane) ^ b) >>> 0 : (lane) => a(lane) ^ b;
    case '<<':
      return unsigned ? (lane) => (a(lane) << shift) >>> 0 : (lane) => a(lane) << shift;
    case '>>':
      return unsigned ? (lane) => a(lane) >>> shift : (lane) => a(lane) >> shift;
    default:
      return undefined;
  }
}

/** `operator` on f32 (Math.fround after each), fused; undefined for the rarer ones. */
function f32Operator(operator: string, [a, b]: Operands): At | undefined {
  switch (operator) {
    case '+':
      return (lane) => Math.fround(a(lane) + b(lane));
    case '-':
      return (lane) => Math.fround(a(lane) - b(lane));
    case '*':
      return (lane) => Math.fround(a(lane) * b(lane));
    case '/':
      return (lane) => Math.fround(a(lane) / b(lane));
    default:
      return undefined;
  }
}

/**
 * `operator` of `scalar` on the operands' lane values, as `arithmetic(operator, scalar)` computes
 * it; `constant` is the right operand's value where it is the same in every lane.
 */
export function arithmeticAt(
  operator: string,
  scalar: Scalar,
  left: At,
  right: At,
  constant: number | undefined,
): At | undefined {
  const a = left as LaneNumber;
  const b = right as LaneNumber;
  const integer = scalar === 'u32' || scalar === 'i32';
  const fused = integer
    ? constant === undefined
      ? integerOperator(operator, scalar === 'u32', [a, b])
      : integerConstant(operator, scalar === 'u32', a, constant)
    : scalar === 'f32'
      ? f32Operator(operator, [a, b])
      : undefined;
  if (fused !== undefined) return fused;
  const operation = arithmetic(operator, scalar);
  return operation === undefined ? undefined : (lane) => operation(a(lane), b(lane));
}

/** A comparison of the operands' lane values (`==` compares as `===`, as COMPARISONS does). */
export function comparisonAt(operator: string, left: At, right: At): At | undefined {
  const a = left as LaneNumber;
  const b = right as LaneNumber;
  switch (operator) {
    case '==':
      return (lane) => left(lane) === right(lane);
    case '!=':
      return (lane) => left(lane) !== right(lane);
    case '<':
      return (lane) => a(lane) < b(lane);
    case '<=':
      return (lane) => a(lane) <= b(lane);
    case '>':
      return (lane) => a(lane) > b(lane);
    case '>=':
      return (lane) => a(lane) >= b(lane);
    default:
      return undefined;
  }
}

/** `-x` of a signed or float scalar, rounded to it. */
export function negateAt(scalar: Scalar, operand: At): At {
  const a = operand as LaneNumber;
  if (scalar === 'f32') return (lane) => Math.fround(-a(lane));
  if (scalar === 'i32') return (lane) => -a(lane) | 0;
  const round = rounding(scalar);
  return (lane) => round(-a(lane));
}

/**
 * The frequent numeric builtins fused with their arguments, as scalarFunction computes them: f32
 * fma (fused or not), min and max (a NaN operand gives the other), abs; undefined for the rest.
 */
export function numericCallAt(
  name: string,
  scalar: Scalar,
  fusedFma: boolean,
  args: readonly At[],
): At | undefined {
  const [a, b, c] = args as readonly (LaneNumber | undefined)[];
  if (a === undefined) return undefined;
  const float = scalar === 'f32' || scalar === 'f16';
  if (name === 'abs' && args.length === 1 && scalar === 'f32')
    return (lane) => Math.fround(Math.abs(a(lane)));
  if (b === undefined || args.length < 2) return undefined;
  if (name === 'fma' && scalar === 'f32' && c !== undefined && args.length === 3)
    return fusedFma
      ? (lane) => Math.fround(a(lane) * b(lane) + c(lane))
      : (lane) => Math.fround(Math.fround(a(lane) * b(lane)) + c(lane));
  if (args.length !== 2) return undefined;
  if (name === 'min')
    return float
      ? (lane) => {
          const x = a(lane);
          const y = b(lane);
          return Number.isNaN(x) ? y : Number.isNaN(y) ? x : Math.min(x, y);
        }
      : (lane) => {
          const x = a(lane);
          const y = b(lane);
          return x < y ? x : y;
        };
  if (name === 'max')
    return float
      ? (lane) => {
          const x = a(lane);
          const y = b(lane);
          return Number.isNaN(x) ? y : Number.isNaN(y) ? x : Math.max(x, y);
        }
      : (lane) => {
          const x = a(lane);
          const y = b(lane);
          return x > y ? x : y;
        };
  return undefined;
}
