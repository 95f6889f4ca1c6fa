import type { PtxType } from '../ast.js';

/**
 * A register's contents: the unsigned bit pattern. Types of 32 bits or fewer (and `pred`, 0 or 1)
 * hold a number in [0, 2^width); 64-bit types hold a bigint in [0, 2^64). An f32 is its IEEE bits.
 */
export type Bits = number | bigint;

/**
 * One ALU instruction, decoded once when the kernel is loaded: `evaluate` maps the source operand
 * values of one lane to its destination value(s). The executor reads sources (registers or
 * immediates converted to the source types), calls `evaluate`, and writes the destinations.
 */
export interface AluOp {
  /** Types the executor converts each source operand to (immediates included), in order. */
  readonly sourceTypes: readonly PtxType[];
  /** Types of the destination operands, in order (usually one; `setp` with `|` has two). */
  readonly destinationTypes: readonly PtxType[];
  /** The lane's result(s), one per destination. */
  evaluate(sources: readonly Bits[]): readonly Bits[];
  /** Family for the instruction counters (`add`, `fma`, `cvt`, …). */
  readonly family: string;
}

/**
 * Decodes an ALU instruction from its opcode and modifiers (and operand count); returns undefined
 * when the opcode is not an ALU op, and throws an Error whose message says what is unsupported when
 * the opcode is known but a modifier combination is not implemented.
 *
 * `operandCount` is the number of operands as written. `operandArity`, when given, is how many
 * values each written operand holds: n for a vector `{a, b, …}` of n elements (sinks included),
 * 2 for a pair `d|p`, 1 otherwise. Without it every operand counts as one value, so forms that
 * need it (`mov` pack/unpack, `setp p|q`, `lop3.or d|p`) are not recognized. The executor
 * flattens vectors and pairs in order: the first `destinationTypes.length` values are
 * destinations, the rest sources.
 */
export type AluDecoder = (
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  operandArity?: readonly number[],
) => AluOp | undefined;
