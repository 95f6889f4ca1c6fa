// Issue #26: `forge run argmax` on logits holding NaN gives the same index on every engine — the
// first NaN, where the kernel once read x[2^32 − 1] — and the NaN's own bits as the value.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { argmaxIndex } from '@forge/ir/kernels';
import { TARGETS, floats, gemvCli } from './run-gemv-suite.test-support.js';

const cli = gemvCli('argmax');
const N = 1000;

/** Logits with NaN of these bits at these indices, +inf at 3 and a finite max of 100 at 800. */
function writeLogits(name: string, nans: readonly (readonly [number, number])[]): void {
  const x = Float32Array.from({ length: N }, (_, i) => 3 * Math.sin(i));
  x[3] = Infinity;
  x[800] = 100;
  const bits = new Uint32Array(x.buffer);
  for (const [index, pattern] of nans) bits[index] = pattern;
  writeFileSync(join(cli.work, name), new Uint8Array(x.buffer));
}

const INPUTS = {
  // x[0] NaN: every thread starts from x[0], so no lane held a value equal to the max.
  'nan-first.f32': {
    nans: [
      [0, 0x7fc00000],
      [417, 0x7fc00000],
    ],
    index: 0,
    bits: 0x7fc00000,
  },
  // A negative NaN with a payload, after +inf and before a finite max and another NaN.
  'nan-inside.f32': {
    nans: [
      [600, 0x7fc00000],
      [417, 0xffc0beef],
    ],
    index: 417,
    bits: 0xffc0beef,
  },
} as const;

describe('forge run argmax on NaN logits', () => {
  const RUNS = Object.keys(INPUTS).flatMap((input) => TARGETS.map((target) => [input, target]));
  it.each(RUNS)('%s on %s: the first NaN, checked against the reference', async (input, target) => {
    const { nans, index, bits } = INPUTS[input as keyof typeof INPUTS];
    writeLogits(input, nans);
    expect(argmaxIndex(floats(join(cli.work, input)))).toBe(index);
    const [indexFile, valueFile] = [`index-${target}-${input}`, `value-${target}-${input}`];
    const result = await cli.forge(
      'run',
      'argmax',
      '--target',
      target,
      '--shape',
      `n=${N}`,
      '--input',
      `x=@${input}`,
      '--output',
      `index=${indexFile}`,
      '--output',
      `value=${valueFile}`,
      '--json',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number };
    expect(report).toMatchObject({ pass: true, nmse: 0 });
    const indexBytes = floats(join(cli.work, indexFile));
    expect(new Uint32Array(indexBytes.buffer)[0]).toBe(index);
    // The NaN's bits come through (quiet NaNs: the interpreter keeps their payload too).
    expect(new Uint32Array(floats(join(cli.work, valueFile)).buffer)[0]).toBe(bits);
  });
});
