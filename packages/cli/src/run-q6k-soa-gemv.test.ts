import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ORACLE,
  SHAPE,
  expectBadInput,
  expectGgufRun,
  expectOracleY,
  gemvCli,
  itRunsOnEveryEngine,
} from './run-gemv-suite.test-support.js';

const cli = gemvCli('q6k-soa');

describe('forge run q6k-soa-gemv', () => {
  itRunsOnEveryEngine(cli, 'q6k-soa-gemv');

  it("runs ggml's Q6_K blocks repacked by forge quant repack and writes the oracle's y", () => {
    const repack = cli.forge(
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
    expectOracleY(cli, 'q6k-soa-gemv', 'Q6_K', join(cli.work, 'w.soa.bin'));
  });

  it("runs the GGUF file's native Q6_K tensor, repacked on the way in", () => {
    expectGgufRun(cli, 'q6k-soa-gemv');
  });

  it('rejects an n_in that is not whole blocks and a native file where repacked rows go', () => {
    expectBadInput(cli, [
      [
        ['run', 'q6k-soa-gemv', '--shape', 'n_in=100'],
        /^forge run: invalid input: n_in: 100 is not a multiple of 256, the q6_K block size$/m,
      ],
      [
        ['run', 'q6k-soa-gemv', ...SHAPE, '--input', `w=@${join(ORACLE, 'Q6_K_64x512.w.bin')}`],
        /--input w: .*Q6_K_64x512\.w\.bin has 26880 bytes; q6k-soa-gemv with this shape needs 28672 \(the q6_K rows repacked, as forge quant repack writes them\)/,
      ],
    ]);
  });
});
