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
import type { Instruction } from '../../ast.js';
import type { AluOp } from '../../semantics/types.js';
import type { CompileContext, Executable, InstructionCompiler } from '../program.js';
import type { Reader, SymbolTable, Writer } from '../operands.js';
import { DEFINED, UNDEFINED } from '../state.js';

/** How an ALU source is read: through its reader, from a 32-bit register, or as a constant. */
const WORD_REGISTER = 1;
const CONSTANT = 2;

// Each builder makes its own array, so V8 never gives one's arrays the other's elements kind;
// `new Array(length)` is exactly as long as asked (a `push`ed array is not: it over-allocates).
/** `length` placeholders in an array of doubles (numbers stored unboxed). */
function doubles(length: number): Bits[] {
  return new Array<number>(length).fill(0.5);
}

/** `length` placeholders in a generic array (bigints and numbers). */
function generic(length: number): Bits[] {
  return new Array<Bits>(length).fill(0n);
}

/** The ALU decoding of an instruction's spelling, once per spelling (CompileContext.aluOps). */
function decodeOnce(
  instruction: Instruction,
  aluOps: CompileContext['aluOps'],
): { readonly op: AluOp; readonly sources: Bits[] } | undefined {
  const { operands } = instruction;
  // How many values each operand holds; most instructions have none but scalars (all 1).
  let shape = `${operands.length}`;
  const arity = operands.map((operand) =>
    operand.kind === 'vector' ? operand.elements.length : operand.kind === 'pair' ? 2 : 1,
  );
  if (arity.some((count) => count !== 1)) shape = arity.join(',');
  let spellings = aluOps.get(instruction.modifiers);
  if (spellings === undefined) aluOps.set(instruction.modifiers, (spellings = new Map()));
  const key = `${instruction.opcode} ${shape}`;
  if (spellings.has(key)) return spellings.get(key);
  const { location } = instruction;
  let op: AluOp | undefined;
  try {
    op = decodeAlu(instruction.opcode, instruction.modifiers, instruction.operands.length, arity);
  } catch (error) {
    throw new PtxSyntaxError(location.line, location.text, (error as Error).message);
  }
  // Reused by every execution: evaluate only reads it while computing one lane. Sources of up to
  // 32 bits are numbers: an array of doubles holds them unboxed. Others hold a bigint from the
  // start. Either way an op's array keeps one elements kind, so its destructuring stays fast.
  const decoded =
    op === undefined
      ? undefined
      : {
          op,
          sources: op.sourceTypes.every((type) => type === 'pred' || typeBytes(type) <= 4)
            ? doubles(op.sourceTypes.length)
            : generic(op.sourceTypes.length),
        };
  spellings.set(key, decoded);
  return decoded;
}

/** In place of the reader of a source read inline (never called). */
const INLINE: Reader = () => 0;

/** How one ALU instruction reads and writes, decided when it is compiled. */
interface AluPlan {
  readonly op: AluOp;
  readonly sources: Bits[];
  /** Per source: WORD_REGISTER, CONSTANT, or 0 (read through `readers`). */
  readonly sourceKinds: readonly number[];
  /** Per source: the slot of a WORD_REGISTER source. */
  readonly sourceSlots: readonly number[];
  /** Per source: the value of a CONSTANT source. */
  readonly constants: readonly Bits[];
  readonly readers: readonly Reader[];
  /** Shadow slots of the register sources (-1: an immediate or special register, always defined). */
  readonly slots: readonly number[];
  readonly selects: boolean;
  /** The slot of a single 32-bit destination written inline, else -1 (use `writers`). */
  readonly inlineDestination: number;
  readonly writers: readonly Writer[];
}

const NO_WRITERS: readonly Writer[] = [];

/**
 * Every ALU op: operands flatten (vectors, `d|p` pairs); the first ones are destinations. ALU ops
 * only compute, so an undefined source is no finding: the results are marked undefined (for selp,
 * only when the predicate or the selected source is), and a later use of them is reported.
 */
export const compileAlu: InstructionCompiler = (instruction, { symbols, aluOps }) => {
  const decoded = decodeOnce(instruction, aluOps);
  if (decoded === undefined) return undefined;
  return { family: decoded.op.family, execute: aluExecute(plan(instruction, decoded, symbols)) };
};

function plan(
  instruction: Instruction,
  { op, sources }: { readonly op: AluOp; readonly sources: Bits[] },
  symbols: SymbolTable,
): AluPlan {
  const { location } = instruction;
  const operands = flatten(instruction.operands);
  const destinations = op.destinationTypes.length;
  if (operands.length !== destinations + op.sourceTypes.length) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `expected ${destinations + op.sourceTypes.length} operands, found ${operands.length}`,
    );
  }
  const sourceOperands = op.sourceTypes.map(
    (_, index) => operands[destinations + index] ?? { kind: 'sink' as const },
  );
  // Operands read inline rather than through their reader: a 32-bit register read as 32 bits, or a
  // constant (immediate or symbol). Only the others get a reader (closures cost memory per line).
  const sourceKinds = op.sourceTypes.map((type, index) => {
    const operand = sourceOperands[index] ?? { kind: 'sink' };
    if (word32Slot(operand, symbols) >= 0 && type !== 'pred' && typeBytes(type) === 4)
      return WORD_REGISTER;
    return constantValue(operand, type, symbols, location) !== undefined ? CONSTANT : 0;
  });
  const constants = generic(op.sourceTypes.length);
  op.sourceTypes.forEach((type, index) => {
    const operand = sourceOperands[index] ?? { kind: 'sink' };
    if (sourceKinds[index] === CONSTANT)
      constants[index] = constantValue(operand, type, symbols, location) ?? 0;
  });
  // A single 32-bit destination without sign extension is written inline too (-1: use the writer).
  const destinationType = op.destinationTypes[0];
  const inlineDestination =
    destinations === 1 && destinationType !== 's8' && destinationType !== 's16'
      ? word32Slot(operands[0] ?? { kind: 'sink' }, symbols)
      : -1;
  return {
    op,
    sources,
    sourceKinds,
    sourceSlots: sourceOperands.map((operand) => word32Slot(operand, symbols)),
    constants,
    readers: op.sourceTypes.map((type, index) =>
      sourceKinds[index] === 0
        ? compileReader(sourceOperands[index] ?? { kind: 'sink' }, type, symbols, location, true)
        : INLINE,
    ),
    slots: sourceOperands.map((operand) => registerSlot(operand, symbols)),
    selects: instruction.opcode === 'selp',
    inlineDestination,
    writers:
      inlineDestination >= 0
        ? NO_WRITERS
        : operands
            .slice(0, destinations)
            .map((operand, index) =>
              compileWriter(operand, symbols, location, op.destinationTypes[index]),
            ),
  };
}

// A function of its own, so the closure keeps only what it reads (not the compile's temporaries).
function aluExecute(plan: AluPlan): Executable['execute'] {
  const { op, sources, sourceKinds, sourceSlots, constants, readers, selects } = plan;
  const { inlineDestination, writers } = plan;
  const registerSlots = plan.slots.filter((slot) => slot >= 0);
  const selectSlot = plan.slots[2] ?? -1;
  const firstSlot = plan.slots[0] ?? -1;
  const secondSlot = plan.slots[1] ?? -1;
  const registerCount = registerSlots.length;
  const readerCount = readers.length;
  const writerCount = writers.length;
  return (context, lanes) => {
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
  };
}
