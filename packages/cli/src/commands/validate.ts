import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { assemblePtx, ptxTargetArch } from '@forge/ptx/ptxas';
import { parseCommandArgs } from '../args.js';
import { EXIT_CHECK_FAILED, EXIT_OK, InputError } from '../errors.js';
import type { CliIo } from '../io.js';
import { readManifest } from '../golden/golden.js';
import { DEFAULT_GOLDEN_DIR } from './golden.js';
import { checkTarget } from './emit.js';

export const VALIDATE_USAGE = 'forge validate [--target ptx] [FILE...]';

/** Runs ptxas on each file (or every golden entry) and prints its verdict and resource line. */
export function validateCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(
    args,
    { target: { type: 'string' }, dir: { type: 'string' } },
    VALIDATE_USAGE,
  );
  checkTarget(parsed.string('target'));
  let files = parsed.positionals.map((file) => ({ name: file, path: resolve(io.cwd, file) }));
  if (files.length === 0) {
    const directory = resolve(io.cwd, parsed.string('dir') ?? DEFAULT_GOLDEN_DIR);
    const manifest = readManifest(directory);
    if (manifest === undefined)
      throw new InputError(`no golden manifest in ${directory}; run \`pnpm forge golden update\``);
    files = manifest.entries
      .filter((entry) => entry.target.kind === 'ptx')
      .map((entry) => ({ name: `golden/${entry.file}`, path: join(directory, entry.file) }));
  }
  const sources = files.map((file) => {
    try {
      return readFileSync(file.path, 'utf8');
    } catch (error) {
      throw new InputError(
        `cannot read ${file.name}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  });
  let failures = 0;
  files.forEach(({ name }, index) => {
    const source = sources[index] ?? '';
    const arch = ptxTargetArch(source);
    if (arch === undefined) {
      failures++;
      io.stdout(`FAIL ${name}: no .target directive\n`);
      return;
    }
    const result = assemblePtx(source, arch);
    const spills = result.spillStores + result.spillLoads;
    const ok = result.ok && spills === 0;
    if (!ok) failures++;
    const spillText = `${result.spillStores} bytes spill stores, ${result.spillLoads} bytes spill loads`;
    io.stdout(
      `${ok ? 'PASS' : 'FAIL'} ${name} [${arch}] ${result.ok ? `${result.resources}; ${spillText}` : 'ptxas rejected it'}\n`,
    );
    if (result.diagnostics !== '') io.stdout(`${result.diagnostics.replace(/^/gm, '  ')}\n`);
  });
  io.stdout(`validate: ${files.length - failures} passed, ${failures} failed\n`);
  return failures === 0 ? EXIT_OK : EXIT_CHECK_FAILED;
}
