import { semanticHash, validateSpec } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { readSpecFile } from '../load-spec.js';

export const SPEC_USAGE = 'forge spec <kernel-id>';
export const HASH_USAGE = 'forge hash <spec.json>';

/** Prints a catalog kernel's KernelSpec as JSON: the starting point for a user's own kernel. */
export function specCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(args, {}, SPEC_USAGE);
  const [id, ...extra] = parsed.positionals;
  if (id === undefined || extra.length > 0)
    throw new UsageError(`expected one kernel id; usage: ${SPEC_USAGE}`);
  io.stdout(`${JSON.stringify(validateSpec(getKernel(id).spec), null, 2)}\n`);
  return EXIT_OK;
}

export function hashCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(args, {}, HASH_USAGE);
  const [path, ...extra] = parsed.positionals;
  if (path === undefined || extra.length > 0)
    throw new UsageError(`expected one spec file; usage: ${HASH_USAGE}`);
  io.stdout(`${semanticHash(readSpecFile(path, io.cwd))}\n`);
  return EXIT_OK;
}
