import type { Instruction, Operand } from '../ast.js';
import type { Program } from '../executor/compile.js';
import type { Executable } from '../executor/program.js';
import { ISSUE_CLASSES, type IssueClass } from '../executor/issue-class.js';

/** What the scoreboard needs of one instruction: its unit, the registers it reads and writes. */
export interface InstructionTiming {
  readonly issueClass: IssueClass;
  /** Index of `issueClass` in ISSUE_CLASSES. */
  readonly classIndex: number;
  /** Register slots read (guard and address registers included) and written. */
  readonly reads: Int32Array;
  readonly writes: Int32Array;
  /** A CTA barrier (`bar.sync`, `barrier.sync`): the warp waits for its CTA. */
  readonly barrier: boolean;
  /** A `ld.param`: a constant-bank operand in SASS, ready as fast as an integer result. */
  readonly param: boolean;
  /**
   * A `mov` splitting a register into a vector (`mov.b32 {%h1, _}, %r1`): SASS reads the half in
   * place (`HADD2.F32 R0, -RZ, R1.H0_H0`), so it issues nothing and its results are the source's.
   */
  readonly alias: boolean;
  /**
   * An unguarded copy of one register into another (`mov.b32 %r63, %r68`). ptxas coalesces the two
   * where their values are never live at once (a guarded load's result moved into the local it
   * replaces, an mma's D into its accumulator): then it issues nothing, like an alias. Where the
   * destination's old value is read after the source was written (a loop-carried prefetch), it is
   * a real MOV, which waits for the source.
   */
  readonly copy: boolean;
  /** cp.async.commit_group (and wait_all): the warp's copies since the last commit form a group. */
  readonly asyncCommit: boolean;
  /** cp.async.wait_group N (wait_all: 0): groups left pending after it; -1 for other instructions. */
  readonly asyncWait: number;
}

// Opcodes whose register operands are all read: stores, reductions, branches, barriers, hints.
const NO_DESTINATION = new Set([
  'st', 'red', 'bar', 'barrier', 'bra', 'ret', 'exit', 'prefetch', 'prefetchu', 'membar', 'fence',
  'trap', 'nanosleep', 'griddepcontrol', 'cp', 'discard', 'applypriority', 'stmatrix',
]); // prettier-ignore

function registersOf(operand: Operand | undefined, into: string[]): void {
  if (operand === undefined) return;
  switch (operand.kind) {
    case 'register':
      into.push(operand.name);
      return;
    case 'vector':
      for (const element of operand.elements) registersOf(element, into);
      return;
    case 'pair':
      registersOf(operand.first, into);
      registersOf(operand.second, into);
      return;
    case 'address':
      if (operand.base?.kind === 'register') into.push(operand.base.name);
      return;
    default:
      return;
  }
}

function timingOf(
  instruction: Instruction,
  slot: (name: string) => number | undefined,
  { issueClass, asyncGroup }: Pick<Executable, 'issueClass' | 'asyncGroup'>,
): InstructionTiming {
  const read: string[] = [];
  const written: string[] = [];
  if (instruction.guard !== undefined) read.push(instruction.guard.register);
  const [first, ...rest] = instruction.operands;
  const writes = !NO_DESTINATION.has(instruction.opcode) && first?.kind !== 'address';
  registersOf(first, writes ? written : read);
  for (const operand of rest) registersOf(operand, read);
  const slots = (names: readonly string[]): Int32Array =>
    Int32Array.from([
      ...new Set(names.map(slot).filter((index): index is number => index !== undefined)),
    ]);
  const { opcode, modifiers } = instruction;
  return {
    issueClass,
    classIndex: ISSUE_CLASSES.indexOf(issueClass),
    reads: slots(read),
    writes: slots(written),
    barrier: (opcode === 'bar' || opcode === 'barrier') && modifiers[0] !== 'warp',
    param: opcode === 'ld' && modifiers.includes('param'),
    alias: opcode === 'mov' && first?.kind === 'vector' && rest[0]?.kind === 'register',
    copy:
      opcode === 'mov' &&
      instruction.guard === undefined &&
      first?.kind === 'register' &&
      slot(first.name) !== undefined &&
      rest.length === 1 &&
      rest[0]?.kind === 'register' &&
      slot(rest[0].name) !== undefined,
    asyncCommit: asyncGroup?.commit === true,
    asyncWait: asyncGroup?.pending ?? -1,
  };
}

/** The scoreboard's view of every instruction of a compiled entry, index for index. */
export function instructionTimings(program: Program): InstructionTiming[] {
  const slot = (name: string): number | undefined => {
    const register = program.symbols.registers.get(name);
    return register === undefined ? undefined : register.index;
  };
  return program.source.map((instruction, index) =>
    timingOf(instruction, slot, program.instructions[index] ?? { issueClass: 'int' }),
  );
}
