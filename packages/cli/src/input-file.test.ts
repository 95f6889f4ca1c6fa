import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from './errors.js';
import { openRegularFile, readInputFile, readInputText } from './input-file.js';

const work = (): string => mkdtempSync(join(tmpdir(), 'forge-input-'));
const limit = { maxBytes: 8, rule: 'at most 8' };
const exact = { maxBytes: 8, exact: true, rule: 'the shape needs 8' };

describe('input files', () => {
  it('are read whole when regular and within the limit', () => {
    const cwd = work();
    writeFileSync(join(cwd, 'a.bin'), new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    writeFileSync(join(cwd, 'empty'), '');
    writeFileSync(join(cwd, 'text'), 'héllo');
    symlinkSync('a.bin', join(cwd, 'link'));
    expect([...readInputFile('--in', 'a.bin', cwd, exact)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(readInputFile('--in', 'link', cwd, limit)).toHaveLength(8);
    expect(readInputFile('--in', 'empty', cwd, limit)).toHaveLength(0);
    expect(readInputText(undefined, 'text', cwd, limit)).toBe('héllo');
    // The bytes own their buffer: nothing past them is visible through `.buffer`.
    expect(readInputFile('--in', 'a.bin', cwd, exact).buffer.byteLength).toBe(8);
  });

  it('of another size than the shape needs are refused with the size', () => {
    const cwd = work();
    writeFileSync(join(cwd, 'long.bin'), new Uint8Array(9));
    writeFileSync(join(cwd, 'short.bin'), new Uint8Array(7));
    expect(() => readInputFile('--input x', 'long.bin', cwd, exact)).toThrow(
      new InputError('--input x: long.bin has 9 bytes; the shape needs 8'),
    );
    expect(() => readInputFile('--input x', 'short.bin', cwd, exact)).toThrow(
      new InputError('--input x: short.bin has 7 bytes; the shape needs 8'),
    );
    expect(() => readInputFile(undefined, 'long.bin', cwd, limit)).toThrow(
      new InputError('long.bin has 9 bytes; at most 8'),
    );
  });

  it('over the limit by their size are refused without being read', () => {
    const cwd = work();
    // Sparse: 8 GiB by its size, no disk. Reading it would take 8 GiB of memory.
    writeFileSync(join(cwd, 'huge'), '');
    truncateSync(join(cwd, 'huge'), 8 * 2 ** 30);
    const started = performance.now();
    expect(() => readInputFile('--in', 'huge', cwd, limit)).toThrow(
      new InputError('--in: huge has 8589934592 bytes; at most 8'),
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('whose size says less than they hold are read one byte past the limit, no more', () => {
    // Files of /proc say 0 bytes and hold more.
    if (!existsSync('/proc/self/status')) return;
    expect(statSync('/proc/self/status').size).toBe(0);
    expect(() => readInputFile('--in', '/proc/self/status', '/', limit)).toThrow(
      new InputError('--in: /proc/self/status has more than 8 bytes; at most 8'),
    );
    const text = readInputText(undefined, '/proc/self/status', '/', {
      maxBytes: 1 << 20,
      rule: '',
    });
    expect(text).toMatch(/^Name:/);
  });

  it('that are not regular files are refused at once, not read or waited on', () => {
    const cwd = work();
    execFileSync('mkfifo', [join(cwd, 'fifo')]);
    symlinkSync('fifo', join(cwd, 'fifo.lnk'));
    symlinkSync('/dev/zero', join(cwd, 'zero.lnk'));
    mkdirSync(join(cwd, 'dir'));
    // A FIFO without a writer would block a plain open (and this test) for ever.
    expect(() => readInputFile('--input x', 'fifo', cwd, exact)).toThrow(
      new InputError('--input x: fifo is not a regular file (a FIFO)'),
    );
    expect(() => readInputFile('--input x', 'fifo.lnk', cwd, exact)).toThrow(
      new InputError('--input x: fifo.lnk is not a regular file (a FIFO)'),
    );
    // /dev/zero would be read until memory ran out.
    expect(() => readInputFile('--input x', '/dev/zero', cwd, exact)).toThrow(
      new InputError('--input x: /dev/zero is not a regular file (a character device)'),
    );
    expect(() => readInputFile('--input x', 'zero.lnk', cwd, limit)).toThrow(
      new InputError('--input x: zero.lnk is not a regular file (a character device)'),
    );
    expect(() => readInputText(undefined, 'dir', cwd, limit)).toThrow(
      new InputError('dir is not a regular file (a directory)'),
    );
    expect(() => openRegularFile('--in', 'dir', cwd, 'the/dir')).toThrow(
      new InputError('--in: the/dir is not a regular file (a directory)'),
    );
    expect(statSync(join(cwd, 'fifo')).isFIFO()).toBe(true);
  });

  it('that cannot be opened are one line with the errno code', () => {
    const cwd = work();
    expect(() => readInputFile('--in', 'missing.bin', cwd, limit)).toThrow(
      new InputError('--in: cannot read missing.bin: ENOENT'),
    );
    expect(() =>
      readInputText(undefined, 'missing.ptx', cwd, { ...limit, name: 'golden/x.ptx' }),
    ).toThrow(new InputError('cannot read golden/x.ptx: ENOENT'));
  });

  it('open as a descriptor with its own stats, for readers of their own (GGUF)', () => {
    const cwd = work();
    writeFileSync(join(cwd, 'a.bin'), 'abc');
    const file = openRegularFile('--in', 'a.bin', cwd);
    try {
      expect(file.stats.isFile()).toBe(true);
      expect(file.stats.size).toBe(3);
      expect(file.path).toBe(join(cwd, 'a.bin'));
    } finally {
      file.close();
    }
  });
});
