import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getKernel } from '@forge/ir/kernels';
import { emitPtx, printPtxIr, ptxTarget } from '@forge/ptx';
import { forgeInProcess } from '../in-process.test-support.js';

// Runs the CLI in this process; cli.test.ts runs the built binary.
const work = mkdtempSync(join(tmpdir(), 'forge-emit-'));
const forge = (...args: string[]) => forgeInProcess(work, ...args);

describe('forge emit --ir-out', () => {
  it('writes the printed IR that the PTX .loc lines count in, byte-identical to printPtxIr', async () => {
    const { spec } = getKernel('rmsnorm');
    const schedule = ['--schedule', 'workgroupSize=128'];
    const result = await forge(
      'emit',
      'rmsnorm',
      '--arch',
      'sm_75',
      ...schedule,
      '--ir-out',
      'rmsnorm.forge',
    );
    expect(result.code).toBe(0);
    const target = ptxTarget('sm_75');
    expect(result.stdout).toBe(emitPtx(spec, { workgroupSize: 128 }, target).source);
    const printed = readFileSync(join(work, 'rmsnorm.forge'), 'utf8');
    expect(printed).toBe(printPtxIr(spec, { workgroupSize: 128 }, target).text);
    expect(result.stdout).toContain('.file 1 "rmsnorm.forge"');
    // Every .loc names a line of that file.
    const lines = printed.split('\n').length - 1;
    const named = [...result.stdout.matchAll(/^\t\.loc 1 (\d+) 1$/gm)].map((match) =>
      Number(match[1]),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.every((line) => line >= 1 && line <= lines)).toBe(true);
  });

  it('writes it beside --out, and refuses it for WGSL or the same file twice', async () => {
    const both = await forge(
      'emit',
      'affine-f32',
      '--out',
      'a.ptx',
      '--ir-out',
      'affine-f32.forge',
    );
    expect(both).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(join(work, 'a.ptx'), 'utf8')).toContain('.file 1 "affine-f32.forge"');
    expect(readFileSync(join(work, 'affine-f32.forge'), 'utf8')).toMatch(/^kernel affine-f32 v1 /);

    const wgsl = await forge('emit', 'affine-f32', '--target', 'wgsl', '--ir-out', 'w.forge');
    expect(wgsl.code).toBe(2);
    expect(wgsl.stderr).toMatch(/--ir-out applies to --target ptx only/);
    const same = await forge('emit', 'affine-f32', '--out', 'same', '--ir-out', 'same');
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--ir-out: same is already written by --out/);
    expect(existsSync(join(work, 'w.forge')) || existsSync(join(work, 'same'))).toBe(false);
  });
});
