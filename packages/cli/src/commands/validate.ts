import { join } from 'node:path';
import { assemblePtx, ptxTargetArch } from '@forge/ptx/ptxas';
import { parseCommandArgs } from '../args.js';
import { EXIT_CHECK_FAILED, EXIT_OK, InputError, UsageError } from '../errors.js';
import { escapeControl } from '../error-line.js';
import { readInputText } from '../input-file.js';
import type { CliIo } from '../io.js';
import { CLI_LIMITS, formatBytes } from '../limits.js';
import { readManifest } from '../golden/golden.js';
import { goldenDirectory } from './golden.js';
import { checkTarget, type TargetKindName } from './emit.js';

export const VALIDATE_USAGE = 'forge validate [--target ptx|wgsl] [FILE...]';

/**
 * The target to validate for: --target, else WGSL when every file named ends in `.wgsl`, else PTX.
 * Files that mix `.wgsl` with others need --target (a run checks one language).
 */
export function validateTargetKind(
  target: string | undefined,
  files: readonly string[],
): TargetKindName {
  if (target !== undefined || files.length === 0) return checkTarget(target);
  const wgsl = files.filter((file) => file.endsWith('.wgsl')).length;
  if (wgsl === 0) return 'ptx';
  if (wgsl === files.length) return 'wgsl';
  throw new UsageError(
    '--target: the files mix .wgsl and other files; validate each language in its own run, or give --target ptx|wgsl',
  );
}

interface Verdict {
  readonly ok: boolean;
  /** The verdict line after the file name. */
  readonly summary: string;
  /** Diagnostics, one per line. */
  readonly details: readonly string[];
}

type Validator = (files: readonly { name: string; source: string }[]) => Promise<Verdict[]>;

/** ptxas for PTX (resource line, zero spills required); Tint through Dawn for WGSL. */
const VALIDATORS: Readonly<Record<TargetKindName, Validator>> = {
  ptx: async (files) =>
    files.map(({ source }) => {
      const arch = ptxTargetArch(source);
      if (arch === undefined) return { ok: false, summary: 'no .target directive', details: [] };
      const result = assemblePtx(source, arch);
      const spills = `${result.spillStores} bytes spill stores, ${result.spillLoads} bytes spill loads`;
      const ok = result.ok && result.spillStores + result.spillLoads === 0;
      const details = result.diagnostics === '' ? [] : result.diagnostics.split('\n');
      return {
        ok,
        summary: `[${arch}] ${result.ok ? `${result.resources}; ${spills}` : 'ptxas rejected it'}`,
        details,
      };
    }),
  wgsl: async (files) => {
    // Loaded on demand: only WGSL validation starts Dawn.
    const { openWebGpu, wgslDiagnostics, formatWgslDiagnostic } =
      await import('@forge/wgsl/runner');
    // Ask the device only for the features the sources enable, so plain WGSL validates anywhere.
    const enabled = (feature: string): boolean =>
      files.some(({ source }) => new RegExp(`^\\s*enable\\s+${feature}\\s*;`, 'm').test(source));
    const context = await openWebGpu({
      features: [
        ...(enabled('f16') ? ['shader-f16'] : []),
        ...(enabled('subgroups') ? ['subgroups'] : []),
      ],
    });
    try {
      const verdicts: Verdict[] = [];
      for (const { name, source } of files) {
        const diagnostics = await wgslDiagnostics(context, source);
        const errors = diagnostics.filter((diagnostic) => diagnostic.type === 'error');
        verdicts.push({
          ok: errors.length === 0,
          summary: `[tint] ${errors.length} error(s), ${diagnostics.length - errors.length} warning(s)`,
          details: diagnostics.map((diagnostic) => `${name}:${formatWgslDiagnostic(diagnostic)}`),
        });
      }
      return verdicts;
    } finally {
      context.destroy();
    }
  },
};

/** Runs the vendor compiler on each file (or every golden entry of the target) and prints its verdict. */
export async function validateCommand(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs(
    args,
    { target: { type: 'string' }, dir: { type: 'string' } },
    VALIDATE_USAGE,
  );
  const kind = validateTargetKind(parsed.string('target'), parsed.positionals);
  // Names are echoed in the report: control characters in them are shown escaped.
  let files = parsed.positionals.map((file) => ({ name: escapeControl(file), path: file }));
  if (files.length === 0) {
    const directory = goldenDirectory(parsed.string('dir'), io.cwd);
    const manifest = readManifest(directory);
    if (manifest === undefined)
      throw new InputError(`no golden manifest in ${directory}; run \`pnpm forge golden update\``);
    files = manifest.entries
      .filter((entry) => entry.target.kind === kind)
      .map((entry) => ({ name: `golden/${entry.file}`, path: join(directory, entry.file) }));
  }
  // Regular files only, each read up to the limit and one byte more.
  const sources = files.map(({ name, path }) => ({
    name,
    source: readInputText(undefined, path, io.cwd, {
      maxBytes: CLI_LIMITS.sourceBytes,
      rule: `a source file may have at most ${formatBytes(CLI_LIMITS.sourceBytes)}`,
      name,
    }),
  }));
  const verdicts = await VALIDATORS[kind](sources);
  verdicts.forEach((verdict, index) => {
    io.stdout(`${verdict.ok ? 'PASS' : 'FAIL'} ${sources[index]?.name} ${verdict.summary}\n`);
    for (const line of verdict.details) io.stdout(`  ${line}\n`);
  });
  const failures = verdicts.filter((verdict) => !verdict.ok).length;
  io.stdout(`validate: ${verdicts.length - failures} passed, ${failures} failed\n`);
  return failures === 0 ? EXIT_OK : EXIT_CHECK_FAILED;
}
