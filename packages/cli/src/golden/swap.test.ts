import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirectories } from '../directories.js';
import { InputError } from '../errors.js';
import { recoverGoldenDirectory, replaceGoldenDirectory, swapPaths } from './swap.js';

/** A scratch parent holding `golden/` (and whatever a killed update left beside it). */
function scratch(): { parent: string; directory: string } {
  const parent = mkdtempSync(join(tmpdir(), 'forge-swap-'));
  return { parent, directory: join(parent, 'golden') };
}

function tree(path: string, files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(path, file, '..'), { recursive: true });
    writeFileSync(join(path, file), text);
  }
}

const read = (path: string, file: string): string => readFileSync(join(path, file), 'utf8');
const OLD = { 'manifest.json': 'old', 'ptx/a.ptx': 'a1' };
const NEW = { 'manifest.json': 'new', 'ptx/a.ptx': 'a2' };

describe('the golden directory swap', () => {
  it('replaces the tree as a whole and leaves nothing beside it', () => {
    const { parent, directory } = scratch();
    tree(directory, { ...OLD, 'ptx/stale.ptx': 'x' });
    replaceGoldenDirectory(directory, new Map(Object.entries(NEW)));
    expect(readdirSync(parent)).toEqual(['golden']);
    expect(readdirSync(join(directory, 'ptx'))).toEqual(['a.ptx']);
    expect(read(directory, 'manifest.json')).toBe('new');
  });

  it('after a kill between the two renames, check and update finish the committed swap', () => {
    const { parent, directory } = scratch();
    const paths = swapPaths(directory);
    tree(paths.retired, OLD);
    tree(paths.ready, NEW);
    recoverGoldenDirectory(directory, false);
    expect(read(directory, 'ptx/a.ptx')).toBe('a2');
    // Check only reads: the retired tree stays until an update cleans up.
    expect(readdirSync(parent).sort()).toEqual(['.golden.old', 'golden']);
    recoverGoldenDirectory(directory, true);
    expect(readdirSync(parent)).toEqual(['golden']);
  });

  it('before the swap, the old tree stands and update drops the uncommitted new one', () => {
    const { parent, directory } = scratch();
    const paths = swapPaths(directory);
    tree(directory, OLD);
    tree(paths.ready, NEW);
    tree(paths.staging(2 ** 22 + 12345), { 'ptx/a.ptx': 'half' });
    recoverGoldenDirectory(directory, false);
    expect(read(directory, 'manifest.json')).toBe('old');
    expect(readdirSync(parent)).toHaveLength(3);
    recoverGoldenDirectory(directory, true);
    expect(readdirSync(parent)).toEqual(['golden']);
    expect(read(directory, 'manifest.json')).toBe('old');
  });

  it("keeps a staging directory whose process is still running (this one's)", () => {
    const { parent, directory } = scratch();
    tree(directory, OLD);
    tree(swapPaths(directory).staging(process.pid), { 'manifest.json': 'busy' });
    recoverGoldenDirectory(directory, true);
    expect(readdirSync(parent).sort()).toEqual([`.golden.staging-${process.pid}`, 'golden']);
  });

  it('puts the old tree back when only it is left', () => {
    const { directory } = scratch();
    tree(swapPaths(directory).retired, OLD);
    recoverGoldenDirectory(directory, false);
    expect(read(directory, 'manifest.json')).toBe('old');
  });
});

describe('makeDirectories', () => {
  it('fails at once where mkdir says ENOENT under an existing parent (recursive mkdir spins there)', () => {
    const started = performance.now();
    expect(() => makeDirectories('/proc/forge-x/ptx', '--dir')).toThrow(InputError);
    expect(() => makeDirectories('/proc/forge-x/ptx', '--dir')).toThrow(
      '--dir: cannot create /proc/forge-x: ENOENT',
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses a path under a regular file and creates missing levels otherwise', () => {
    const { parent } = scratch();
    writeFileSync(join(parent, 'file'), '');
    expect(() => makeDirectories(join(parent, 'file', 'x'), '--dir')).toThrow(/is not a directory/);
    makeDirectories(join(parent, 'a', 'b', 'c'), '--dir');
    expect(readdirSync(join(parent, 'a', 'b'))).toEqual(['c']);
  });
});
