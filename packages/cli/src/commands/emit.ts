import { parseScheduleAssignments } from '@forge/ir';
import { printPtxIr, ptxTarget } from '@forge/ptx';
import { parseWgslFeatures } from '@forge/wgsl';
import { parseCommandArgs, type ParsedArgs } from '../args.js';
import { EMITTERS, emitFor } from '../emitters.js';
import { EXIT_OK, UsageError } from '../errors.js';
import type { GoldenTarget } from '../golden/entries.js';
import type { CliIo } from '../io.js';
import { loadSpec } from '../load-spec.js';
import { planOutputs, writeOutputs, type PlannedOutput } from '../output.js';

export const EMIT_USAGE =
  'forge emit <kernel-id | spec.json> --target ptx|wgsl [--arch sm_XX] [--features f16,subgroups] [--schedule key=value]... [--out FILE] [--json] [--ir-out FILE.forge]';

/** A target kind the CLI can emit to: one per backend in EMITTERS. */
export type TargetKindName = keyof typeof EMITTERS;
/** The backends' target kinds, which `--target` accepts. */
export const TARGETS = Object.keys(EMITTERS) as readonly TargetKindName[];

export function checkTarget(
  target: string | undefined,
  allowed: readonly string[] = TARGETS,
): TargetKindName {
  const chosen = target ?? 'ptx';
  if (!allowed.includes(chosen))
    throw new UsageError(`--target: unknown target '${chosen}' (available: ${allowed.join(', ')})`);
  return chosen as TargetKindName;
}

/** The target from --target, --arch (ptx, default sm_80) and --features (wgsl, default none). */
export function targetFromArgs(
  parsed: ParsedArgs,
  kind: TargetKindName = checkTarget(parsed.string('target')),
): GoldenTarget {
  const arch = parsed.string('arch');
  const features = parsed.string('features');
  if (kind === 'ptx') {
    if (features !== undefined) throw new UsageError('--features applies to --target wgsl only');
    return { kind, arch: ptxTarget(arch ?? 'sm_80').arch };
  }
  if (arch !== undefined) throw new UsageError('--arch applies to --target ptx only');
  return { kind, features: parseWgslFeatures(features ?? '').features };
}

export const TARGET_OPTIONS = {
  target: { type: 'string' },
  arch: { type: 'string' },
  features: { type: 'string' },
  schedule: { type: 'string', multiple: true },
} as const;

export function emitCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(
    args,
    {
      ...TARGET_OPTIONS,
      out: { type: 'string' },
      json: { type: 'boolean' },
      'ir-out': { type: 'string' },
    },
    EMIT_USAGE,
  );
  const [subject, ...extra] = parsed.positionals;
  if (subject === undefined || extra.length > 0)
    throw new UsageError(`expected one kernel id or spec file; usage: ${EMIT_USAGE}`);
  const target = targetFromArgs(parsed);
  const outPath = parsed.string('out');
  const irPath = parsed.string('ir-out');
  if (irPath !== undefined && target.kind !== 'ptx')
    throw new UsageError('--ir-out applies to --target ptx only');
  const [out, irOut] = planEmitOutputs(outPath, irPath, io.cwd);
  const spec = loadSpec(subject, io.cwd);
  const schedule = parseScheduleAssignments(parsed.strings('schedule'));
  const shader = emitFor(spec, schedule, target);
  const output = parsed.flag('json') ? `${JSON.stringify(shader, null, 2)}\n` : shader.source;
  // The printed IR the PTX's `.loc` lines count in, for ptxas -lineinfo, nvdisasm and ncu.
  const printedIr =
    irOut === undefined || target.kind !== 'ptx'
      ? []
      : [{ output: irOut, data: printPtxIr(spec, schedule, ptxTarget(target.arch)).text }];
  if (out === undefined) {
    writeOutputs(printedIr);
    io.stdout(output);
  } else writeOutputs([{ output: out, data: output }, ...printedIr]);
  return EXIT_OK;
}

/** The files `--out` and `--ir-out` name, checked before any work (undefined where not given). */
function planEmitOutputs(
  outPath: string | undefined,
  irPath: string | undefined,
  cwd: string,
): [PlannedOutput | undefined, PlannedOutput | undefined] {
  const requests = [
    ...(outPath === undefined ? [] : [{ option: '--out', given: outPath }]),
    ...(irPath === undefined ? [] : [{ option: '--ir-out', given: irPath }]),
  ];
  const planned = planOutputs(requests, cwd);
  const find = (option: string) => planned.find((output) => output.option === option);
  return [find('--out'), find('--ir-out')];
}
