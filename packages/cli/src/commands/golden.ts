import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { parseCommandArgs } from '../args.js';
import { EXIT_CHECK_FAILED, EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { checkGolden, updateGolden } from '../golden/golden.js';

export const GOLDEN_USAGE = 'forge golden check|update [--dir DIR]';

/** The repository's golden/ directory (this file lives in packages/cli/dist/commands). */
export const DEFAULT_GOLDEN_DIR = fileURLToPath(new URL('../../../../golden', import.meta.url));

export function goldenCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(args, { dir: { type: 'string' } }, GOLDEN_USAGE);
  const [action, ...extra] = parsed.positionals;
  const directory = resolve(io.cwd, parsed.string('dir') ?? DEFAULT_GOLDEN_DIR);
  if (extra.length > 0)
    throw new UsageError(`unexpected argument '${extra[0]}'; usage: ${GOLDEN_USAGE}`);
  if (action === 'check') {
    const { checked, problems } = checkGolden(directory);
    for (const problem of problems) {
      io.stdout(`FAIL golden/${problem.file}: ${problem.message}\n`);
      if (problem.diff !== undefined) io.stdout(`${problem.diff}\n`);
    }
    io.stdout(`golden check: ${checked} entries, ${problems.length} problem(s)\n`);
    return problems.length === 0 ? EXIT_OK : EXIT_CHECK_FAILED;
  }
  if (action === 'update') {
    const { written, removed, unchanged } = updateGolden(directory);
    for (const file of written) io.stdout(`wrote golden/${file}\n`);
    for (const file of removed) io.stdout(`removed golden/${file}\n`);
    io.stdout(
      `golden update: ${written.length} written, ${removed.length} removed, ${unchanged} unchanged\n`,
    );
    return EXIT_OK;
  }
  throw new UsageError(`expected 'check' or 'update'; usage: ${GOLDEN_USAGE}`);
}
