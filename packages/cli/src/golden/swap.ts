import { linkSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError, UsageError, errnoCode } from '../errors.js';
import { exists, isDirectory, makeDirectories } from '../directories.js';

/**
 * How `golden update` replaces a golden directory D as a whole (P is D's parent, B its name):
 *
 * 1. stage: write the complete new tree into `P/.B.staging-<pid>`;
 * 2. commit: rename the staging directory to `P/.B.new` (now it is complete);
 * 3. swap: rename D to `P/.B.old`, then `P/.B.new` to D;
 * 4. clean: remove `P/.B.old`.
 *
 * Every step is a rename or happens beside D, so D holds the complete old tree until step 3 and
 * the complete new one after it. A kill between the two renames of step 3 leaves no D but a
 * complete `.B.new`: `recoverGoldenDirectory` (run by check and update) renames it into place.
 * Leftovers are hidden siblings of D, never inside it: check ignores them, update removes them.
 */
export interface SwapPaths {
  readonly directory: string;
  readonly ready: string;
  readonly retired: string;
  /** The staging directory of process `pid`. */
  readonly staging: (pid: number) => string;
  /** Matches staging directory names, capturing the pid. */
  readonly stagingName: RegExp;
}

export function swapPaths(directory: string): SwapPaths {
  const parent = dirname(directory);
  const name = basename(directory);
  if (name === '' || parent === directory)
    throw new UsageError(`--dir: ${directory} cannot be replaced (it has no parent directory)`);
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    directory,
    ready: join(parent, `.${name}.new`),
    retired: join(parent, `.${name}.old`),
    staging: (pid) => join(parent, `.${name}.staging-${pid}`),
    stagingName: new RegExp(`^\\.${escaped}\\.staging-(\\d+)$`),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}

function rename(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    // A check running meanwhile may have finished this very swap (recoverGoldenDirectory).
    if (errnoCode(error) === 'ENOENT' && !exists(from) && isDirectory(to)) return;
    throw new InputError(`--dir: cannot rename ${from} to ${to}: ${errnoCode(error)}`);
  }
}

function remove(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch (error) {
    throw new InputError(`--dir: cannot remove ${path}: ${errnoCode(error)}`);
  }
}

function link(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch {
    return false;
  }
}

/** Refuses a golden directory path that is there but is not a directory. */
export function checkGoldenDirectoryPath(directory: string): void {
  if (exists(directory) && !isDirectory(directory))
    throw new InputError(`--dir: ${directory} is not a directory`);
}

/**
 * Finishes a swap a killed update had committed to (no D, a complete `.B.new`), so check and
 * update see the new tree. With `clean`, also removes what a killed update left beside D: the
 * retired tree, an uncommitted `.B.new` and staging directories of processes no longer running.
 */
export function recoverGoldenDirectory(directory: string, clean: boolean): void {
  const paths = swapPaths(directory);
  if (!exists(directory)) {
    if (isDirectory(paths.ready)) rename(paths.ready, directory);
    else if (isDirectory(paths.retired)) rename(paths.retired, directory);
  }
  if (!clean) return;
  if (exists(paths.retired)) remove(paths.retired);
  if (exists(paths.ready)) remove(paths.ready);
  const parent = dirname(directory);
  if (!isDirectory(parent)) return;
  for (const name of readdirSync(parent)) {
    const pid = paths.stagingName.exec(name)?.[1];
    if (pid !== undefined && !alive(Number(pid))) remove(join(parent, name));
  }
}

/**
 * Writes `files` (path relative to the tree → contents) as the new golden tree, by the protocol
 * above. Files named in `unchanged` are hard-linked from the old tree, so they keep their inode
 * and mtime (copied where a link is refused).
 */
export function replaceGoldenDirectory(
  directory: string,
  files: ReadonlyMap<string, string>,
  unchanged: ReadonlySet<string> = new Set(),
): void {
  const paths = swapPaths(directory);
  makeDirectories(dirname(directory), '--dir');
  const staging = paths.staging(process.pid);
  remove(staging);
  makeDirectories(staging, '--dir');
  try {
    for (const [file, text] of files) {
      const path = join(staging, file);
      makeDirectories(dirname(path), '--dir');
      if (unchanged.has(file) && link(join(directory, file), path)) continue;
      try {
        writeFileSync(path, text, { flag: 'wx' });
      } catch (error) {
        throw new InputError(`--dir: cannot write ${path}: ${errnoCode(error)}`);
      }
    }
    remove(paths.ready);
    rename(staging, paths.ready);
  } catch (error) {
    remove(staging);
    throw error;
  }
  if (exists(directory)) {
    remove(paths.retired);
    rename(directory, paths.retired);
  }
  rename(paths.ready, directory);
  remove(paths.retired);
}
