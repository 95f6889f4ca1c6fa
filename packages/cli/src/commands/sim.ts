import {
  dramBytesRead,
  formatFinding,
  MAX_DYNAMIC_SHARED_BYTES,
  parsePtx,
  sectorEfficiency,
  simulate,
  totalWarpInstructions,
  type KernelArgument,
  type PtxModule,
  type SimulationResult,
} from '@forge/ptx-sim';
import { parseCommandArgs } from '../args.js';
import {
  estimateFigures,
  gpuOption,
  ptxasRegisters,
  registersOption,
  sampleOption,
} from '../gpu-option.js';
import { EXIT_CHECK_FAILED, EXIT_OK, UsageError } from '../errors.js';
import { readInputFile, readInputText } from '../input-file.js';
import type { CliIo } from '../io.js';
import { CLI_LIMITS, formatBytes } from '../limits.js';
import { countOption, integerIn, typedValue } from '../numbers.js';
import { planOutputs, writeOutputs } from '../output.js';

/** Default --max-steps: about three seconds of simulation, so an endless loop ends quickly. */
export const DEFAULT_MAX_STEPS = 100_000_000;
/** Largest --max-steps. */
export const MAX_STEPS_LIMIT = 1e12;
/** Most bytes all buffer arguments together may hold (zeros:BYTES and @FILE): 1 GiB. */
export const MAX_SIM_BYTES = 2 ** 30;

export const SIM_USAGE =
  'forge sim FILE.ptx [--entry NAME] --grid X[,Y,Z] --block X[,Y,Z] [--arg NAME=SPEC]... [--dump NAME=FILE]... [--dynamic-shared BYTES] [--max-steps N] [--gpu A100|H100|H200 [--sample-blocks K] [--registers N]] [--json]  (SPEC: @FILE, zeros:BYTES, u32:V, i32:V, u64:V, f32:V, pack:T:V,T:V,... with T one of u8, u16, u32, i32, u64, f32; buffers at most 1 GiB in all; N thread instructions, default 1e8; BYTES of dynamic shared memory for .extern .shared arrays, default 0)';

// CUDA's limits: grid x up to 2^31-1, y and z up to 65535; at most 1024 threads a block.
const GRID_MAX = [2 ** 31 - 1, 65535, 65535] as const;
const BLOCK_MAX = [1024, 1024, 64] as const;

function dims(text: string | undefined, option: '--grid' | '--block'): [number, number, number] {
  if (text === undefined) throw new UsageError(`${option} is required; usage: ${SIM_USAGE}`);
  const parts = text.split(',').map((part) => part.trim());
  const limits = option === '--grid' ? GRID_MAX : BLOCK_MAX;
  if (parts.length > 3)
    throw new UsageError(`${option}: '${text}' is not 1 to 3 positive integers X[,Y,Z]`);
  const values = parts.map((part, axis) =>
    countOption(`${option} ${'xyz'[axis]}`, part, 1, limits[axis] ?? 1),
  );
  const [x = 1, y = 1, z = 1] = values;
  if (option === '--block' && x * y * z > 1024)
    throw new UsageError(`--block: ${x}×${y}×${z} is ${x * y * z} threads, over 1024`);
  return [x, y, z];
}

const PACK_BYTES: Readonly<Record<string, number>> = {
  u8: 1,
  u16: 2,
  u32: 4,
  i32: 4,
  u64: 8,
  f32: 4,
};

function packValue(view: DataView, offset: number, type: string, value: number | bigint): void {
  if (type === 'f32') view.setFloat32(offset, Number(value), true);
  else if (type === 'u64') view.setBigUint64(offset, BigInt(value), true);
  else if (type === 'i32') view.setInt32(offset, Number(value), true);
  else if (type === 'u32') view.setUint32(offset, Number(value), true);
  else if (type === 'u16') view.setUint16(offset, Number(value), true);
  else view.setUint8(offset, Number(value));
}

/** Parses one --arg SPEC into what the simulator passes for that parameter; `budget` holds the bytes left. */
function argument(
  name: string,
  spec: string,
  cwd: string,
  budget: { bytes: number },
): KernelArgument {
  const bad = (why: string): never => {
    throw new UsageError(
      `--arg ${name}: ${why} (SPEC is @FILE, zeros:BYTES, u32:V, i32:V, u64:V, f32:V or pack:T:V,...)`,
    );
  };
  const take = (bytes: number): number => {
    if (bytes > budget.bytes)
      bad(`${bytes} bytes would take the buffers over ${MAX_SIM_BYTES} bytes (1 GiB) in all`);
    budget.bytes -= bytes;
    return bytes;
  };
  if (spec.startsWith('@')) {
    // A regular file only, read up to the bytes the buffers have left and one more.
    const bytes = readInputFile(`--arg ${name}`, spec.slice(1), cwd, {
      maxBytes: budget.bytes,
      rule: `all buffers together may take ${formatBytes(MAX_SIM_BYTES)}, ${budget.bytes} of them still free`,
    });
    take(bytes.length);
    return { kind: 'buffer', bytes };
  }
  const [kind = '', ...rest] = spec.split(':');
  const value = rest.join(':');
  switch (kind) {
    case 'zeros': {
      const bytes = integerIn(value, 0n, BigInt(MAX_SIM_BYTES));
      if (bytes === undefined)
        return bad(`'${value}' is not a byte count in [0, ${MAX_SIM_BYTES}]`);
      return { kind: 'buffer', bytes: new Uint8Array(take(Number(bytes))) };
    }
    case 'u32':
    case 'i32':
    case 'u64':
    case 'f32': {
      const scalar = typedValue(kind, value);
      return typeof scalar === 'string' ? bad(scalar) : { kind: 'scalar', value: scalar };
    }
    case 'pack': {
      const items = value.split(',').map((item) => {
        const [type = '', text = '', ...extra] = item.split(':');
        const bytes = Object.hasOwn(PACK_BYTES, type) ? PACK_BYTES[type] : undefined;
        if (bytes === undefined || extra.length > 0)
          return bad(`'${item}' is not T:V with T one of ${Object.keys(PACK_BYTES).join(', ')}`);
        const parsed = typedValue(type, text);
        return typeof parsed === 'string' ? bad(parsed) : { type, bytes, value: parsed };
      });
      const bytes = new Uint8Array(items.reduce((total, item) => total + item.bytes, 0));
      const view = new DataView(bytes.buffer);
      let offset = 0;
      for (const item of items) {
        packValue(view, offset, item.type, item.value);
        offset += item.bytes;
      }
      return { kind: 'bytes', bytes };
    }
    default:
      return bad(`unknown kind '${kind}'`);
  }
}

/**
 * A float given for an integer parameter (or the reverse) would be converted, not passed as
 * written: `f32:1.5` for a `.u32` is refused rather than run as 1. `.b` parameters take either.
 */
function checkScalarKinds(
  module: PtxModule,
  entryName: string | undefined,
  args: Readonly<Record<string, KernelArgument>>,
  kinds: ReadonlyMap<string, string>,
): void {
  const entry =
    entryName === undefined && module.entries.length === 1
      ? module.entries[0]
      : module.entries.find((candidate) => candidate.name === entryName);
  for (const parameter of entry?.params ?? []) {
    const kind = kinds.get(parameter.name);
    if (!Object.hasOwn(args, parameter.name) || args[parameter.name]?.kind !== 'scalar') continue;
    if (kind === undefined || parameter.type.startsWith('b')) continue;
    if (kind.startsWith('f') !== parameter.type.startsWith('f'))
      throw new UsageError(
        `--arg ${parameter.name}: ${/^[if]/.test(kind) ? 'an' : 'a'} ${kind} value for a .${parameter.type} parameter would be converted; give ${parameter.type.startsWith('f') ? 'f32:V' : 'an integer kind (u32:V, i32:V, u64:V)'}`,
      );
  }
}

/** Summary figures of a simulation, for text and --json output. */
export function simulationFigures(result: SimulationResult): Record<string, unknown> {
  const warpInstructions = totalWarpInstructions(result.counters);
  return {
    findings: result.findings.map(formatFinding),
    warpInstructions,
    threadInstructions: result.counters.threadInstructions,
    instructionsByFamily: result.counters.warpInstructions,
    buffers: result.counters.buffers,
    sectorEfficiency: sectorEfficiency(result.counters),
    dramBytesRead: dramBytesRead(result.counters),
    milliseconds: result.milliseconds,
    warpInstructionsPerSecond:
      result.milliseconds > 0 ? (warpInstructions / result.milliseconds) * 1000 : 0,
  };
}

export function describeCounters(result: SimulationResult): string {
  const figures = simulationFigures(result);
  const families = Object.entries(result.counters.warpInstructions)
    .sort(([, a], [, b]) => b - a)
    .map(([family, count]) => `${family} ${count}`)
    .join(', ');
  const traffic = Object.entries(result.counters.buffers)
    .map(
      ([name, buffer]) => `${name}: read ${buffer.bytesRead} B, written ${buffer.bytesWritten} B`,
    )
    .join('; ');
  const { sample } = result;
  const sampled =
    sample === undefined
      ? ''
      : ` in ${sample.blocks} of ${result.grid[0] * result.grid[1] * result.grid[2]} blocks`;
  return [
    `warp instructions ${figures['warpInstructions']}${sampled} (${families})`,
    `global traffic ${traffic || 'none'}; sector efficiency ${((figures['sectorEfficiency'] as number) * 100).toFixed(1)}%; DRAM read ${figures['dramBytesRead']} B (4 MiB L2 model)`,
    `simulated ${Math.round(figures['warpInstructionsPerSecond'] as number)} warp instructions/s in ${result.milliseconds.toFixed(1)} ms`,
  ].join('\n');
}

/** Runs any PTX file on the simulator. */
export function simCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(
    args,
    {
      entry: { type: 'string' },
      grid: { type: 'string' },
      block: { type: 'string' },
      arg: { type: 'string', multiple: true },
      dump: { type: 'string', multiple: true },
      'max-steps': { type: 'string' },
      'dynamic-shared': { type: 'string' },
      gpu: { type: 'string' },
      'sample-blocks': { type: 'string' },
      registers: { type: 'string' },
      json: { type: 'boolean' },
    },
    SIM_USAGE,
  );
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0)
    throw new UsageError(`expected one PTX file; usage: ${SIM_USAGE}`);
  const text = readInputText(undefined, file, io.cwd, {
    maxBytes: CLI_LIMITS.sourceBytes,
    rule: `a PTX file may have at most ${formatBytes(CLI_LIMITS.sourceBytes)}`,
  });
  const gpu = gpuOption(parsed.string('gpu'));
  const sampleBlocks = sampleOption(parsed.string('sample-blocks'), gpu);
  const registers = registersOption(parsed.string('registers'), gpu);
  const grid = dims(parsed.string('grid'), '--grid');
  const block = dims(parsed.string('block'), '--block');
  const maxStepsText = parsed.string('max-steps');
  const maxSteps =
    maxStepsText === undefined
      ? DEFAULT_MAX_STEPS
      : countOption('--max-steps', maxStepsText, 1, MAX_STEPS_LIMIT);
  const dynamicSharedText = parsed.string('dynamic-shared');
  const dynamicSharedBytes =
    dynamicSharedText === undefined
      ? 0
      : countOption('--dynamic-shared', dynamicSharedText, 0, MAX_DYNAMIC_SHARED_BYTES);
  // No prototype: an argument named __proto__ or constructor is just a name the simulator rejects.
  const kernelArgs: Record<string, KernelArgument> = Object.create(null) as Record<
    string,
    KernelArgument
  >;
  const budget = { bytes: MAX_SIM_BYTES };
  const scalarKinds = new Map<string, string>();
  for (const assignment of parsed.strings('arg')) {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(assignment);
    if (match === null || match[1] === undefined || match[2] === undefined)
      throw new UsageError(`--arg: '${assignment}' is not NAME=SPEC`);
    if (Object.hasOwn(kernelArgs, match[1]))
      throw new UsageError(`--arg: '${match[1]}' is given twice`);
    kernelArgs[match[1]] = argument(match[1], match[2], io.cwd, budget);
    scalarKinds.set(match[1], match[2].split(':')[0] ?? '');
  }
  const dumpRequests = parsed.strings('dump').map((assignment) => {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(assignment);
    if (match === null || match[1] === undefined || match[2] === undefined)
      throw new UsageError(`--dump: '${assignment}' is not NAME=FILE`);
    const target = Object.hasOwn(kernelArgs, match[1]) ? kernelArgs[match[1]] : undefined;
    if (target?.kind !== 'buffer')
      throw new UsageError(`--dump: '${match[1]}' is not a buffer argument`);
    return { bytes: target.bytes, option: `--dump ${match[1]}`, given: match[2] };
  });
  const planned = planOutputs(dumpRequests, io.cwd);
  // Only the launched entry must be runnable: the others may use constructs the simulator lacks.
  const module = parsePtx(text, { lazyEntries: true });
  const entry = parsed.string('entry');
  checkScalarKinds(module, entry, kernelArgs, scalarKinds);
  const entryName = entry ?? (module.entries.length === 1 ? module.entries[0]?.name : undefined);
  // ptxas's register count for the GPU's arch (or --registers) sets the occupancy.
  const timing =
    gpu === undefined || entryName === undefined
      ? undefined
      : {
          gpu,
          registers: registers ?? ptxasRegisters(text, gpu, [entryName])[entryName] ?? 0,
        };
  const result = simulate(module, {
    ...(entry === undefined ? {} : { entry }),
    grid,
    block,
    args: kernelArgs,
    maxThreadInstructions: maxSteps,
    dynamicSharedBytes,
    ...(sampleBlocks === undefined ? {} : { sampleBlocks }),
    ...(timing === undefined ? {} : { timing }),
  });
  writeOutputs(
    planned.map((output, index) => ({
      output,
      data: dumpRequests[index]?.bytes ?? new Uint8Array(),
    })),
  );
  const estimated = gpu === undefined ? undefined : estimateFigures([result], gpu);
  if (parsed.flag('json'))
    io.stdout(
      `${JSON.stringify({ ...simulationFigures(result), ...(estimated === undefined ? {} : { estimate: estimated.json }) }, null, 2)}\n`,
    );
  else {
    for (const finding of result.findings) io.stdout(`${formatFinding(finding)}\n`);
    const line = estimated === undefined ? '' : `${estimated.line}\n`;
    io.stdout(`${describeCounters(result)}\n${line}${result.findings.length} finding(s)\n`);
  }
  return result.findings.length === 0 ? EXIT_OK : EXIT_CHECK_FAILED;
}
