import { parseScheduleAssignments } from '@forge/ir';
import { ptxTarget } from '@forge/ptx';
import { parseWgslFeatures } from '@forge/wgsl';
import { parseCommandArgs, type ParsedArgs } from '../args.js';
import { EMITTERS, emitFor } from '../emitters.js';
import { EXIT_OK, UsageError } from '../errors.js';
import type { GoldenTarget } from '../golden/entries.js';
import type { CliIo } from '../io.js';
import { loadSpec } from '../load-spec.js';
import { planOutput, writeOutputs } from '../output.js';

export const EMIT_USAGE =
  'forge emit <kernel-id | spec.json> --target ptx|wgsl [--arch sm_XX] [--features f16,subgroups] [--schedule key=value]... [--out FILE] [--json]';

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
    { ...TARGET_OPTIONS, out: { type: 'string' }, json: { type: 'boolean' } },
    EMIT_USAGE,
  );
  const [subject, ...extra] = parsed.positionals;
  if (subject === undefined || extra.length > 0)
    throw new UsageError(`expected one kernel id or spec file; usage: ${EMIT_USAGE}`);
  const target = targetFromArgs(parsed);
  const outPath = parsed.string('out');
  const out = outPath === undefined ? undefined : planOutput('--out', outPath, io.cwd);
  const spec = loadSpec(subject, io.cwd);
  const shader = emitFor(spec, parseScheduleAssignments(parsed.strings('schedule')), target);
  const output = parsed.flag('json') ? `${JSON.stringify(shader, null, 2)}\n` : shader.source;
  if (out === undefined) io.stdout(output);
  else writeOutputs([{ output: out, data: output }]);
  return EXIT_OK;
}
