import { ForgeError } from '@forge/ir';

/** The command line itself is wrong (unknown option, missing argument, a number out of range); exit code 2. */
export class UsageError extends ForgeError {
  override readonly name = 'UsageError';
}

/** A file could not be read, parsed or written; exit code 2. */
export class InputError extends ForgeError {
  override readonly name = 'InputError';
}

export const EXIT_OK = 0;
export const EXIT_CHECK_FAILED = 1;
export const EXIT_BAD_INPUT = 2;

/** `ENOENT`, `EACCES`, …: the errno code of a failed file operation, or 'error'. */
export function errnoCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'error';
}
