import { resolve } from 'node:path';
import { parseScheduleAssignments } from '@forge/ir';
import { emitPtx, ptxTarget } from '@forge/ptx';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, UsageError } from '../errors.js';
import { writeFileAtomic, type CliIo } from '../io.js';
import { loadSpec } from '../load-spec.js';

export const EMIT_USAGE =
  'forge emit <kernel-id | spec.json> --target ptx --arch <sm_XX> [--schedule key=value]... [--out FILE] [--json]';

export const TARGETS = ['ptx'] as const;

export function checkTarget(target: string | undefined): 'ptx' {
  const chosen = target ?? 'ptx';
  if (chosen !== 'ptx')
    throw new UsageError(`--target: unknown target '${chosen}' (available: ${TARGETS.join(', ')})`);
  return chosen;
}

export function emitCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(
    args,
    {
      target: { type: 'string' },
      arch: { type: 'string' },
      schedule: { type: 'string', multiple: true },
      out: { type: 'string' },
      json: { type: 'boolean' },
    },
    EMIT_USAGE,
  );
  const [subject, ...extra] = parsed.positionals;
  if (subject === undefined || extra.length > 0)
    throw new UsageError(`expected one kernel id or spec file; usage: ${EMIT_USAGE}`);
  checkTarget(parsed.string('target'));
  const target = ptxTarget(parsed.string('arch') ?? 'sm_80');
  const spec = loadSpec(subject, io.cwd);
  const shader = emitPtx(spec, parseScheduleAssignments(parsed.strings('schedule')), target);
  const output = parsed.flag('json') ? `${JSON.stringify(shader, null, 2)}\n` : shader.source;
  const out = parsed.string('out');
  if (out === undefined) io.stdout(output);
  else writeFileAtomic(resolve(io.cwd, out), output);
  return EXIT_OK;
}
