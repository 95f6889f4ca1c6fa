import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { InputError, errnoCode } from './errors.js';

/** What a file system node is, for messages: `a FIFO`, `a character device`, `a regular file`. */
export function fileKind(stats: Stats): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a file';
}

/** `--input x: ` for an option, nothing for a positional argument (the message names the file). */
function prefix(option: string | undefined): string {
  return option === undefined ? '' : `${option}: `;
}

/** A descriptor `openRegularFile` opened; `close` it when done. */
export interface OpenedFile {
  readonly fd: number;
  /** The opened descriptor's stats (fstat): what was opened, not what a path named earlier. */
  readonly stats: Stats;
  /** The absolute path. */
  readonly path: string;
  readonly close: () => void;
}

// Opening never waits: a FIFO without a writer would block a plain open for ever, a terminal must
// not become the controlling one. Reads of a regular file do not block anyway.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens `given` (relative to cwd) for reading if it is a regular file, else throws an InputError
 * naming `option` (undefined for a positional argument) and the file (as `name`): `--input x:
 * /dev/zero is not a regular file (a character device)`. The verdict is the opened descriptor's fstat, so nothing swapped in
 * between a check and the open is read; a stat first spares opening a device or FIFO at all.
 */
export function openRegularFile(
  option: string | undefined,
  given: string,
  cwd: string,
  name = given,
): OpenedFile {
  const path = resolve(cwd, given);
  const refuse = (stats: Stats): never => {
    throw new InputError(`${prefix(option)}${name} is not a regular file (${fileKind(stats)})`);
  };
  let fd: number;
  try {
    const before = statSync(path);
    if (!before.isFile()) refuse(before);
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`${prefix(option)}cannot read ${name}: ${errnoCode(error)}`);
  }
  const close = (): void => closeSync(fd);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) refuse(stats);
    return { fd, stats, path, close };
  } catch (error) {
    close();
    if (error instanceof InputError) throw error;
    throw new InputError(`${prefix(option)}cannot read ${name}: ${errnoCode(error)}`);
  }
}

/** How many bytes a file may or must hold. */
export interface InputLimit {
  /** Most bytes the file may hold; at most one byte more is read. */
  readonly maxBytes: number;
  /** When true the file must hold exactly maxBytes (the size its shape needs). */
  readonly exact?: boolean;
  /**
   * The rule, after `<file> has N bytes; `: `affine-f32 with this shape needs 32 (8 f32 values)`,
   * `a spec file may have at most 16777216 (16 MiB)`.
   */
  readonly rule: string;
  /** How messages name the file, when not as given (`golden/x.ptx` for a file of --dir). */
  readonly name?: string;
}

/** Reads into `buffer` from `offset` until it is full or the file ends; returns the bytes held. */
function fill(fd: number, buffer: Uint8Array, offset: number): number {
  let length = offset;
  while (length < buffer.length) {
    const read = readSync(fd, buffer, length, buffer.length - length, null);
    if (read === 0) break;
    length += read;
  }
  return length;
}

/**
 * Reads up to `limit` bytes of an opened file whose size says `expected`: into a buffer of that
 * size, then one byte more to tell whether the size was right. Files of /proc say 0 and hold more:
 * those grow the buffer up to the limit. The result is a buffer of its own length.
 */
function readUpTo(fd: number, expected: number, limit: number): Uint8Array {
  const first = new Uint8Array(Math.min(expected, limit));
  const length = fill(fd, first, 0);
  if (length < first.length) return first.slice(0, length);
  const probe = new Uint8Array(1);
  if (length === limit || fill(fd, probe, 0) === 0) return first;
  let buffer = new Uint8Array(Math.min(limit, Math.max(2 * length, 1 << 16)));
  buffer.set(first);
  buffer[length] = probe[0] ?? 0;
  let held = length + 1;
  for (;;) {
    held = fill(fd, buffer, held);
    if (held < buffer.length || held >= limit) return buffer.slice(0, held);
    const grown = new Uint8Array(Math.min(limit, 2 * buffer.length));
    grown.set(buffer);
    buffer = grown;
  }
}

/**
 * The bytes of the regular file `given` (relative to cwd), read without ever taking more than
 * `limit.maxBytes` + 1 bytes: a file of another size than the limit admits is one InputError
 * naming `option` and the size (`--input x: x.f32 has 4100 bytes; affine-f32 with this shape needs
 * 4096 (1024 f32 values)`), as is a file that is not a regular file or cannot be read.
 */
export function readInputFile(
  option: string | undefined,
  given: string,
  cwd: string,
  limit: InputLimit,
): Uint8Array {
  const name = limit.name ?? given;
  const file = openRegularFile(option, given, cwd, name);
  const wrongSize = (count: string): never => {
    throw new InputError(`${prefix(option)}${name} has ${count} bytes; ${limit.rule}`);
  };
  try {
    const size = file.stats.size;
    // Over the limit by its size alone: not a byte is read.
    if (size > limit.maxBytes) wrongSize(String(size));
    let bytes: Uint8Array;
    try {
      bytes = readUpTo(file.fd, size, limit.maxBytes + 1);
    } catch (error) {
      throw new InputError(`${prefix(option)}cannot read ${name}: ${errnoCode(error)}`);
    }
    // The size said less than was there (a file that grew, or one of /proc): more than the limit.
    if (bytes.length > limit.maxBytes) wrongSize(`more than ${limit.maxBytes}`);
    if (limit.exact === true && bytes.length !== limit.maxBytes) wrongSize(String(bytes.length));
    return bytes;
  } finally {
    file.close();
  }
}

/** `readInputFile` as UTF-8 text (malformed sequences become U+FFFD, as readFileSync's do). */
export function readInputText(
  option: string | undefined,
  given: string,
  cwd: string,
  limit: InputLimit,
): string {
  const bytes = readInputFile(option, given, cwd, limit);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
