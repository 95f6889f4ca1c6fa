// Issue #26 rows 8-11 through `forge sim`: hostile PTX is one line and exit 2, never a trace.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { forgeInProcess } from './in-process.test-support.js';

const work = mkdtempSync(join(tmpdir(), 'forge-sim-limits-'));
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n';

/** A PTX file of one entry `k` with this body, in the test's folder. */
function kernel(name: string, body: string): string {
  const path = join(work, `${name}.ptx`);
  writeFileSync(path, `${HEADER}.visible .entry k()\n{\n${body}\nret;\n}\n`);
  return path;
}

const sim = (path: string, ...extra: string[]) =>
  forgeInProcess(work, 'sim', path, '--entry', 'k', '--grid', '1', '--block', '32', ...extra);

describe('forge sim on hostile PTX', () => {
  it.each<[string, string, RegExp]>([
    [
      '100,000 nested blocks (row 8)',
      `${'{'.repeat(100_000)}\n${'}'.repeat(100_000)}`,
      /^forge sim: line 6: '\{' nested 1664 deep in an entry is over the limit of 1663 \(SIMULATOR_LIMITS\.blockDepth\): \{+… \(\d+ more characters\)$/,
    ],
    [
      'a register count ptxas overflows on (row 9)',
      '.reg .b32 %r<4294967296>;',
      /^forge sim: line 6: %r<4294967296> is over the limit of 4294967295 registers \(SIMULATOR_LIMITS\.registersPerDeclaration\), as ptxas's: \.reg \.b32 %r<4294967296>;$/,
    ],
    [
      '4 GiB of .shared (row 10)',
      '.shared .b8 s[4294967295];',
      /^forge sim: line 6: entry 'k': static \.shared variables take 4294967295 bytes with 's', over the limit of 49152 bytes \(SIMULATOR_LIMITS\.staticSharedBytes\): \.shared \.b8 s\[4294967295\];$/,
    ],
    [
      '64 MiB of .local (row 10)',
      '.local .b8 l[67108864];',
      /^forge sim: line 6: entry 'k': \.local variables take 67108864 bytes with 'l', over the limit of 524288 bytes \(SIMULATOR_LIMITS\.localBytesPerThread\)/,
    ],
    [
      '2^40 bytes of .shared (row 10)',
      '.shared .b8 s[1099511627776];',
      /over the limit of 49152 bytes \(SIMULATOR_LIMITS\.staticSharedBytes\)/,
    ],
    [
      'an entry of 262,145 instructions (row 11)',
      'add.u32 %r1, %r1, 1;\n'.repeat(2 ** 18).replace('add', '.reg .b32 %r<2>;\nadd'),
      /^forge sim: line 262152: an entry of more than 262144 instructions is over the limit of 262144 \(SIMULATOR_LIMITS\.entryInstructions\): ret;$/,
    ],
  ])('%s: exit 2 and one line', async (name, body, message) => {
    const result = await sim(kernel(name.replace(/\W+/g, '-'), body));
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd()).toMatch(message);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('runs a declaration of two billion registers, as ptxas assembles it (row 9)', async () => {
    const path = kernel('two-billion', '.reg .b32 %r<2000000000>;\nmov.u32 %r1999999999, 1;');
    const result = await sim(path);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toMatch(/0 finding\(s\)\n$/);
  });

  it('names --dynamic-shared when static and dynamic shared memory pass 227 KiB', async () => {
    const result = await sim(
      kernel('dynamic', '.shared .b8 s[1024];'),
      '--dynamic-shared',
      '232448',
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^forge sim: entry 'k' has 1024 bytes of static shared memory; with 232448 dynamic bytes that is over the limit of 232448 bytes \(SIMULATOR_LIMITS\.sharedBytesPerBlock\): ask for fewer dynamic bytes \(dynamicSharedBytes, forge sim --dynamic-shared\)\n$/,
    );
  });

  it('stops the largest grid of an empty kernel at --max-steps (exit 1, one line)', async () => {
    const path = join(work, 'empty.ptx');
    writeFileSync(path, `${HEADER}.visible .entry k()\n{\n}\n`);
    const result = await forgeInProcess(
      work,
      'sim',
      path,
      '--grid',
      '2147483647,65535,65535',
      '--block',
      '1',
      '--max-steps',
      '100000',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^forge sim: stopped after 100000 steps \(--max-steps 100000\)/);
  });

  it('prints no stack trace from the binary either', () => {
    const path = kernel('nested-binary', `${'{'.repeat(50_000)}\n${'}'.repeat(50_000)}`);
    const run = spawnSync(
      process.execPath,
      [BIN, 'sim', path, '--entry', 'k', '--grid', '1', '--block', '32'],
      { cwd: work, encoding: 'utf8' },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});
