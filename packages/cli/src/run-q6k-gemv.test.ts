import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import {
  ORACLE,
  expectBadInput,
  expectGgufRun,
  expectOracleY,
  gemvCli,
  itRunsOnEveryEngine,
} from './run-gemv-suite.test-support.js';
const cli = gemvCli('q6k');

describe('forge run q6k-gemv', () => {
  itRunsOnEveryEngine(cli, 'q6k-gemv');

  it("runs ggml's raw Q6_K blocks and x from files and writes the oracle's y", () => {
    expectOracleY(cli, 'q6k-gemv', 'Q6_K', join(ORACLE, 'Q6_K_64x512.w.bin'));
  });

  it("runs the GGUF file's Q6_K tensor", () => {
    expectGgufRun(cli, 'q6k-gemv');
  });

  it('rejects an n_in that is not whole blocks and a raw file of the wrong size', () => {
    writeFileSync(join(cli.work, 'short.bin'), new Uint8Array(100));
    expectBadInput(cli, [
      [
        ['run', 'q6k-gemv', '--shape', 'n_in=100'],
        /^forge run: invalid input: n_in: 100 is not a multiple of 256, the q6_K block size$/m,
      ],
      [
        ['run', 'q6k-gemv', '--shape', 'n_in=256', '--shape', 'n_out=3', '--input', 'w=@short.bin'],
        /--input w: short\.bin has 100 bytes; q6k-gemv with this shape needs 630 \(the raw quantized blocks, unpadded\)/,
      ],
    ]);
  });
});
