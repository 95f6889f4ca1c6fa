import { PtxSyntaxError } from '../../errors.js';
import { decodeAlu } from '../../semantics/index.js';
import type { Bits } from '../../semantics/types.js';
import { compileReader, compileWriter, flatten, registerSlot } from '../operands.js';
import type { InstructionCompiler } from '../program.js';
import { DEFINED } from '../state.js';

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
  // Reused by every execution: evaluate only reads it while computing one lane. Holding a bigint
  // from the start gives every instruction's array the same generic elements kind, so the ops'
  // destructuring stays on V8's fast path.
  const sources: Bits[] = Array.from({ length: readerCount }, (): Bits => 0n);
  return {
    family: op.family,
    execute(context, lanes) {
      const sanitize = context.simulation.sanitize;
      const { shadow } = context.warp;
      for (let position = 0; position < lanes.length; position++) {
        const lane = lanes[position] as number;
        for (let index = 0; index < readerCount; index++)
          sources[index] = (readers[index] as (typeof readers)[number])(context, lane);
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
        for (let index = 0; index < writerCount; index++)
          (writers[index] as (typeof writers)[number])(context, lane, results[index] ?? 0, defined);
      }
    },
  };
};
