// `forge run q4k-soa-wmma` from a repacked Q4_K file and f16 X, and from the oracle's GGUF tensor.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { f16Bits, f16FromBits } from '@forge/ir';
import { repack } from '@forge/ir/gguf';
import { normalizedMse } from '@forge/ir/kernels';
import { ORACLE, expectBadInput, floats, gemvCli } from './run-gemv-suite.test-support.js';

const TARGETS = ['interp', 'wgsl', 'ptx-sim'] as const;

const N_OUT = 64;
const N_IN = 512;
const N_COLS = 2;

/** The oracle's f32 x rounded to f16 (column 0) and halved (column 1, exact), as doubles. */
const oracleX = floats(join(ORACLE, 'Q4_K_64x512.x.f32'));
const x16 = Float64Array.from({ length: N_COLS * N_IN }, (_, i) => {
  const value = f16FromBits(f16Bits(oracleX[i % N_IN]!));
  return i < N_IN ? value : value / 2;
});

/** Y[c][r] = Σ_k W[r][k]·X[c][k] in float64 from ggml's dequantized W and the f16 X. */
function product(): Float64Array {
  const w = floats(join(ORACLE, 'Q4_K_64x512.deq.f32'));
  const y = new Float64Array(N_COLS * N_OUT);
  for (let c = 0; c < N_COLS; c++)
    for (let r = 0; r < N_OUT; r++) {
      let dot = 0;
      for (let k = 0; k < N_IN; k++) dot += w[r * N_IN + k]! * x16[c * N_IN + k]!;
      y[c * N_OUT + r] = dot;
    }
  return y;
}

const shapeArgs = (nIn = N_IN): string[] =>
  Object.entries({ n_cols: N_COLS, n_out: N_OUT, n_in: nIn }).flatMap(([name, value]) => [
    '--shape',
    `${name}=${value}`,
  ]);

describe('forge run q4k-soa-wmma', () => {
  const cli = gemvCli('q4k-wmma');
  const native = new Uint8Array(readFileSync(join(ORACLE, 'Q4_K_64x512.w.bin')));
  writeFileSync(join(cli.work, 'w.soa'), repack('q4_K', native, N_OUT, N_IN));
  writeFileSync(
    join(cli.work, 'x.f16'),
    Uint16Array.from(x16, (v) => f16Bits(v)),
  );
  const inputs = ['--input', 'w=@w.soa', '--input', 'x=@x.f16'];
  const expected = product();
  const oracleY = floats(join(ORACLE, 'Q4_K_64x512.y.f32'));

  it.each(TARGETS)(
    'runs the oracle Q4_K matrix on %s within 1e-6 of the product',
    async (target) => {
      const output = `y-${target}.f32`;
      const args = ['--target', target, ...shapeArgs(), ...inputs, '--output', `y=${output}`];
      const result = await cli.forge('run', 'q4k-soa-wmma', ...args);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/ PASS\n/);
      const y = floats(join(cli.work, output));
      expect(y).toHaveLength(N_COLS * N_OUT);
      expect(normalizedMse(y, expected)).toBeLessThanOrEqual(1e-6);
      // Against ggml's y on the f32 x: the f16 rounding of x adds its own error, still under 1e-6.
      expect(normalizedMse(y.subarray(0, N_OUT), oracleY)).toBeLessThanOrEqual(1e-6);
    },
  );

  it.each(TARGETS)('runs the GGUF Q4_K tensor on %s, repacked on the way in', async (target) => {
    const gguf = join(ORACLE, 'forge-oracle.gguf');
    const args = ['--target', target, '--shape', 'n_cols=3', '--gguf', gguf];
    const result = await cli.forge(
      'run',
      'q4k-soa-wmma',
      ...args,
      '--tensor',
      'blk.0.ffn_down.weight',
      '--json',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number; shape: object };
    expect(report.shape).toEqual({ n_cols: 3, n_out: 32, n_in: 256 });
    expect(report.pass).toBe(true);
    expect(report.nmse).toBeLessThanOrEqual(1e-6);
  });

  it('names the layout when a file has the wrong size, and the shape field it cannot run', async () => {
    const run = (...args: string[]): string[] => [
      'run',
      'q4k-soa-wmma',
      '--target',
      'interp',
      ...args,
    ];
    await expectBadInput(cli, [
      [
        run(...shapeArgs(256), '--input', 'w=@w.soa'),
        /--input w: w\.soa has 18432 bytes; q4k-soa-wmma with this shape needs 10240 \(the q4_K rows repacked, as forge quant repack writes them\)/,
      ],
      [run(...shapeArgs(384)), /n_in: 384 is not a multiple of 256, the q4_K block size/],
      [run('--shape', 'n_cols=17'), /n_cols: 17 is not between 1 and 16/],
    ]);
  });
});
