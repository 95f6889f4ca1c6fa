import { IR_PACKAGE, ready } from '@forge/ir';
import { LLAMA_PACKAGE } from '@forge/llama';
import { PTX_SIM_PACKAGE } from '@forge/ptx-sim';
import { PTX_PACKAGE } from '@forge/ptx';
import { WGSL_PACKAGE } from '@forge/wgsl';
import { BUILD_INFO } from './build-info.js';
import { DECODE_USAGE, decodeCommand } from './commands/decode.js';
import { EMIT_USAGE, emitCommand } from './commands/emit.js';
import { GOLDEN_USAGE, goldenCommand } from './commands/golden.js';
import { LIST_USAGE, listCommand } from './commands/list.js';
import { QUANT_USAGE, quantCommand } from './commands/quant.js';
import { HASH_USAGE, SPEC_USAGE, hashCommand, specCommand } from './commands/spec.js';
import { RUN_USAGE, runCommand } from './commands/run.js';
import { SIM_USAGE, simCommand } from './commands/sim.js';
import { VALIDATE_USAGE, validateCommand } from './commands/validate.js';
import { describeFailure, oneLine } from './error-line.js';
import { EXIT_BAD_INPUT, EXIT_OK } from './errors.js';
import type { CliIo } from './io.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

const COMMANDS: Readonly<Record<string, { run: Command; usage: string }>> = {
  list: { run: listCommand, usage: LIST_USAGE },
  emit: { run: emitCommand, usage: EMIT_USAGE },
  golden: { run: goldenCommand, usage: GOLDEN_USAGE },
  validate: { run: validateCommand, usage: VALIDATE_USAGE },
  run: { run: runCommand, usage: RUN_USAGE },
  sim: { run: simCommand, usage: SIM_USAGE },
  decode: { run: decodeCommand, usage: DECODE_USAGE },
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

/**
 * Runs one command line. Every failure that is the user's or the machine's doing prints one line,
 * `forge <command>: <message>` with control characters escaped, and returns 2 (bad input) or 1 (a
 * check failed, a tool or adapter is missing, a run hit --max-steps); only a bug keeps its stack.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(HELP);
    return name === undefined ? EXIT_BAD_INPUT : EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    if (args.length > 0) {
      io.stderr(`forge: unexpected argument '${oneLine(args[0] ?? '')}' after ${name}\n`);
      return EXIT_BAD_INPUT;
    }
    // Each backend's version is part of its cache keys, so all of them are shown.
    for (const info of [
      BUILD_INFO,
      IR_PACKAGE,
      PTX_PACKAGE,
      WGSL_PACKAGE,
      PTX_SIM_PACKAGE,
      LLAMA_PACKAGE,
    ])
      io.stdout(`${info.name} ${info.version}\n`);
    return EXIT_OK;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.stderr(
      `forge: unknown command '${oneLine(name)}' (known: ${Object.keys(COMMANDS).join(', ')})\n`,
    );
    return EXIT_BAD_INPUT;
  }
  // `forge <command> --help` anywhere on the line: the command's usage, not an unknown option.
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(`usage: ${command.usage}\n`);
    return EXIT_OK;
  }
  try {
    await ready();
    return await command.run(args, io);
  } catch (error) {
    const failure = describeFailure(error);
    if (failure === undefined) throw error;
    io.stderr(`forge ${name}: ${oneLine(failure.message)}\n`);
    return failure.code;
  }
}
