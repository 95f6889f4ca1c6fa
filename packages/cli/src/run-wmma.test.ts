// `forge run wmma-gemv` from raw f16 files, checked against this test's own float64 product.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { f16Bits, f16FromBits } from '@forge/ir';
import { Rng, normalizedMse } from '@forge/ir/kernels';
import { TARGETS, expectBadInput, floats, gemvCli } from './run-gemv-suite.test-support.js';

const N_COLS = 3;
const N_OUT = 21;
const N_IN = 48;

/** Values uniform in [-1, 1] rounded to f16, as doubles. */
const halfValues = (rng: Rng, count: number): Float64Array =>
  Float64Array.from({ length: count }, () => f16FromBits(f16Bits(rng.uniform(-1, 1))));

/** Y[c][r] = Σ_k W[r][k]·X[c][k] in float64. */
function product(w: Float64Array, x: Float64Array): Float64Array {
  const y = new Float64Array(N_COLS * N_OUT);
  for (let c = 0; c < N_COLS; c++)
    for (let r = 0; r < N_OUT; r++) {
      let dot = 0;
      for (let k = 0; k < N_IN; k++) dot += w[r * N_IN + k]! * x[c * N_IN + k]!;
      y[c * N_OUT + r] = dot;
    }
  return y;
}

const halves = (values: Float64Array): Uint16Array => Uint16Array.from(values, (v) => f16Bits(v));
const shapeArgs = (nIn = N_IN): string[] =>
  Object.entries({ n_cols: N_COLS, n_out: N_OUT, n_in: nIn }).flatMap(([name, value]) => [
    '--shape',
    `${name}=${value}`,
  ]);

describe('forge run wmma-gemv with input files', () => {
  const cli = gemvCli('wmma');
  const rng = new Rng(23);
  const w = halfValues(rng, N_OUT * N_IN);
  const x = halfValues(rng, N_COLS * N_IN);
  writeFileSync(join(cli.work, 'w.f16'), halves(w));
  writeFileSync(join(cli.work, 'x.f16'), halves(x));
  const inputs = ['--input', 'w=@w.f16', '--input', 'x=@x.f16'];

  it.each(TARGETS)('reads f16 W and X files on %s and writes our product', async (target) => {
    const output = `y-${target}.f32`;
    const args = ['--target', target, ...shapeArgs(), ...inputs, '--output', `y=${output}`];
    const result = await cli.forge('run', 'wmma-gemv', ...args);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ PASS\n/);
    const y = floats(join(cli.work, output));
    expect(y).toHaveLength(N_COLS * N_OUT);
    expect(normalizedMse(y, product(w, x))).toBeLessThanOrEqual(1e-10);
  });

  it('names the layout when a file has the wrong size, and the shape field it cannot run', async () => {
    const run = (...args: string[]): string[] => [
      'run',
      'wmma-gemv',
      '--target',
      'interp',
      ...args,
    ];
    await expectBadInput(cli, [
      [
        run(...shapeArgs(64), '--input', 'w=@w.f16'),
        /--input w: w\.f16 has 2016 bytes; wmma-gemv with this shape needs 2688 \(\[n_out 21\]\[n_in 64\] raw IEEE halves, little-endian, row-major\)/,
      ],
      [
        run(...shapeArgs(), '--input', 'x=@w.f16'),
        /--input x: w\.f16 has 2016 bytes; wmma-gemv with this shape needs 288 \(\[n_cols 3\]\[n_in 48\] raw IEEE halves/,
      ],
      [run(...shapeArgs(40)), /n_in: 40 is not a multiple of 16, the mma's K/],
      [run('--shape', 'n_cols=17'), /n_cols: 17 is not between 1 and 16/],
    ]);
  });
});
