// Instruction semantics: the ALU decoder (one lane at a time) and the tensor-core helpers.
//
// Usage by the executor: `decodeAlu(opcode, modifiers, operands.length, arity)` once per
// instruction, where arity[i] is the number of values operand i holds (vector elements, 2 for a
// `d|p` pair, else 1). Flatten the operands in order; the first `destinationTypes.length` values
// are destinations (a sink `_` discards its value), the rest are sources, each read as its entry
// of `sourceTypes`. For `mov.b32 %r, {%h0, %h1}` that is sourceTypes ['b16', 'b16'] with %h0 in the
// low half; for `mov.b64 {%lo, %hi}, %rd` destinationTypes ['b32', 'b32'] with %lo the low word.
import { BIT_FIELD_DECODERS } from './bit-field.js';
import { COMPARE_DECODERS } from './compare.js';
import { CONVERT_DECODERS } from './convert.js';
import { FLOAT_ARITH_DECODERS } from './float-arith.js';
import { FLOAT_MISC_DECODERS } from './float-misc.js';
import { HALF_DECODERS, isHalfType } from './half.js';
import { INTEGER_DECODERS } from './integer.js';
import { LOGIC_DECODERS } from './logic.js';
import { isPtxType } from './modifiers.js';
import { MOVE_DECODERS } from './move.js';
import type { AluDecoder, AluOp } from './types.js';

type Decoder = (
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  operandArity?: readonly number[],
) => AluOp;

/** Opcodes whose meaning depends on the operand type: integer, f32/f64, or a half type. */
const TYPED = new Set([
  'add',
  'sub',
  'mul',
  'mad',
  'fma',
  'div',
  'neg',
  'abs',
  'min',
  'max',
  'ex2',
  'tanh',
]);

const UNTYPED: ReadonlyMap<string, Decoder> = new Map<string, Decoder>([
  ...LOGIC_DECODERS,
  ...BIT_FIELD_DECODERS,
  ...COMPARE_DECODERS,
  ...CONVERT_DECODERS,
  ...MOVE_DECODERS,
  ...[...FLOAT_MISC_DECODERS].filter(([opcode]) => !TYPED.has(opcode)),
  ...[...INTEGER_DECODERS].filter(([opcode]) => !TYPED.has(opcode)),
]);

function typedDecoder(opcode: string, modifiers: readonly string[]): Decoder | undefined {
  const types = modifiers.filter(isPtxType);
  if (types.some(isHalfType)) return HALF_DECODERS.get(opcode);
  if (types.includes('f32') || types.includes('f64')) {
    return FLOAT_ARITH_DECODERS.get(opcode) ?? FLOAT_MISC_DECODERS.get(opcode);
  }
  return (
    INTEGER_DECODERS.get(opcode) ??
    FLOAT_ARITH_DECODERS.get(opcode) ??
    FLOAT_MISC_DECODERS.get(opcode)
  );
}

/** Decodes an ALU instruction (see AluDecoder); `family` is the opcode. */
export const decodeAlu: AluDecoder = (opcode, modifiers, operandCount, operandArity) => {
  const decoder = TYPED.has(opcode) ? typedDecoder(opcode, modifiers) : UNTYPED.get(opcode);
  return decoder?.(opcode, modifiers, operandCount, operandArity);
};

export { ldmatrix, mmaSync, type Address, type MmaOptions, type MmaShape } from './mma.js';
export type { AluDecoder, AluOp, Bits } from './types.js';
