// Shared by the `forge run <gemv-kernel>` tests: one CLI harness, the checks every gemv kernel gets.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { getKernel, normalizedMse } from '@forge/ir/kernels';
import { opensDawn } from './dawn-log.js';
import { forgeInProcess } from './in-process.test-support.js';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
export const ORACLE = fileURLToPath(new URL('../../../fixtures/ggml/', import.meta.url));
export const TARGETS = ['interp', 'wgsl', 'ptx-sim'] as const;
export const SHAPE = ['--shape', 'n_in=512', '--shape', 'n_out=64'];

export interface GemvCli {
  readonly work: string;
  forge(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * The CLI, run in a fresh working directory: in this process, except a command that opens Dawn,
 * which runs the built binary (only it filters Dawn's native log off stderr, which must stay empty).
 */
export function gemvCli(tag: string): GemvCli {
  const work = mkdtempSync(join(tmpdir(), `forge-cli-${tag}-`));
  return {
    work,
    async forge(...args) {
      if (!opensDawn(args)) return forgeInProcess(work, ...args);
      const run = spawnSync(process.execPath, [BIN, ...args], { cwd: work, encoding: 'utf8' });
      return { code: run.status, stdout: run.stdout, stderr: run.stderr };
    },
  };
}

export const floats = (path: string): Float32Array => {
  const bytes = readFileSync(path);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};

/** `forge run KERNEL` on every engine at 512 x 64 passes within its tolerance and reports the shape. */
export function itRunsOnEveryEngine(cli: GemvCli, kernelId: string): void {
  it.each(TARGETS)('runs on %s with n_in and n_out shapes', async (target) => {
    const result = await cli.forge('run', kernelId, '--target', target, ...SHAPE, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number; shape: object };
    expect(report.shape).toEqual({ n_in: 512, n_out: 64 });
    expect(report.pass).toBe(true);
    expect(report.nmse).toBeLessThanOrEqual(getKernel(kernelId).tolerance);
  });
}

/** Runs the weights file `w` with the oracle's x on every engine; y matches ggml's exact y. */
export async function expectOracleY(
  cli: GemvCli,
  kernelId: string,
  prefix: string,
  w: string,
): Promise<void> {
  for (const target of TARGETS) {
    const output = `y-${target}.f32`;
    const result = await cli.forge(
      'run',
      kernelId,
      '--target',
      target,
      ...SHAPE,
      '--input',
      `w=@${w}`,
      '--input',
      `x=@${join(ORACLE, `${prefix}_64x512.x.f32`)}`,
      '--output',
      `y=${output}`,
    );
    expect(result.code).toBe(0);
    const y = floats(join(cli.work, output));
    expect(normalizedMse(y, floats(join(ORACLE, `${prefix}_64x512.y.f32`)))).toBeLessThanOrEqual(
      getKernel(kernelId).tolerance,
    );
  }
}

/** Each command line is bad input: exit 2, its message, one `forge run:` line and nothing else. */
export async function expectBadInput(
  cli: GemvCli,
  cases: readonly [string[], RegExp][],
): Promise<void> {
  for (const [args, message] of cases) {
    const result = await cli.forge(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^forge run: [^\n]*\n$/);
  }
}

/** The oracle GGUF file's Q6_K tensor `output.weight` (16 x 256) runs on every engine within tolerance. */
export async function expectGgufRun(cli: GemvCli, kernelId: string): Promise<void> {
  const gguf = join(ORACLE, 'forge-oracle.gguf');
  for (const target of TARGETS) {
    const args = ['--target', target, '--gguf', gguf, '--tensor', 'output.weight', '--json'];
    const result = await cli.forge('run', kernelId, ...args);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number; shape: object };
    expect(report.shape).toEqual({ n_in: 256, n_out: 16 });
    expect(report.pass).toBe(true);
    expect(report.nmse).toBeLessThanOrEqual(getKernel(kernelId).tolerance);
  }
}
