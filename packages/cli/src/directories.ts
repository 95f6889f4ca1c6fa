import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { InputError, errnoCode } from './errors.js';

/** Whether `path` is a directory; false when nothing is there or it is something else. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether anything (file, directory, link) is at `path`. */
export function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates `path` and its missing parents one level at a time. Node's `mkdirSync(…, { recursive })`
 * loops forever where mkdir says ENOENT under an existing parent (`/proc/x`); this fails instead.
 */
export function makeDirectories(path: string, option: string): void {
  const missing: string[] = [];
  let current = path;
  while (!exists(current)) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  if (exists(current) && !isDirectory(current))
    throw new InputError(`${option}: cannot create ${path}: ${current} is not a directory`);
  for (const directory of missing) {
    try {
      mkdirSync(directory);
    } catch (error) {
      throw new InputError(`${option}: cannot create ${directory}: ${errnoCode(error)}`);
    }
  }
}
