import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkoutGoldenDirectory } from '../commands/golden.js';
import { forgeInProcess } from '../in-process.test-support.js';
import { goldenEntries } from './entries.js';

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
const GOLDEN = checkoutGoldenDirectory() ?? 'no golden directory';
const ITERATIONS = 10;

/** mulberry32: the kill delays are the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `forge golden check --dir` in this process: only the update needs a process to kill. */
const check = (directory: string) =>
  forgeInProcess(process.cwd(), 'golden', 'check', '--dir', directory);

/** Starts `forge golden update --dir`, SIGKILLs it after `delay` ms; resolves once it is gone. */
function updateKilledAfter(directory: string, delay: number): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'golden', 'update', '--dir', directory], {
    stdio: 'ignore',
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), delay);
  return new Promise((resolve) => {
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
  });
}

describe('golden update killed at random moments', () => {
  it('leaves golden check passing on the new state or reporting the old one, never a mix', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'forge-golden-kill-'));
    const pristine = join(scratch, 'pristine');
    const directory = join(scratch, 'golden');
    cpSync(GOLDEN, pristine, { recursive: true });
    // The old state: one changed entry, one missing, one stray file; update has three things to do.
    const changed = join(pristine, 'ptx/rmsnorm.sm_80.ptx');
    writeFileSync(changed, readFileSync(changed, 'utf8').replace('ret;', 'ret; // old'));
    rmSync(join(pristine, 'wgsl/affine-f32.wgsl'));
    writeFileSync(join(pristine, 'ptx/stray.ptx'), 'stray\n');
    const reset = (): void => {
      for (const name of readdirSync(scratch))
        if (name !== 'pristine') rmSync(join(scratch, name), { recursive: true, force: true });
      cpSync(pristine, directory, { recursive: true });
    };
    reset();
    const old = await check(directory);
    expect(old.code).toBe(1);
    expect(old.stdout).toMatch(/^FAIL golden\/wgsl\/affine-f32\.wgsl: not pinned/m);
    expect(old.stdout).toMatch(/^FAIL golden\/ptx\/stray\.ptx: file is not in the manifest$/m);
    expect(old.stdout.split('\n').slice(-2)).toEqual([
      `golden check: ${goldenEntries().length} entries, 3 problem(s)`,
      '',
    ]);
    // An uninterrupted update sets the time scale for the kills.
    const full = await updateKilledAfter(directory, 60_000);
    const fresh = await check(directory);
    expect([fresh.code, fresh.stdout]).toEqual([
      0,
      `golden check: ${goldenEntries().length} entries, 0 problem(s)\n`,
    ]);

    const next = random(10);
    const seen = { old: 0, new: 0 };
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      reset();
      await updateKilledAfter(directory, full * (0.2 + 0.9 * next()));
      const after = await check(directory);
      expect(after.stderr).toBe('');
      if (after.code === 0) {
        expect(after.stdout).toBe(fresh.stdout);
        seen.new++;
      } else {
        expect([after.code, after.stdout]).toEqual([old.code, old.stdout]);
        seen.old++;
      }
      // Whatever the kill left is hidden beside the directory, under the swap's names only.
      for (const name of readdirSync(scratch))
        expect(name).toMatch(/^(pristine|golden|\.golden\.(new|old|staging-\d+))$/);
    }
    expect(seen.old + seen.new).toBe(ITERATIONS);
    // The next update cleans up after the kills.
    const update = spawnSync(process.execPath, [BIN, 'golden', 'update', '--dir', directory]);
    expect(update.status).toBe(0);
    expect(readdirSync(scratch).sort()).toEqual(['golden', 'pristine']);
    expect((await check(directory)).code).toBe(0);
  }, 180_000);
});
