import { accessSync, constants, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { exists, isDirectory } from './directories.js';
import { InputError, UsageError, errnoCode } from './errors.js';

/** A file a command will write, checked before any work is done. */
export interface PlannedOutput {
  /** The option that named it (`--out`, `--output y`), for messages. */
  readonly option: string;
  /** The path as the user wrote it, for messages. */
  readonly given: string;
  readonly path: string;
}

/**
 * Checks that `given` (relative to cwd) can be written: its directory exists and is writable, and
 * the path is not a directory. Throws an InputError naming the option otherwise.
 */
export function planOutput(option: string, given: string, cwd: string): PlannedOutput {
  if (given === '') throw new UsageError(`${option}: the path is empty`);
  const path = resolve(cwd, given);
  const directory = dirname(path);
  const fail = (why: string): never => {
    throw new InputError(`${option}: cannot write ${given}: ${why}`);
  };
  if (!exists(directory)) fail(`directory ${directory} does not exist`);
  else if (!isDirectory(directory)) fail(`${directory} is not a directory`);
  if (isDirectory(path)) fail('it is a directory');
  try {
    accessSync(directory, constants.W_OK);
  } catch (error) {
    fail(`directory ${directory} is not writable (${errnoCode(error)})`);
  }
  return { option, given, path };
}

/** Plans several outputs; two options naming the same file is a usage error. */
export function planOutputs(
  requests: readonly { option: string; given: string }[],
  cwd: string,
): PlannedOutput[] {
  const planned: PlannedOutput[] = [];
  for (const { option, given } of requests) {
    const output = planOutput(option, given, cwd);
    const clash = planned.find((other) => other.path === output.path);
    if (clash !== undefined)
      throw new UsageError(`${option}: ${given} is already written by ${clash.option}`);
    planned.push(output);
  }
  return planned;
}

/** Best-effort cleanup: the error being reported is the one that matters. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Nothing was created there (its directory is gone or was never one).
  }
}

let counter = 0;

/** A hidden sibling of `path`, unique to this process and call. */
function temporaryPath(path: string): string {
  counter += 1;
  return join(dirname(path), `.${basename(path)}.forge-${process.pid}-${counter}.tmp`);
}

/**
 * Writes every output or none: each goes to a hidden temporary file beside its target, then all
 * are renamed into place. A failure removes the temporaries and throws an InputError.
 */
export function writeOutputs(
  outputs: readonly { output: PlannedOutput; data: string | Uint8Array }[],
): void {
  const staged: { output: PlannedOutput; temporary: string }[] = [];
  const current = { output: outputs[0]?.output };
  try {
    for (const { output, data } of outputs) {
      current.output = output;
      const temporary = temporaryPath(output.path);
      staged.push({ output, temporary });
      writeFileSync(temporary, data, { flag: 'wx' });
    }
    for (const { output, temporary } of staged) {
      current.output = output;
      renameSync(temporary, output.path);
    }
  } catch (error) {
    for (const { temporary } of staged) removeQuietly(temporary);
    const output = current.output;
    if (output === undefined) throw error;
    throw new InputError(`${output.option}: cannot write ${output.given}: ${errnoCode(error)}`);
  }
}
