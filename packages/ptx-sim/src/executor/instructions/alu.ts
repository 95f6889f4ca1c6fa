import { PtxSyntaxError } from '../../errors.js';
import { decodeAlu } from '../../semantics/index.js';
import type { Bits } from '../../semantics/types.js';
import { compileReader, compileWriter, flatten } from '../operands.js';
import type { InstructionCompiler } from '../program.js';

/** Every ALU op: operands flatten (vectors, `d|p` pairs); the first ones are destinations. */
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
  const readers = op.sourceTypes.map((type, index) =>
    compileReader(operands[destinations + index] ?? { kind: 'sink' }, type, symbols, location),
  );
  const evaluate = op.evaluate.bind(op);
  return {
    family: op.family,
    execute(context, lanes) {
      const sources: Bits[] = new Array<Bits>(readers.length);
      for (const lane of lanes) {
        for (let index = 0; index < readers.length; index++)
          sources[index] = (readers[index] as (typeof readers)[number])(context, lane);
        const results = evaluate(sources);
        for (let index = 0; index < writers.length; index++)
          (writers[index] as (typeof writers)[number])(context, lane, results[index] ?? 0);
      }
    },
  };
};
