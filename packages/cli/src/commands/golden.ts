import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { parseCommandArgs } from '../args.js';
import { EXIT_CHECK_FAILED, EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { checkGolden, updateGolden } from '../golden/golden.js';

export const GOLDEN_USAGE = 'forge golden check|update [--dir DIR]';

/**
 * The `golden/` directory of the Forge checkout holding the module at `moduleUrl` (by default this
 * CLI, which lives in `packages/cli/dist/commands` there), or undefined when that module is not in
 * a checkout, as for a CLI installed from a registry into `node_modules`.
 */
export function checkoutGoldenDirectory(
  moduleUrl: string | URL = import.meta.url,
): string | undefined {
  const root = fileURLToPath(new URL('../../../../', moduleUrl));
  const cliManifest = join(root, 'packages', 'cli', 'package.json');
  if (!existsSync(join(root, 'pnpm-workspace.yaml')) || !existsSync(cliManifest)) return undefined;
  try {
    const cli = JSON.parse(readFileSync(cliManifest, 'utf8')) as { name?: unknown } | null;
    return cli?.name === '@forge/cli' ? join(root, 'golden') : undefined;
  } catch {
    return undefined;
  }
}

/** The golden directory a command works on: `--dir`, else the checkout's; never inside node_modules by default. */
export function goldenDirectory(dir: string | undefined, cwd: string): string {
  if (dir !== undefined) return resolve(cwd, dir);
  const directory = checkoutGoldenDirectory();
  if (directory === undefined)
    throw new UsageError(
      'no golden directory: this forge is an installed package, not a Forge checkout; pass --dir DIR',
    );
  return directory;
}

export function goldenCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(args, { dir: { type: 'string' } }, GOLDEN_USAGE);
  const [action, ...extra] = parsed.positionals;
  if (extra.length > 0)
    throw new UsageError(`unexpected argument '${extra[0]}'; usage: ${GOLDEN_USAGE}`);
  if (action !== 'check' && action !== 'update')
    throw new UsageError(`expected 'check' or 'update'; usage: ${GOLDEN_USAGE}`);
  const directory = goldenDirectory(parsed.string('dir'), io.cwd);
  if (action === 'check') {
    const { checked, problems } = checkGolden(directory);
    for (const problem of problems) {
      io.stdout(`FAIL golden/${problem.file}: ${problem.message}\n`);
      if (problem.diff !== undefined) io.stdout(`${problem.diff}\n`);
    }
    io.stdout(`golden check: ${checked} entries, ${problems.length} problem(s)\n`);
    return problems.length === 0 ? EXIT_OK : EXIT_CHECK_FAILED;
  }
  const { written, removed, unchanged } = updateGolden(directory);
  for (const file of written) io.stdout(`wrote golden/${file}\n`);
  for (const file of removed) io.stdout(`removed golden/${file}\n`);
  io.stdout(
    `golden update: ${written.length} written, ${removed.length} removed, ${unchanged} unchanged\n`,
  );
  return EXIT_OK;
}
