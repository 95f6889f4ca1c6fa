import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { validateSpec, type KernelSpec } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { InputError } from './errors.js';
import { readInputText } from './input-file.js';
import { CLI_LIMITS, formatBytes } from './limits.js';

/** True when the argument names a spec file rather than a catalog kernel id. */
export function isSpecPath(argument: string, cwd: string): boolean {
  return argument.endsWith('.json') || argument.includes('/') || existsSync(resolve(cwd, argument));
}

/** Reads and validates a spec file; unreadable, malformed or invalid input throws a ForgeError. */
export function readSpecFile(path: string, cwd: string): KernelSpec {
  const text = readInputText(undefined, path, cwd, {
    maxBytes: CLI_LIMITS.specJsonBytes,
    rule: `a spec file may have at most ${formatBytes(CLI_LIMITS.specJsonBytes)}`,
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  return validateSpec(value);
}

/** A catalog kernel's spec by id, or a spec file's. */
export function loadSpec(argument: string, cwd: string): KernelSpec {
  return isSpecPath(argument, cwd) ? readSpecFile(argument, cwd) : getKernel(argument).spec;
}
