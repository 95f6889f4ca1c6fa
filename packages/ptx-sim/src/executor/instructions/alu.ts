import { PtxSyntaxError } from '../../errors.js';
import { decodeAlu } from '../../semantics/index.js';
import type { Bits } from '../../semantics/types.js';
import { typeBytes } from '../../ast.js';
import {
  compileReader,
  compileWriter,
  constantValue,
  fitBits,
  flatten,
  registerSlot,
  word32Slot,
} from '../operands.js';
import type { InstructionCompiler } from '../program.js';
import { DEFINED, UNDEFINED } from '../state.js';

/** How an ALU source is read: through its reader, from a 32-bit register, or as a constant. */
const WORD_REGISTER = 1;
const CONSTANT = 2;

// Each builder has its own array literal, so V8 never gives one's arrays the other's elements kind.
/** `length` placeholders in an array of doubles (numbers stored unboxed). */
function doubles(length: number): Bits[] {
  const array: number[] = [];
  for (let index = 0; index < length; index++) array.push(0.5);
  return array;
}

/** `length` placeholders in a generic array (bigints and numbers). */
function generic(length: number): Bits[] {
  const array: Bits[] = [];
  for (let index = 0; index < length; index++) array.push(0n);
  return array;
}

/**
 * Every ALU op: operands flatten (vectors, `d|p` pairs); the first ones are destinations. ALU ops
 * only compute, so an undefined source is no finding: the results are marked undefined (for selp,
 * only when the predicate or the selected source is), and a later use of them is reported.
 */
export const compileAlu: InstructionCompiler = (instruction, { symbols }) => {
  const { location } = instruction;
  let op;
  try {
    const arity = instruction.operands.map((operand) =>
      operand.kind === 'vector' ? operand.elements.length : operand.kind === 'pair' ? 2 : 1,
    );
    op = decodeAlu(instruction.opcode, instruction.modifiers, instruction.operands.length, arity);
  } catch (error) {
    throw new PtxSyntaxError(location.line, location.text, (error as Error).message);
  }
  if (op === undefined) return undefined;
  const operands = flatten(instruction.operands);
  const destinations = op.destinationTypes.length;
  if (operands.length !== destinations + op.sourceTypes.length) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `expected ${destinations + op.sourceTypes.length} operands, found ${operands.length}`,
    );
  }
  const writers = operands
    .slice(0, destinations)
    .map((operand, index) => compileWriter(operand, symbols, location, op.destinationTypes[index]));
  const sourceOperands = op.sourceTypes.map(
    (_, index) => operands[destinations + index] ?? { kind: 'sink' as const },
  );
  const readers = op.sourceTypes.map((type, index) =>
    compileReader(sourceOperands[index] ?? { kind: 'sink' }, type, symbols, location, true),
  );
  // Shadow slots of the register sources (-1: an immediate or special register, always defined).
  const slots = sourceOperands.map((operand) => registerSlot(operand, symbols));
  const registerSlots = slots.filter((slot) => slot >= 0);
  const selects = instruction.opcode === 'selp';
  const selectSlot = slots[2] ?? -1;
  const firstSlot = slots[0] ?? -1;
  const secondSlot = slots[1] ?? -1;
  const registerCount = registerSlots.length;
  const readerCount = readers.length;
  const writerCount = writers.length;
  // Operands read inline rather than through their reader: a 32-bit register read as 32 bits, or a
  // constant (immediate or symbol). The readers stay for everything else.
  const sourceKinds = new Int8Array(readerCount);
  const sourceSlots = new Int32Array(readerCount);
  const constants = generic(readerCount);
  op.sourceTypes.forEach((type, index) => {
    const operand = sourceOperands[index] ?? { kind: 'sink' };
    const slot = word32Slot(operand, symbols);
    const constant = constantValue(operand, type, symbols, location);
    if (slot >= 0 && type !== 'pred' && typeBytes(type) === 4) {
      sourceKinds[index] = WORD_REGISTER;
      sourceSlots[index] = slot;
    } else if (constant !== undefined) {
      sourceKinds[index] = CONSTANT;
      constants[index] = constant;
    }
  });
  // A single 32-bit destination without sign extension is written inline too (-1: use the writer).
  const destinationType = op.destinationTypes[0];
  const inlineDestination =
    writerCount === 1 && destinationType !== 's8' && destinationType !== 's16'
      ? word32Slot(operands[0] ?? { kind: 'sink' }, symbols)
      : -1;
  // Reused by every execution: evaluate only reads it while computing one lane. Sources of up to
  // 32 bits are numbers: an array of doubles holds them unboxed. Others hold a bigint from the
  // start. Either way an op's array keeps one elements kind, so its destructuring stays fast.
  const narrow = op.sourceTypes.every((type) => type === 'pred' || typeBytes(type) <= 4);
  const sources = narrow ? doubles(readerCount) : generic(readerCount);
  return {
    family: op.family,
    execute(context, lanes) {
      const sanitize = context.simulation.sanitize;
      const { shadow, values } = context.warp;
      for (let position = 0; position < lanes.length; position++) {
        const lane = lanes[position] as number;
        for (let index = 0; index < readerCount; index++) {
          const kind = sourceKinds[index];
          sources[index] =
            kind === WORD_REGISTER
              ? (values[(sourceSlots[index] as number) + lane] as number) >>> 0
              : kind === CONSTANT
                ? (constants[index] as Bits)
                : (readers[index] as (typeof readers)[number])(context, lane);
        }
        const results = op.evaluate(sources);
        let defined = true;
        if (sanitize) {
          // selp d, a, b, c: d is a when c is 1, so only c and the chosen source matter.
          if (selects) {
            const chosen = (Number(sources[2]) & 1) === 1 ? firstSlot : secondSlot;
            defined =
              (selectSlot < 0 || shadow[selectSlot + lane] === DEFINED) &&
              (chosen < 0 || shadow[chosen + lane] === DEFINED);
          } else
            for (let index = 0; index < registerCount && defined; index++)
              defined = shadow[(registerSlots[index] as number) + lane] === DEFINED;
        }
        if (inlineDestination >= 0) {
          // What the register's writer stores: fitBits(result, 4), and the definedness.
          // at() rather than [0]: ops return arrays of several elements kinds, and an indexed load
          // site that sees them all is many times slower than the builtin.
          const result = results.at(0) ?? 0;
          values[inlineDestination + lane] =
            typeof result === 'number' ? result >>> 0 : (fitBits(result, 4) as number);
          shadow[inlineDestination + lane] = defined ? DEFINED : UNDEFINED;
        } else
          for (let index = 0; index < writerCount; index++)
            (writers[index] as (typeof writers)[number])(
              context,
              lane,
              results.at(index) ?? 0,
              defined,
            );
      }
    },
  };
};
