import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  dramBytesRead,
  formatFinding,
  parsePtx,
  sectorEfficiency,
  simulate,
  totalWarpInstructions,
  type KernelArgument,
  type SimulationResult,
} from '@forge/ptx-sim';
import { parseCommandArgs } from '../args.js';
import { EXIT_CHECK_FAILED, EXIT_OK, InputError, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';

export const SIM_USAGE =
  'forge sim FILE.ptx [--entry NAME] --grid X[,Y,Z] --block X[,Y,Z] [--arg NAME=SPEC]... [--dump NAME=FILE]... [--json]  (SPEC: @FILE, zeros:BYTES, u32:V, i32:V, u64:V, f32:V, pack:T:V,T:V,...)';

function dims(text: string | undefined, option: string): [number, number, number] {
  if (text === undefined) throw new UsageError(`${option} is required; usage: ${SIM_USAGE}`);
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > 3 || parts.some((part) => !/^\d{1,7}$/.test(part) || Number(part) < 1)) {
    throw new UsageError(`${option}: '${text}' is not 1 to 3 positive integers X[,Y,Z]`);
  }
  const [x = 1, y = 1, z = 1] = parts.map(Number);
  return [x, y, z];
}

const PACK_TYPES: Readonly<
  Record<string, { bytes: number; write: (view: DataView, offset: number, value: string) => void }>
> = {
  u8: { bytes: 1, write: (view, offset, value) => view.setUint8(offset, Number(value)) },
  u16: { bytes: 2, write: (view, offset, value) => view.setUint16(offset, Number(value), true) },
  u32: { bytes: 4, write: (view, offset, value) => view.setUint32(offset, Number(value), true) },
  i32: { bytes: 4, write: (view, offset, value) => view.setInt32(offset, Number(value), true) },
  u64: { bytes: 8, write: (view, offset, value) => view.setBigUint64(offset, BigInt(value), true) },
  f32: { bytes: 4, write: (view, offset, value) => view.setFloat32(offset, Number(value), true) },
};

/** Parses one --arg SPEC into what the simulator passes for that parameter. */
function argument(name: string, spec: string, cwd: string): KernelArgument {
  const bad = (why: string): never => {
    throw new UsageError(
      `--arg ${name}: ${why} (SPEC is @FILE, zeros:BYTES, u32:V, i32:V, u64:V, f32:V or pack:T:V,...)`,
    );
  };
  if (spec.startsWith('@')) {
    try {
      return { kind: 'buffer', bytes: new Uint8Array(readFileSync(resolve(cwd, spec.slice(1)))) };
    } catch (error) {
      throw new InputError(
        `--arg ${name}: cannot read ${spec.slice(1)}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  const [kind, ...rest] = spec.split(':');
  const value = rest.join(':');
  switch (kind) {
    case 'zeros':
      return /^\d{1,10}$/.test(value)
        ? { kind: 'buffer', bytes: new Uint8Array(Number(value)) }
        : bad(`'${value}' is not a byte count`);
    case 'u32':
    case 'i32':
    case 'u64':
      return /^-?\d+$/.test(value)
        ? { kind: 'scalar', value: BigInt(value) }
        : bad(`'${value}' is not an integer`);
    case 'f32':
      return Number.isFinite(Number(value)) && value !== ''
        ? { kind: 'scalar', value: Number(value) }
        : bad(`'${value}' is not a number`);
    case 'pack': {
      const items = value.split(',').map((item) => item.split(':'));
      const size = items.reduce(
        (total, [type]) =>
          total + (PACK_TYPES[type ?? '']?.bytes ?? bad(`unknown pack type '${type}'`)),
        0,
      );
      const bytes = new Uint8Array(size);
      const view = new DataView(bytes.buffer);
      let offset = 0;
      for (const [type = '', text = ''] of items) {
        const packer = PACK_TYPES[type] as (typeof PACK_TYPES)[string];
        if (!/^-?[\d.e+-]+$/.test(text)) bad(`'${text}' is not a number`);
        packer.write(view, offset, text);
        offset += packer.bytes;
      }
      return { kind: 'bytes', bytes };
    }
    default:
      return bad(`unknown kind '${kind}'`);
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
  return [
    `warp instructions ${figures['warpInstructions']} (${families})`,
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
      json: { type: 'boolean' },
    },
    SIM_USAGE,
  );
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0)
    throw new UsageError(`expected one PTX file; usage: ${SIM_USAGE}`);
  let text: string;
  try {
    text = readFileSync(resolve(io.cwd, file), 'utf8');
  } catch (error) {
    throw new InputError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  const grid = dims(parsed.string('grid'), '--grid');
  const block = dims(parsed.string('block'), '--block');
  const kernelArgs: Record<string, KernelArgument> = {};
  for (const assignment of parsed.strings('arg')) {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(assignment);
    if (match === null || match[1] === undefined || match[2] === undefined)
      throw new UsageError(`--arg: '${assignment}' is not NAME=SPEC`);
    kernelArgs[match[1]] = argument(match[1], match[2], io.cwd);
  }
  const dumps = parsed.strings('dump').map((assignment) => {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(assignment);
    if (match === null || match[1] === undefined || match[2] === undefined)
      throw new UsageError(`--dump: '${assignment}' is not NAME=FILE`);
    const target = kernelArgs[match[1]];
    if (target?.kind !== 'buffer')
      throw new UsageError(`--dump: '${match[1]}' is not a buffer argument`);
    return { bytes: target.bytes, path: resolve(io.cwd, match[2]) };
  });
  const module = parsePtx(text);
  const entry = parsed.string('entry');
  const result = simulate(module, {
    ...(entry === undefined ? {} : { entry }),
    grid,
    block,
    args: kernelArgs,
  });
  for (const { bytes, path } of dumps) writeFileSync(path, bytes);
  if (parsed.flag('json')) io.stdout(`${JSON.stringify(simulationFigures(result), null, 2)}\n`);
  else {
    for (const finding of result.findings) io.stdout(`${formatFinding(finding)}\n`);
    io.stdout(`${describeCounters(result)}\n${result.findings.length} finding(s)\n`);
  }
  return result.findings.length === 0 ? EXIT_OK : EXIT_CHECK_FAILED;
}
