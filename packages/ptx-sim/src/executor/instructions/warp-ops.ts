import type { Instruction } from '../../ast.js';
import { PtxSyntaxError } from '../../errors.js';
import {
  compileDefinedness,
  compileReader,
  compileWriter,
  flatten,
  type Reader,
} from '../operands.js';
import type { InstructionCompiler } from '../program.js';
import { WARP, report, type ExecutionContext } from '../state.js';

/**
 * Checks a warp-collective instruction's member mask against the lanes that arrived; every lane
 * named in the mask must be executing this instruction now. Returns the mask.
 */
function checkMembers(
  context: ExecutionContext,
  instruction: Instruction,
  arrived: readonly number[],
  mask: number,
): void {
  if (!context.simulation.sanitize) return;
  let present = 0;
  for (const lane of arrived) present |= 1 << lane;
  for (let lane = 0; lane < WARP; lane++) {
    if (((mask >>> lane) & 1) === 0 || ((present >>> lane) & 1) === 1) continue;
    const why =
      lane >= context.warp.size
        ? 'does not exist'
        : context.warp.status[lane] === 2
          ? 'has exited'
          : 'is elsewhere in the program';
    report(
      context,
      'shuffle-mask',
      `member mask 0x${(mask >>> 0).toString(16)} names lane ${lane}, which ${why}`,
      instruction.location,
      arrived[0] ?? 0,
    );
    return;
  }
  for (const lane of arrived) {
    if (((mask >>> lane) & 1) === 0) {
      report(
        context,
        'shuffle-mask',
        `lane ${lane} executes with member mask 0x${(mask >>> 0).toString(16)}, which does not name it`,
        instruction.location,
        lane,
      );
      return;
    }
  }
}

function maskOf(reader: Reader, context: ExecutionContext, lanes: readonly number[]): number {
  return Number(reader(context, lanes[0] ?? 0)) >>> 0;
}

// Per source lane, reused by every execution of every shuffle (one runs at a time): whether it
// takes part, its value and definedness.
const taking = new Uint8Array(WARP);
const values = new Float64Array(WARP);
const defined = new Uint8Array(WARP);

/** shfl.sync per the ISA: segment mask and clamp come from operand c. */
const compileShuffle: InstructionCompiler = (instruction, { symbols }) => {
  if (instruction.opcode !== 'shfl') return undefined;
  const { location, modifiers } = instruction;
  const mode = modifiers.find((modifier) => ['up', 'down', 'bfly', 'idx'].includes(modifier));
  if (!modifiers.includes('sync') || mode === undefined || !modifiers.includes('b32')) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'only shfl.sync.{up,down,bfly,idx}.b32 is supported',
    );
  }
  const [destination, a, b, c, membermask] = instruction.operands;
  if (membermask === undefined)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'shfl.sync needs d, a, b, c, membermask',
    );
  const targets = flatten([destination ?? { kind: 'sink' }]);
  const writeValue = compileWriter(targets[0] ?? { kind: 'sink' }, symbols, location);
  const writePredicate =
    targets[1] === undefined ? undefined : compileWriter(targets[1], symbols, location);
  // The shuffled value only moves: its definedness travels with it; lane and clamp are used.
  const readA = compileReader(a ?? { kind: 'sink' }, 'b32', symbols, location, true);
  const definedA = compileDefinedness(a ?? { kind: 'sink' }, symbols);
  const readB = compileReader(b ?? { kind: 'sink' }, 'b32', symbols, location);
  const readC = compileReader(c ?? { kind: 'sink' }, 'b32', symbols, location);
  const readMask = compileReader(membermask, 'b32', symbols, location);
  return {
    family: 'shfl',
    collective: true,
    execute(context, lanes) {
      checkMembers(context, instruction, lanes, maskOf(readMask, context, lanes));
      taking.fill(0);
      for (const lane of lanes) {
        taking[lane] = 1;
        values[lane] = Number(readA(context, lane));
        defined[lane] = definedA(context, lane) ? 1 : 0;
      }
      for (const lane of lanes) {
        const bval = Number(readB(context, lane)) & 31;
        const cval = Number(readC(context, lane));
        const segmask = (cval >>> 8) & 31;
        const maxLane = (lane & segmask) | (cval & 31 & ~segmask);
        const minLane = lane & segmask;
        let source: number;
        let valid: boolean;
        if (mode === 'up') {
          source = lane - bval;
          valid = source >= maxLane;
        } else if (mode === 'down') {
          source = lane + bval;
          valid = source <= maxLane;
        } else if (mode === 'bfly') {
          source = lane ^ bval;
          valid = source <= maxLane;
        } else {
          source = minLane | (bval & ~segmask);
          valid = source <= maxLane;
        }
        if (!valid) source = lane;
        const present = taking[source] === 1;
        if (!present) {
          report(
            context,
            'shuffle-mask',
            `lane ${lane} reads lane ${source}, which is not taking part`,
            location,
            lane,
          );
        }
        writeValue(
          context,
          lane,
          present ? (values[source] as number) : 0,
          !present || defined[source] === 1,
        );
        writePredicate?.(context, lane, valid ? 1 : 0);
      }
    },
  };
};

/** vote.sync.{all,any,uni,ballot}; `!p` sources are parsed as a negated register name. */
const compileVote: InstructionCompiler = (instruction, { symbols }) => {
  if (instruction.opcode !== 'vote') return undefined;
  const { location, modifiers } = instruction;
  const mode = modifiers.find((modifier) => ['all', 'any', 'uni', 'ballot'].includes(modifier));
  if (!modifiers.includes('sync') || mode === undefined)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'only vote.sync.{all,any,uni,ballot} is supported',
    );
  const [destination, source, membermask] = instruction.operands;
  if (membermask === undefined || source === undefined)
    throw new PtxSyntaxError(location.line, location.text, 'vote.sync needs d, p, membermask');
  const negated = source.kind === 'register' && source.name.startsWith('!');
  const predicate =
    negated && source.kind === 'register'
      ? { kind: 'register' as const, name: source.name.slice(1) }
      : source;
  const write = compileWriter(destination ?? { kind: 'sink' }, symbols, location);
  const read = compileReader(predicate, 'pred', symbols, location);
  const readMask = compileReader(membermask, 'b32', symbols, location);
  return {
    family: 'vote',
    collective: true,
    execute(context, lanes) {
      const mask = maskOf(readMask, context, lanes);
      checkMembers(context, instruction, lanes, mask);
      let ballot = 0;
      for (const lane of lanes)
        if ((Number(read(context, lane)) !== 0) !== negated) ballot |= 1 << lane;
      const members = lanes.reduce((bits, lane) => bits | (1 << lane), 0) & mask;
      const voted = ballot & mask;
      const result =
        mode === 'ballot'
          ? voted >>> 0
          : mode === 'all'
            ? +(voted === members)
            : mode === 'any'
              ? +(voted !== 0)
              : +(voted === 0 || voted === members);
      for (const lane of lanes) write(context, lane, result);
    },
  };
};

/** bar.warp.sync orders the warp's shared-memory accesses (the race detector's warp epoch). */
const compileWarpBarrier: InstructionCompiler = (instruction, { symbols }) => {
  const { opcode, modifiers, location } = instruction;
  if (opcode !== 'bar' || modifiers[0] !== 'warp') return undefined;
  const readMask = compileReader(
    instruction.operands[0] ?? { kind: 'sink' },
    'b32',
    symbols,
    location,
  );
  return {
    family: 'bar.warp',
    collective: true,
    execute(context, lanes) {
      checkMembers(context, instruction, lanes, maskOf(readMask, context, lanes));
      const epochs = context.cta.shared.warpEpochs;
      epochs[context.warp.index] = (epochs[context.warp.index] ?? 0) + 1;
    },
  };
};

const compileActiveMask: InstructionCompiler = (instruction, { symbols }) => {
  if (instruction.opcode !== 'activemask') return undefined;
  const write = compileWriter(
    instruction.operands[0] ?? { kind: 'sink' },
    symbols,
    instruction.location,
  );
  return {
    family: 'activemask',
    execute(context, lanes) {
      const mask = lanes.reduce((bits, lane) => bits | (1 << lane), 0) >>> 0;
      for (const lane of lanes) write(context, lane, mask);
    },
  };
};

export const WARP_COMPILERS: readonly InstructionCompiler[] = [
  compileShuffle,
  compileVote,
  compileWarpBarrier,
  compileActiveMask,
];
