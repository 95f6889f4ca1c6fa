import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import {
  ORACLE,
  expectBadInput,
  expectOracleY,
  gemvCli,
  itRunsOnEveryEngine,
} from './run-gemv-suite.test-support.js';

const cli = gemvCli('q4k');

describe('forge run q4k-gemv', () => {
  itRunsOnEveryEngine(cli, 'q4k-gemv');

  it("runs ggml's raw Q4_K blocks and x from files and writes the oracle's y", () => {
    expectOracleY(cli, 'q4k-gemv', 'Q4_K', join(ORACLE, 'Q4_K_64x512.w.bin'));
  });

  it('rejects an n_in that is not whole blocks and a raw file of the wrong size', () => {
    writeFileSync(join(cli.work, 'short.bin'), new Uint8Array(100));
    expectBadInput(cli, [
      [
        ['run', 'q4k-gemv', '--shape', 'n_in=100'],
        /^forge run: invalid input: n_in: 100 is not a multiple of 256, the q4_K block size$/m,
      ],
      [
        ['run', 'q4k-gemv', '--shape', 'n_in=256', '--shape', 'n_out=3', '--input', 'w=@short.bin'],
        /--input w: short\.bin has 100 bytes; q4k-gemv with this shape needs 432 \(the raw quantized blocks, unpadded\)/,
      ],
    ]);
  });
});
