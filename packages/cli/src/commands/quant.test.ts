import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repack } from '@forge/ir/gguf';
import { forgeInProcess } from '../in-process.test-support.js';

// Runs the CLI in this process; cli-errors.test.mjs and cli.test.ts run the built binary.
const ORACLE = fileURLToPath(new URL('../../../../fixtures/ggml/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'forge-quant-'));

const forge = (...args: string[]) => forgeInProcess(work, ...args);

const quant = (...args: string[]) => forge('quant', ...args);
const oracle = (name: string): Buffer => readFileSync(join(ORACLE, name));
const shape = ['--rows', '64', '--cols', '512'];

describe('forge quant', () => {
  const cases: [string, string][] = [
    ['q4_0', 'Q4_0'],
    ['q8_0', 'Q8_0'],
    ['q4_K', 'Q4_K'],
    ['q6_K', 'Q6_K'],
  ];

  it.each(cases)('quantizes and dequantizes %s files exactly as ggml', async (type, name) => {
    const src = join(ORACLE, 'src_64x512.w.f32');
    const blocks = join(work, `${type}.bin`);
    const quantized = await quant(
      'quantize',
      '--type',
      type,
      ...shape,
      '--in',
      src,
      '--out',
      blocks,
    );
    expect(quantized.code).toBe(0);
    expect(quantized.stdout).toMatch(new RegExp(`^quantize ${type} 64×512: 131072 → \\d+ bytes`));
    expect(readFileSync(blocks)).toEqual(oracle(`${name}_64x512.w.bin`));
    const floats = join(work, `${type}.f32`);
    expect(
      (await quant('dequantize', '--type', type, ...shape, '--in', blocks, '--out', floats)).code,
    ).toBe(0);
    expect(readFileSync(floats)).toEqual(oracle(`${name}_64x512.deq.f32`));
  });

  it.each([
    ['q6_K', 'Q6_K'],
    ['q4_K', 'Q4_K'],
  ])('repacks %s rows and unpacks them back', async (type, name) => {
    const native = join(ORACLE, `${name}_64x512.w.bin`);
    const packed = join(work, `${type}.soa`);
    const back = join(work, `${type}.back`);
    expect(
      (await quant('repack', '--type', type, ...shape, '--in', native, '--out', packed)).code,
    ).toBe(0);
    expect(new Uint8Array(readFileSync(packed))).toEqual(
      repack(
        type === 'q6_K' ? 'q6_K' : 'q4_K',
        new Uint8Array(oracle(`${name}_64x512.w.bin`)),
        64,
        512,
      ),
    );
    expect(
      (await quant('unpack', '--type', type, ...shape, '--in', packed, '--out', back)).code,
    ).toBe(0);
    expect(readFileSync(back)).toEqual(oracle(`${name}_64x512.w.bin`));
  });

  it('accepts type names in any case', async () => {
    const input = join(work, 'ramp.f32');
    writeFileSync(input, new Uint8Array(Float32Array.from({ length: 32 }, (_, i) => i).buffer));
    const run = await quant(
      'quantize',
      '--type',
      'Q8_0',
      '--rows',
      '1',
      '--cols',
      '32',
      '--in',
      input,
      '--out',
      join(work, 'ramp.q8'),
    );
    expect(run.code).toBe(0);
    expect(readFileSync(join(work, 'ramp.q8')).length).toBe(34);
  });

  const f32 = join(ORACLE, 'src_64x512.w.f32');
  const q6 = join(ORACLE, 'Q6_K_64x512.w.bin');
  it.each([
    ['no action', [], /expected one action; usage: forge quant/],
    [
      'an unknown action',
      ['pack', '--type', 'q4_K'],
      /unknown action 'pack' \(known: quantize, dequantize, repack, unpack\)/,
    ],
    ['a missing --type', ['quantize', ...shape], /--type is required/],
    [
      'an unknown type',
      ['quantize', '--type', 'q5_K', ...shape],
      /--type: unknown type 'q5_K' \(known: q4_0, q8_0, q4_K, q6_K\)/,
    ],
    [
      'repack of a native-only type',
      ['repack', '--type', 'q8_0', ...shape, '--in', f32, '--out', 'x'],
      /--type: repack supports q4_K and q6_K only, not q8_0/,
    ],
    [
      'a bad --rows',
      ['quantize', '--type', 'q4_0', '--rows', '0', '--cols', '32'],
      /--rows: '0' is not a positive integer/,
    ],
    ['a missing --cols', ['quantize', '--type', 'q4_0', '--rows', '2'], /--cols is required/],
    [
      'cols not whole blocks',
      ['quantize', '--type', 'q6_K', '--rows', '64', '--cols', '500'],
      /--cols: 500 is not a multiple of 256, the q6_K block size/,
    ],
    ['a missing --out', ['quantize', '--type', 'q4_0', ...shape, '--in', f32], /--out is required/],
    [
      'an unreadable --in',
      ['quantize', '--type', 'q4_0', ...shape, '--in', 'nope.f32', '--out', 'x'],
      /--in: cannot read nope.f32: ENOENT/,
    ],
    [
      'f32 input of the wrong size',
      ['quantize', '--type', 'q4_K', '--rows', '32', '--cols', '512', '--in', f32, '--out', 'x'],
      /--in: .*src_64x512.w.f32 has 131072 bytes; expected 65536 \(32 rows × 512 cols of little-endian f32\)/,
    ],
    [
      'blocks of the wrong size',
      ['dequantize', '--type', 'q4_K', ...shape, '--in', q6, '--out', 'x'],
      /--in: .* has 26880 bytes; expected 18432 \(64 rows × 512 cols of q4_K blocks\)/,
    ],
    [
      'a repacked file of the wrong size',
      ['unpack', '--type', 'q6_K', ...shape, '--in', q6, '--out', 'x'],
      /expected 28672 \(64 rows × 512 cols of repacked q6_K\)/,
    ],
    ['an unknown option', ['quantize', '--fast'], /Unknown option '--fast'/],
  ])('rejects %s with one line and exit code 2, writing nothing', async (_, args, message) => {
    const before = readdirSync(work).length;
    const run = await quant(...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
    expect(readdirSync(work).length).toBe(before);
    expect(existsSync(join(work, 'x'))).toBe(false);
  });

  it('leaves an existing output untouched when the input is bad', async () => {
    const out = join(work, 'keep.bin');
    writeFileSync(out, 'old');
    expect(
      (await quant('dequantize', '--type', 'q8_0', ...shape, '--in', q6, '--out', out)).code,
    ).toBe(2);
    expect(readFileSync(out, 'utf8')).toBe('old');
  });

  it('is listed in forge --help', async () => {
    expect((await forge('--help')).stdout).toContain(
      'forge quant quantize|dequantize|repack|unpack',
    );
  });
});
