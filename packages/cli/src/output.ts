import {
  accessSync,
  constants,
  lstatSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { exists, isDirectory } from './directories.js';
import { InputError, UsageError, errnoCode } from './errors.js';
import { fileKind } from './input-file.js';

/** A file a command will write, checked before any work is done. */
export interface PlannedOutput {
  /** The option that named it (`--out`, `--output y`), for messages. */
  readonly option: string;
  /** The path as the user wrote it, for messages. */
  readonly given: string;
  /** Where the file is written: the path with every symbolic link resolved. */
  readonly path: string;
  /** Whether `given` is a symbolic link (to `path`). */
  readonly throughLink?: boolean;
}

/** What is at `path` itself (a link is not followed), or undefined when nothing is. */
function nodeAt(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** The one line refusing to replace something that is not a regular file. */
function notRegular(output: PlannedOutput, stats: Stats): InputError {
  const link = output.throughLink === true ? ` (a link to ${output.path})` : '';
  return new InputError(
    `${output.option}: ${output.given}${link} is not a regular file (${fileKind(stats)}); forge writes only regular files`,
  );
}

/**
 * Checks that `given` (relative to cwd) can be written, and resolves where: a symbolic link is
 * followed, so the file it names is replaced and the link stays. Refused, with an InputError
 * naming the option: a missing or unwritable directory, a directory, a link to nothing, and
 * anything already there that is not a regular file (a FIFO, a device such as /dev/null): forge
 * writes each output to a temporary file beside it and renames that into place, which would
 * replace the node itself, so such a node is left as it is.
 */
export function planOutput(option: string, given: string, cwd: string): PlannedOutput {
  if (given === '') throw new UsageError(`${option}: the path is empty`);
  const absolute = resolve(cwd, given);
  const fail = (why: string): never => {
    throw new InputError(`${option}: cannot write ${given}: ${why}`);
  };
  const directory = dirname(absolute);
  if (!exists(directory)) fail(`directory ${directory} does not exist`);
  else if (!isDirectory(directory)) fail(`${directory} is not a directory`);
  if (isDirectory(absolute)) fail('it is a directory');
  let here: Stats | undefined;
  let path = absolute;
  try {
    here = nodeAt(absolute);
    // A link to nothing is refused: a new file is not made where a link points.
    path =
      here === undefined
        ? join(realpathSync(directory), basename(absolute))
        : realpathSync(absolute);
  } catch (error) {
    fail(
      errnoCode(error) === 'ENOENT' ? 'it is a symbolic link to a missing file' : errnoCode(error),
    );
  }
  const output = {
    option,
    given,
    path,
    ...(here?.isSymbolicLink() === true ? { throughLink: true } : {}),
  };
  const stats = nodeAt(path);
  if (stats !== undefined && !stats.isFile()) throw notRegular(output, stats);
  try {
    accessSync(dirname(path), constants.W_OK);
  } catch (error) {
    fail(`directory ${dirname(path)} is not writable (${errnoCode(error)})`);
  }
  return output;
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

/** Refuses, just before a rename, a target that stopped being a regular file since it was planned. */
function checkStillRegular(output: PlannedOutput): void {
  const stats = nodeAt(output.path);
  if (stats !== undefined && !stats.isFile()) throw notRegular(output, stats);
}

/**
 * Writes every output or none: each goes to a hidden temporary file beside its target, then all
 * are renamed into place. Each target is checked again right before the renames (and each just
 * before its own): one that became something else than a regular file since planOutput is refused
 * and left as it is. A failure removes the temporaries and throws an InputError.
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
    for (const { output } of staged) {
      current.output = output;
      checkStillRegular(output);
    }
    for (const { output, temporary } of staged) {
      current.output = output;
      checkStillRegular(output);
      renameSync(temporary, output.path);
    }
  } catch (error) {
    for (const { temporary } of staged) removeQuietly(temporary);
    const output = current.output;
    if (output === undefined || error instanceof InputError) throw error;
    throw new InputError(`${output.option}: cannot write ${output.given}: ${errnoCode(error)}`);
  }
}
