import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `pnpm fuzz` argument handling: a bad option is one line on stderr and exit 2, before any work.

const MAIN = fileURLToPath(new URL('./main.mjs', import.meta.url));
const fuzz = (...args) => spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8' });

describe('pnpm fuzz arguments', () => {
  it.each([
    [['--minutes', 'ten'], /^fuzz: --minutes must be a number in \[0\.05, 1440\], got 'ten'$/],
    [['--runs', '0'], /^fuzz: --runs must be a number in \[1, 1000000000\], got '0'$/],
    [
      ['--seed=-1', '--runs', '1'],
      /^fuzz: --seed must be a number in \[0, 2147483647\], got '-1'$/,
    ],
    [[], /^fuzz: give --minutes or --runs$/],
    [['--bogus'], /^fuzz: Unknown option '--bogus'/],
    [
      ['--target', 'bogus', '--runs', '1'],
      /^fuzz: --target must be one of spec, ptx, gguf, got 'bogus'$/,
    ],
  ])('%j exits 2 with one line', (args, message) => {
    const run = fuzz(...args);
    expect(run.status).toBe(2);
    const [line, usage, ...rest] = run.stderr.split('\n');
    expect(line).toMatch(message);
    expect(usage).toMatch(/^usage: pnpm fuzz --minutes N/);
    expect(rest.join('')).toBe('');
    expect(run.stdout).toBe('');
  });
});
