import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizedMse } from '@forge/ir';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const ORACLE = fileURLToPath(new URL('../../../../shared/oracle/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'forge-cli-q6k-soa-'));

function forge(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { cwd: work, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const floats = (path: string): Float32Array => {
  const bytes = readFileSync(path);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};

const SHAPE = ['--shape', 'n_in=512', '--shape', 'n_out=64'];

describe('forge run q6k-soa-gemv', () => {
  it.each(['interp', 'wgsl', 'ptx-sim'])('runs on %s with n_in and n_out shapes', (target) => {
    const result = forge('run', 'q6k-soa-gemv', '--target', target, ...SHAPE, '--json');
    expect(result.stderr).not.toMatch(/forge:/);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number; shape: object };
    expect(report.shape).toEqual({ n_in: 512, n_out: 64 });
    expect(report.pass).toBe(true);
    expect(report.nmse).toBeLessThanOrEqual(1e-10);
  });

  it("runs ggml's Q6_K blocks repacked by forge quant repack and writes the oracle's y", () => {
    const repack = forge(
      'quant',
      'repack',
      '--type',
      'q6_K',
      '--rows',
      '64',
      '--cols',
      '512',
      '--in',
      join(ORACLE, 'Q6_K_64x512.w.bin'),
      '--out',
      'w.soa.bin',
    );
    expect(repack.stderr).toBe('');
    expect(repack.code).toBe(0);
    for (const target of ['interp', 'wgsl', 'ptx-sim']) {
      const output = `y-${target}.f32`;
      const result = forge(
        'run',
        'q6k-soa-gemv',
        '--target',
        target,
        ...SHAPE,
        '--input',
        'w=@w.soa.bin',
        '--input',
        `x=@${join(ORACLE, 'Q6_K_64x512.x.f32')}`,
        '--output',
        `y=${output}`,
      );
      expect(result.code).toBe(0);
      const y = floats(join(work, output));
      expect(normalizedMse(y, floats(join(ORACLE, 'Q6_K_64x512.y.f32')))).toBeLessThanOrEqual(
        1e-10,
      );
    }
  });

  it("runs the GGUF file's native Q6_K tensor, repacked on the way in", () => {
    const gguf = join(ORACLE, 'forge-oracle.gguf');
    for (const target of ['interp', 'wgsl', 'ptx-sim']) {
      const args = ['--target', target, '--gguf', gguf, '--tensor', 'output.weight', '--json'];
      const result = forge('run', 'q6k-soa-gemv', ...args);
      expect(result.stderr).not.toMatch(/forge:/);
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number; shape: object };
      expect(report.shape).toEqual({ n_in: 256, n_out: 16 });
      expect(report.pass).toBe(true);
      expect(report.nmse).toBeLessThanOrEqual(1e-10);
    }
  });

  it('rejects an n_in that is not whole blocks and a native file where repacked rows go', () => {
    writeFileSync(join(work, 'short.bin'), new Uint8Array(100));
    const cases: [string[], RegExp][] = [
      [
        ['run', 'q6k-soa-gemv', '--shape', 'n_in=100'],
        /^forge: invalid input: n_in: 100 is not a multiple of 256, the q6_K block size$/m,
      ],
      [
        ['run', 'q6k-soa-gemv', ...SHAPE, '--input', `w=@${join(ORACLE, 'Q6_K_64x512.w.bin')}`],
        /--input w: .*Q6_K_64x512\.w\.bin has 26880 bytes; q6k-soa-gemv with this shape needs 28672 \(the q6_K rows repacked, as forge quant repack writes them\)/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = forge(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.split('\n').filter((line) => line.startsWith('forge:'))).toHaveLength(1);
    }
  });
});
