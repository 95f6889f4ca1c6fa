// `forge decode`: the tiny models on every target, --logits and --json, and bad model files and
// arguments as one-line exits with nothing written.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizedMse } from '@forge/ir/kernels';
import {
  retypeTensorId,
  tinyLlamaGguf,
  withMetadata,
  withTensorShape,
  withTensorType,
  withoutTensor,
  writeGguf,
  type GgufFile,
} from '@forge/test-fixtures';
import { floats, gemvCli } from './run-gemv-suite.test-support.js';

const MODELS = fileURLToPath(new URL('../../../fixtures/tiny-llama/', import.meta.url));
const Q_MODEL = join(MODELS, 'tiny-llama-q.gguf');
const F32_MODEL = join(MODELS, 'tiny-llama-f32.gguf');
const cli = gemvCli('decode');
const STEP_LINE = /^pos +\d+ {2}token +\d+ {2}→ argmax +\d+ {2}logit -?\d+\.\d{4}( {2}nmse \S+)?$/;

/** Standard error holds nothing but progress lines (one appears once a run has taken two seconds). */
function expectProgressOnly(stderr: string, steps: number): void {
  const progress = new RegExp(
    `^forge decode: \\d+/${steps} steps, \\d+\\.\\d\\d s a step, about \\d+\\.\\d\\d s left$`,
  );
  for (const line of stderr.split('\n').filter((text) => text !== ''))
    expect(line).toMatch(progress);
}

interface DecodeReport {
  target: string;
  kv: string;
  steps: { position: number; token: number; argmax: number; logit: number; nmse?: number }[];
  maxNmse?: number;
  generated: number[];
  tokensPerSecond: number;
  millisecondsPerStep?: number;
}

describe('forge decode', () => {
  it('runs the quantized model on WebGPU: a line a step, the generated tokens, tokens/s, --logits', async () => {
    const args = ['decode', Q_MODEL, '--tokens', '1,17,42', '--generate', '5', '--target', 'wgsl'];
    const result = await cli.forge(...args, '--logits', 'wgsl.f32', '--reference');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(8 + 3);
    lines.slice(0, 8).forEach((line) => expect(line).toMatch(STEP_LINE));
    expect(lines[8]).toMatch(/^generated: (\d+ ){4}\d+$/);
    // --reference: each step's logit NMSE against the float64 decoder, and the largest, within 1e-4.
    const worst =
      /^logits against the float64 reference on the dequantized weights: max NMSE (\S+) over 8 steps$/.exec(
        lines[9] ?? '',
      );
    expect(Number(worst?.[1])).toBeLessThanOrEqual(1e-4);
    expect(Number(worst?.[1])).toBeGreaterThan(0);
    expect(lines[10]).toMatch(
      /^8 steps on wgsl in \d+\.\d\d s: \d+\.\d\d tokens\/s; \d+\.\d ms a step after the first/,
    );
    // The greedy tokens are fed back: step 3's input is step 2's argmax.
    const argmax = (line: string | undefined) => /argmax +(\d+)/.exec(line ?? '')?.[1];
    const input = (line: string | undefined) => /token +(\d+)/.exec(line ?? '')?.[1];
    expect(input(lines[3])).toBe(argmax(lines[2]));
    expect(floats(join(cli.work, 'wgsl.f32'))).toHaveLength(8 * 256);
  });

  it('gives the same logits on the interpreter and WebGPU, and --json on both', async () => {
    const runs: Record<string, DecodeReport> = {};
    for (const target of ['interp', 'wgsl']) {
      const args = ['decode', F32_MODEL, '--tokens', '1,17,42', '--target', target, '--kv', 'f32'];
      const result = await cli.forge(...args, '--json', '--logits', `${target}.f32`, '--reference');
      expectProgressOnly(result.stderr, 3);
      expect(result.code).toBe(0);
      runs[target] = JSON.parse(result.stdout) as DecodeReport;
    }
    expect(runs['interp']?.steps.map((step) => step.position)).toEqual([0, 1, 2]);
    expect(runs['interp']?.steps.map((step) => step.token)).toEqual([1, 17, 42]);
    for (const run of Object.values(runs)) {
      expect(run.steps.every((step) => (step.nmse ?? 1) <= 1e-8)).toBe(true);
      expect(run.maxNmse).toBe(Math.max(...run.steps.map((step) => step.nmse ?? 1)));
    }
    expect(runs['wgsl']?.millisecondsPerStep).toBeGreaterThan(0);
    expect(runs['interp']?.millisecondsPerStep).toBeUndefined();
    const interp = floats(join(cli.work, 'interp.f32'));
    expect(normalizedMse(floats(join(cli.work, 'wgsl.f32')), interp)).toBeLessThan(1e-10);
  });

  it('runs on the PTX simulator at the arch given, progress on stderr only', async () => {
    const args = ['decode', F32_MODEL, '--tokens', '5,6', '--target', 'ptx-sim', '--arch', 'sm_90'];
    const result = await cli.forge(...args);
    expect(result.code).toBe(0);
    // A progress line appears once a run has taken two seconds; none otherwise.
    for (const line of result.stderr.split('\n').filter((text) => text !== ''))
      expect(line).toMatch(
        /^forge decode: 1\/2 steps, \d+\.\d\d s a step, about \d+\.\d\d s left$/,
      );
    expect(result.stdout).toMatch(/^2 steps on ptx-sim in \d+\.\d\d s: \d+\.\d\d tokens\/s$/m);
  });

  const broken = (name: string, edit: (file: GgufFile) => GgufFile): string => {
    const path = join(cli.work, name);
    writeFileSync(path, writeGguf(edit(tinyLlamaGguf('f32'))));
    return path;
  };

  it('refuses bad model files in one line naming the tensor or key, exit 2, nothing written', async () => {
    const notGguf = join(cli.work, 'not.gguf');
    writeFileSync(notGguf, 'plain text');
    const bf16 = join(cli.work, 'bf16.gguf');
    writeFileSync(bf16, retypeTensorId(writeGguf(tinyLlamaGguf('f32')), 'blk.0.ffn_up.weight', 30));
    const cases: [string, RegExp][] = [
      [notGguf, /not\.gguf: not a GGUF file \(it does not start with the magic "GGUF"\)/],
      [
        broken(
          'arch.gguf',
          withMetadata('general.architecture', { type: 'string', value: 'phi2' }),
        ),
        /general\.architecture: 'phi2' is not 'llama'/,
      ],
      [
        broken('missing.gguf', withoutTensor('blk.1.attn_q.weight')),
        /blk\.1\.attn_q\.weight: missing/,
      ],
      [
        broken('shape.gguf', withTensorShape('blk.0.ffn_down.weight', [256, 512])),
        /blk\.0\.ffn_down\.weight: ne \[256, 512\] does not match the hyperparameters, which give \[512, 256\]/,
      ],
      [bf16, /blk\.0\.ffn_up\.weight: type bf16 has no Forge mat-vec kernel/],
      [
        broken('q4_0.gguf', withTensorType('blk.0.attn_output.weight', 'q4_0')),
        /blk\.0\.attn_output\.weight: type q4_0 has no Forge mat-vec kernel/,
      ],
    ];
    for (const [model, message] of cases) {
      const result = await cli.forge(
        'decode',
        model,
        '--tokens',
        '1',
        '--target',
        'interp',
        '--logits',
        'never.f32',
      );
      expect(result.code, model).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/^forge decode: [^\n]*\n$/);
      expect(result.stdout).toBe('');
      expect(existsSync(join(cli.work, 'never.f32'))).toBe(false);
    }
  });

  it('refuses bad arguments in one line naming the option, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--tokens', '1,x'], /--tokens: '1,x' is not a comma-separated list of token ids/],
      [
        ['--tokens', '1,256'],
        /--tokens: token 256 \(id 2 of 2\) is not below the vocabulary's 256/,
      ],
      [
        ['--tokens', '1', '--generate', '64'],
        /--generate: 1 tokens \+ 64 generated need 65 positions; the cache holds 64/,
      ],
      [['--tokens', '1', '--generate', '8', '--ctx', '4'], /the cache holds 4 \(--ctx\)/],
      [['--tokens', '1', '--kv', 'q8'], /--kv: 'q8' is not f16 or f32/],
      [['--tokens', '1', '--target', 'cuda'], /--target: 'cuda' is not a decode target/],
      [
        ['--tokens', '1', '--target', 'interp', '--arch', 'sm_80'],
        /--arch and --features apply to/,
      ],
      [['--tokens', '1', '--target', 'ptx-sim', '--arch', 'sm_99'], /unknown arch 'sm_99'/],
      [['--tokens', '1', '--logits', 'no/such/dir/l.f32'], /--logits: cannot write/],
      [['--target', 'interp'], /--tokens is required/],
    ];
    for (const [args, message] of cases) {
      const withTarget = args.includes('--target') ? args : [...args, '--target', 'interp'];
      const result = await cli.forge('decode', Q_MODEL, ...withTarget);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/^forge decode: [^\n]*\n$/);
    }
  });
});
