// `forge run` on every gemv kernel: one row per kernel, the same checks for each.
import { writeFileSync } from 'node:fs';
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
  type GemvCli,
} from './run-gemv-suite.test-support.js';

interface GemvRow {
  readonly kernelId: string;
  /** The oracle's file prefix: `fixtures/ggml/<prefix>_64x512.*`. */
  readonly oracle: string;
  /** The format's block size, as the bad-`n_in` message names it. */
  readonly block: { readonly type: string; readonly size: number };
  /** The GGUF test's title, for kernels that read the oracle GGUF's Q6_K tensor. */
  readonly gguf?: string;
  /** The oracle-y test's title and the weights file it runs (written into `cli.work` if needed). */
  readonly weights: {
    readonly title: string;
    readonly file: (cli: GemvCli) => string | Promise<string>;
  };
  /** The wrong-size weights case: its test title, its arguments and the message it must print. */
  readonly wrongSize: {
    readonly title: string;
    readonly args: (cli: GemvCli) => string[];
    readonly message: RegExp;
  };
}

/** The 100-byte file the raw-format rows feed as w with n_out=3. */
const shortFile = (cli: GemvCli): string => {
  writeFileSync(join(cli.work, 'short.bin'), new Uint8Array(100));
  return 'short.bin';
};

/** A row for a kernel that reads ggml's raw blocks unchanged. */
function rawRow(
  kernelId: string,
  oracle: string,
  block: { type: string; size: number },
  needs: number,
  gguf?: string,
): GemvRow {
  const { size } = block;
  return {
    kernelId,
    oracle,
    block,
    ...(gguf === undefined ? {} : { gguf }),
    weights: {
      title: `runs ggml's raw ${oracle} blocks and x from files and writes the oracle's y`,
      file: () => join(ORACLE, `${oracle}_64x512.w.bin`),
    },
    wrongSize: {
      title: 'rejects an n_in that is not whole blocks and a raw file of the wrong size',
      args: (cli: GemvCli) => [
        ...['run', kernelId, '--shape', `n_in=${size}`, '--shape', 'n_out=3'],
        ...['--input', `w=@${shortFile(cli)}`],
      ],
      message: new RegExp(
        `--input w: short\\.bin has 100 bytes; ${kernelId} with this shape needs ${needs} \\(the raw quantized blocks, unpadded\\)`,
      ),
    },
  };
}

const ROWS: readonly GemvRow[] = [
  rawRow('q8_0-gemv', 'Q8_0', { type: 'q8_0', size: 32 }, 102),
  rawRow('q4k-gemv', 'Q4_K', { type: 'q4_K', size: 256 }, 432),
  rawRow('q6k-gemv', 'Q6_K', { type: 'q6_K', size: 256 }, 630, "runs the GGUF file's Q6_K tensor"),
  {
    kernelId: 'q6k-soa-gemv',
    oracle: 'Q6_K',
    block: { type: 'q6_K', size: 256 },
    gguf: "runs the GGUF file's native Q6_K tensor, repacked on the way in",
    weights: {
      title: "runs ggml's Q6_K blocks repacked by forge quant repack and writes the oracle's y",
      file: async (cli) => {
        const repack = await cli.forge(
          ...['quant', 'repack', '--type', 'q6_K', '--rows', '64', '--cols', '512'],
          ...['--in', join(ORACLE, 'Q6_K_64x512.w.bin'), '--out', 'w.soa.bin'],
        );
        expect(repack.stderr).toBe('');
        expect(repack.code).toBe(0);
        return join(cli.work, 'w.soa.bin');
      },
    },
    wrongSize: {
      title: 'rejects an n_in that is not whole blocks and a native file where repacked rows go',
      args: () => [
        ...['run', 'q6k-soa-gemv', ...SHAPE],
        ...['--input', `w=@${join(ORACLE, 'Q6_K_64x512.w.bin')}`],
      ],
      message:
        /--input w: .*Q6_K_64x512\.w\.bin has 26880 bytes; q6k-soa-gemv with this shape needs 28672 \(the q6_K rows repacked, as forge quant repack writes them\)/,
    },
  },
];

describe.each(ROWS)('forge run $kernelId', (row) => {
  const cli = gemvCli(row.kernelId);

  itRunsOnEveryEngine(cli, row.kernelId);

  it(row.weights.title, async () => {
    await expectOracleY(cli, row.kernelId, row.oracle, await row.weights.file(cli));
  });

  // Only the Q6_K kernels can read the oracle GGUF's one quantized tensor: no test, not a skipped one.
  if (row.gguf !== undefined) {
    it(row.gguf, async () => {
      await expectGgufRun(cli, row.kernelId);
    });
  }

  it(row.wrongSize.title, async () => {
    const { type, size } = row.block;
    await expectBadInput(cli, [
      [
        ['run', row.kernelId, '--shape', 'n_in=100'],
        new RegExp(
          `^forge run: invalid input: n_in: 100 is not a multiple of ${size}, the ${type} block size$`,
          'm',
        ),
      ],
      [row.wrongSize.args(cli), row.wrongSize.message],
    ]);
  });
});
