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

const cli = gemvCli('gemv');

describe('forge run q8_0-gemv', () => {
  itRunsOnEveryEngine(cli, 'q8_0-gemv');

  it("runs ggml's raw Q8_0 blocks and x from files and writes the oracle's y", () => {
    expectOracleY(cli, 'q8_0-gemv', 'Q8_0', join(ORACLE, 'Q8_0_64x512.w.bin'));
  });

  it('rejects an n_in that is not whole blocks and a raw file of the wrong size', () => {
    writeFileSync(join(cli.work, 'short.bin'), new Uint8Array(100));
    expectBadInput(cli, [
      [
        ['run', 'q8_0-gemv', '--shape', 'n_in=100'],
        /^forge run: invalid input: n_in: 100 is not a multiple of 32, the q8_0 block size$/m,
      ],
      [
        ['run', 'q8_0-gemv', '--shape', 'n_in=32', '--shape', 'n_out=3', '--input', 'w=@short.bin'],
        /--input w: short\.bin has 100 bytes; q8_0-gemv with this shape needs 102 \(the raw quantized blocks, unpadded\)/,
      ],
    ]);
  });
});
