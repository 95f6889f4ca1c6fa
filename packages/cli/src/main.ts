import { ForgeError, IR_PACKAGE, ValidationError, formatIssue, ready } from '@forge/ir';
import { PTX_SIM_PACKAGE, PtxSyntaxError, SimulationInputError } from '@forge/ptx-sim';
import { PTX_PACKAGE } from '@forge/ptx';
import { WGSL_PACKAGE } from '@forge/wgsl';
import { BUILD_INFO } from './build-info.js';
import { PtxasMissingError } from '@forge/ptx/ptxas';
import { EMIT_USAGE, emitCommand } from './commands/emit.js';
import { GOLDEN_USAGE, goldenCommand } from './commands/golden.js';
import { LIST_USAGE, listCommand } from './commands/list.js';
import { QUANT_USAGE, quantCommand } from './commands/quant.js';
import { HASH_USAGE, SPEC_USAGE, hashCommand, specCommand } from './commands/spec.js';
import { RUN_USAGE, runCommand } from './commands/run.js';
import { SIM_USAGE, simCommand } from './commands/sim.js';
import { VALIDATE_USAGE, validateCommand } from './commands/validate.js';
import { EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK } from './errors.js';
import type { CliIo } from './io.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

const COMMANDS: Readonly<Record<string, { run: Command; usage: string }>> = {
  list: { run: listCommand, usage: LIST_USAGE },
  emit: { run: emitCommand, usage: EMIT_USAGE },
  golden: { run: goldenCommand, usage: GOLDEN_USAGE },
  validate: { run: validateCommand, usage: VALIDATE_USAGE },
  run: { run: runCommand, usage: RUN_USAGE },
  sim: { run: simCommand, usage: SIM_USAGE },
  hash: { run: hashCommand, usage: HASH_USAGE },
  spec: { run: specCommand, usage: SPEC_USAGE },
  quant: { run: quantCommand, usage: QUANT_USAGE },
};

const HELP = [
  'forge — GPU kernels for LLM inference from one typed IR',
  '',
  '  forge --version',
  ...Object.values(COMMANDS).map((command) => `  ${command.usage}`),
  '',
  'Exit codes: 0 ok, 1 a check failed, 2 bad input.',
  '',
].join('\n');

/** Runs one command line; user mistakes print one line and return 2, never a stack trace. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(HELP);
    return name === undefined ? EXIT_BAD_INPUT : EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    if (args.length > 0) {
      io.stderr(`forge: unexpected argument '${args[0]}' after ${name}\n`);
      return EXIT_BAD_INPUT;
    }
    // Each backend's version is part of its cache keys, so all of them are shown.
    for (const info of [BUILD_INFO, IR_PACKAGE, PTX_PACKAGE, WGSL_PACKAGE, PTX_SIM_PACKAGE])
      io.stdout(`${info.name} ${info.version}\n`);
    return EXIT_OK;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.stderr(`forge: unknown command '${name}' (known: ${Object.keys(COMMANDS).join(', ')})\n`);
    return EXIT_BAD_INPUT;
  }
  try {
    await ready();
    return await command.run(args, io);
  } catch (error) {
    // A missing tool or GPU adapter is the machine's problem, not the input's: exit 1 with the fix.
    if (
      error instanceof PtxasMissingError ||
      (error instanceof Error && error.name === 'WebGpuUnavailableError')
    ) {
      io.stderr(`forge: ${error.message}\n`);
      return EXIT_CHECK_FAILED;
    }
    if (error instanceof ValidationError) {
      const more =
        error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem(s))` : '';
      io.stderr(
        `forge: invalid input: ${formatIssue(error.issues[0] ?? { path: '', message: 'invalid' })}${more}\n`,
      );
      return EXIT_BAD_INPUT;
    }
    // The simulator depends on no other Forge package, so its input errors are not ForgeErrors.
    if (
      error instanceof ForgeError ||
      error instanceof PtxSyntaxError ||
      error instanceof SimulationInputError
    ) {
      io.stderr(`forge: ${error.message.split('\n')[0]}\n`);
      return EXIT_BAD_INPUT;
    }
    throw error;
  }
}
