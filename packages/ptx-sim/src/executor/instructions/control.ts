import { PtxSyntaxError } from '../../errors.js';
import type { InstructionCompiler } from '../program.js';
import { AT_BARRIER, EXITED, report } from '../state.js';

const compileBranch: InstructionCompiler = (instruction, { labels }) => {
  if (instruction.opcode !== 'bra') return undefined;
  const { location } = instruction;
  const target = instruction.operands[0];
  const index = target?.kind === 'symbol' ? labels.get(target.name) : undefined;
  if (index === undefined)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'bra needs a label defined in this function',
    );
  return {
    family: 'bra',
    changesFlow: true,
    execute(context, lanes) {
      for (const lane of lanes) context.warp.pc[lane] = index;
    },
  };
};

/** trap aborts the launch on a GPU: here a finding, and the lanes that reach it stop. */
const compileTrap: InstructionCompiler = (instruction) => {
  if (instruction.opcode !== 'trap') return undefined;
  return {
    family: 'trap',
    changesFlow: true,
    execute(context, lanes) {
      const [first] = lanes;
      if (first !== undefined)
        report(context, 'trap', 'the kernel executed trap: a GPU aborts the launch here', instruction.location, first); // prettier-ignore
      for (const lane of lanes) context.warp.status[lane] = EXITED;
    },
  };
};

const compileExit: InstructionCompiler = (instruction) => {
  if (instruction.opcode !== 'ret' && instruction.opcode !== 'exit') return undefined;
  return {
    family: instruction.opcode,
    changesFlow: true,
    execute(context, lanes) {
      for (const lane of lanes) context.warp.status[lane] = EXITED;
    },
  };
};

/** bar.sync / barrier.sync park the lanes; the CTA scheduler releases them when everyone arrived. */
const compileBarrier: InstructionCompiler = (instruction) => {
  const { opcode, modifiers, location } = instruction;
  if (opcode !== 'bar' && opcode !== 'barrier') return undefined;
  if (modifiers[0] === 'warp') return undefined;
  const kind = modifiers.filter((modifier) => modifier !== 'aligned')[0] ?? 'sync';
  if (kind !== 'sync' && !(opcode === 'barrier' && kind === 'sync')) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `${opcode}.${kind} is not supported (only ${opcode}.sync)`,
    );
  }
  if (instruction.operands.length > 1)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'barriers with a thread count are not supported',
    );
  return {
    family: 'bar',
    changesFlow: true,
    execute(context, lanes) {
      for (const lane of lanes) context.warp.status[lane] = AT_BARRIER;
    },
  };
};

/**
 * Programmatic dependent launch (sm_90): `griddepcontrol.wait` waits for the grids this one depends
 * on, `.launch_dependents` lets dependents start early. A simulation runs one launch, so both are
 * no-ops.
 */
const compileGridDependency: InstructionCompiler = (instruction) => {
  const { opcode, modifiers, location } = instruction;
  if (opcode !== 'griddepcontrol') return undefined;
  const kind = modifiers.join('.');
  if ((kind !== 'wait' && kind !== 'launch_dependents') || instruction.operands.length > 0)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `griddepcontrol.${kind} is not supported (only .wait and .launch_dependents)`,
    );
  return { family: 'griddepcontrol', execute: () => undefined };
};

export const CONTROL_COMPILERS: readonly InstructionCompiler[] = [
  compileBranch,
  compileExit,
  compileTrap,
  compileBarrier,
  compileGridDependency,
];
