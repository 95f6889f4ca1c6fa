import type { Instruction, Operand } from '../../ast.js';
import { PtxSyntaxError } from '../../errors.js';
import { countSectors, load, store } from '../access.js';
import { compileReader, type Reader } from '../operands.js';
import type { AsyncGroupEffect, InstructionCompiler } from '../program.js';
import { threadIndex, type ExecutionContext } from '../state.js';
import { checkAlignment, compileAddress } from './memory-ops.js';

// cp.async (sm_80+): global to shared without registers. The simulator copies at issue; the
// timing model lands the bytes after the load's latency and holds a cp.async.wait_group until the
// groups it waits for have landed; the sanitizer flags shared bytes touched before that.

const COPY_SIZES = [4, 8, 16];
// State spaces and hints a cp.async may name; its cache operator picks L1 (.ca) or not (.cg).
const COPY_MODIFIERS = new Set([
  'async',
  'shared',
  'shared::cta',
  'global',
  'L2::64B',
  'L2::128B',
  'L2::256B',
  'L2::cache_hint',
]);

function fail(instruction: Instruction, message: string): never {
  throw new PtxSyntaxError(instruction.location.line, instruction.location.text, message);
}

/** The bytes of `src` a lane copies: src-size (a constant or u32 register), or 0 under ignore-src. */
function compileSourceBytes(
  instruction: Instruction,
  operand: Operand | undefined,
  size: number,
  { symbols }: Parameters<InstructionCompiler>[1],
): (context: ExecutionContext, lane: number) => number {
  if (operand === undefined) return () => size;
  const { location } = instruction;
  if (operand.kind === 'integer') {
    const bytes = Number(operand.value);
    if (bytes > size)
      fail(instruction, `cp.async src-size ${bytes} is larger than cp-size ${size}`);
    return () => bytes;
  }
  if (operand.kind !== 'register') fail(instruction, 'cp.async: expected src-size or ignore-src');
  const isPredicate = symbols.registers.get(operand.name)?.type === 'pred';
  const read: Reader = compileReader(operand, isPredicate ? 'pred' : 'u32', symbols, location);
  if (isPredicate) return (context, lane) => (Number(read(context, lane)) !== 0 ? 0 : size);
  // Past cp-size the PTX ISA leaves it undefined; copying cp-size bytes keeps the run going.
  return (context, lane) => Math.min(size, Number(read(context, lane)));
}

/** cp.async.ca / .cg: copies cp-size bytes a lane, the first src-size from global, zeros after. */
const compileCopy: InstructionCompiler = (instruction, compile) => {
  const { modifiers, operands, location } = instruction;
  const cache = modifiers[1];
  if (cache !== 'ca' && cache !== 'cg') return undefined;
  for (const modifier of modifiers.slice(2))
    if (!COPY_MODIFIERS.has(modifier))
      fail(instruction, `unsupported modifier .${modifier} on cp.async`);
  if (!modifiers.some((modifier) => modifier.startsWith('shared')) || !modifiers.includes('global'))
    fail(instruction, 'cp.async copies .global to .shared: name both state spaces');
  const sizeOperand = operands[2];
  const size = sizeOperand?.kind === 'integer' ? Number(sizeOperand.value) : Number.NaN;
  if (!COPY_SIZES.includes(size) || (cache === 'cg' && size !== 16))
    fail(instruction, `cp.async.${cache} copies ${cache === 'cg' ? '16' : '4, 8 or 16'} bytes`);
  const destination = compileAddress(operands[0], compile.symbols, instruction);
  const source = compileAddress(operands[1], compile.symbols, instruction);
  // A cache policy (.L2::cache_hint) comes last; it changes nothing a thread computes.
  const hinted = modifiers.includes('L2::cache_hint');
  const optional = operands.slice(3, hinted ? -1 : undefined);
  if (optional.length > 1) fail(instruction, 'cp.async takes one src-size or ignore-src operand');
  const sourceBytes = compileSourceBytes(instruction, optional[0], size, compile);
  const words = size / 4;
  return {
    family: 'cp.async',
    execute(context, lanes) {
      const accesses: { address: number; size: number }[] = [];
      const { shared } = context.cta;
      for (const lane of lanes) {
        const [to, from] = [destination(context, lane) as number, source(context, lane) as number];
        if (
          !checkAlignment(context, lane, to, size, instruction, 'shared') ||
          !checkAlignment(context, lane, from, size, instruction, 'global')
        )
          continue;
        const bytes = sourceBytes(context, lane);
        if (bytes > 0) accesses.push({ address: from, size: bytes });
        for (let word = 0; word < words; word++) {
          const read = Math.max(0, Math.min(4, bytes - word * 4));
          let value = 0;
          // Whole words load as one; a word src-size cuts loads byte by byte, the rest zeros.
          if (read === 4) value = Number(load(context, lane, { space: 'global', address: from + word * 4, size: 4, location })); // prettier-ignore
          else
            for (let byte = 0; byte < read; byte++)
              value += Number(load(context, lane, { space: 'global', address: from + word * 4 + byte, size: 1, location })) * 2 ** (8 * byte); // prettier-ignore
          store(
            context,
            lane,
            { space: 'shared', address: to + word * 4, size: 4, location },
            value,
          );
        }
        if (context.simulation.sanitize) shared.copies.add(threadIndex(context.warp, lane), to, to + size); // prettier-ignore
      }
      if (accesses.length > 0) countSectors(context, accesses, `copy-${cache}`);
    },
  };
};

/** cp.async.commit_group, cp.async.wait_group N and cp.async.wait_all (a commit, then wait 0). */
const compileGroup: InstructionCompiler = (instruction) => {
  const { modifiers, operands } = instruction;
  const form = modifiers[1];
  if (form !== 'commit_group' && form !== 'wait_group' && form !== 'wait_all') return undefined;
  if (modifiers.length > 2) fail(instruction, `unsupported modifier .${modifiers[2]} on cp.async`);
  const count = operands[0];
  if (form === 'wait_group' && (count?.kind !== 'integer' || operands.length !== 1))
    fail(instruction, 'cp.async.wait_group takes one constant: the groups left pending');
  if (form !== 'wait_group' && operands.length > 0)
    fail(instruction, `cp.async.${form} takes no operands`);
  const asyncGroup: AsyncGroupEffect = {
    commit: form !== 'wait_group',
    pending:
      form === 'commit_group' ? undefined : count?.kind === 'integer' ? Number(count.value) : 0,
  };
  const { commit, pending } = asyncGroup;
  return {
    family: `cp.async.${form}`,
    asyncGroup,
    execute(context, lanes) {
      const { copies } = context.cta.shared;
      for (const lane of lanes) {
        const thread = threadIndex(context.warp, lane);
        if (commit) copies.commit(thread);
        if (pending !== undefined) copies.wait(thread, pending);
      }
    },
  };
};

/** cp.async's copies and groups; other cp forms (bulk copies, mbarrier arrivals) are unsupported. */
export const compileAsyncCopy: InstructionCompiler = (instruction, compile) =>
  instruction.opcode !== 'cp' || instruction.modifiers[0] !== 'async'
    ? undefined
    : (compileCopy(instruction, compile) ?? compileGroup(instruction, compile));
