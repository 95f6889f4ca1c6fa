import { ForgeError } from '@forge/ir';

/** The command line itself is wrong (unknown option, missing argument); exit code 2. */
export class UsageError extends ForgeError {
  override readonly name = 'UsageError';
}

/** A file could not be read or parsed; exit code 2. */
export class InputError extends ForgeError {
  override readonly name = 'InputError';
}

export const EXIT_OK = 0;
export const EXIT_CHECK_FAILED = 1;
export const EXIT_BAD_INPUT = 2;
