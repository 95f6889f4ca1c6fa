// `forge run sdpa-decode` from raw files: f16 halves for K and V, checked here against our own softmax.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { f16Bits, f16FromBits } from '@forge/ir';
import { Rng, normalizedMse } from '@forge/ir/kernels';
import { TARGETS, expectBadInput, floats, gemvCli } from './run-gemv-suite.test-support.js';

const HEADS = { n_head: 8, n_kv_head: 2, head_dim: 64 };
/** The cache holds 320 positions; 300 are written and the last 20 are NaN, which no query may read. */
const MAX_CTX = 320;
const N_KV = 300;

interface Cache {
  readonly q: Float32Array;
  /** K and V as the kernel reads them, [max_ctx][n_kv_head][head_dim]. */
  readonly k: Float64Array;
  readonly v: Float64Array;
}

/** q uniform in [-1, 1]; K and V rounded to f16, positions at and past n_kv NaN. */
function makeCache(rng: Rng): Cache {
  const { n_head, n_kv_head, head_dim } = HEADS;
  const q = Float32Array.from({ length: n_head * head_dim }, () => rng.uniform(-1, 1));
  const row = n_kv_head * head_dim;
  const cached = (): Float64Array =>
    Float64Array.from({ length: MAX_CTX * row }, (_, i) =>
      i < N_KV * row ? f16FromBits(f16Bits(rng.uniform(-1, 1))) : Number.NaN,
    );
  return { q, k: cached(), v: cached() };
}

/** out[j] = softmax(q[j]·K[t] / √head_dim over t in [start, N_KV)) · V, in float64. */
function expectedOut(cache: Cache, start: number): Float64Array {
  const { n_head, n_kv_head, head_dim } = HEADS;
  const out = new Float64Array(n_head * head_dim);
  for (let j = 0; j < n_head; j++) {
    const kvHead = Math.floor(j / (n_head / n_kv_head));
    const at = (t: number, d: number): number => (t * n_kv_head + kvHead) * head_dim + d;
    const scores: number[] = [];
    for (let t = start; t < N_KV; t++) {
      let dot = 0;
      for (let d = 0; d < head_dim; d++)
        dot += (cache.q[j * head_dim + d] ?? 0) * cache.k[at(t, d)]!;
      scores.push(dot / Math.sqrt(head_dim));
    }
    const most = Math.max(...scores);
    const weights = scores.map((score) => Math.exp(score - most));
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    for (let d = 0; d < head_dim; d++) {
      let value = 0;
      weights.forEach((weight, i) => (value += weight * cache.v[at(start + i, d)]!));
      out[j * head_dim + d] = value / total;
    }
  }
  return out;
}

/** Raw little-endian IEEE halves (NaN as 0x7e00). */
const halves = (values: Float64Array): Uint16Array => Uint16Array.from(values, (v) => f16Bits(v));

const shapeArgs = (extra: Record<string, number> = {}): string[] =>
  Object.entries({ ...HEADS, n_kv: N_KV, max_ctx: MAX_CTX, ...extra }).flatMap(([name, value]) => [
    '--shape',
    `${name}=${value}`,
  ]);

describe('forge run sdpa-decode with input files', () => {
  const cli = gemvCli('sdpa');
  const cache = makeCache(new Rng(11));
  writeFileSync(join(cli.work, 'q.f32'), cache.q);
  writeFileSync(join(cli.work, 'k.f16'), halves(cache.k));
  writeFileSync(join(cli.work, 'v.f16'), halves(cache.v));
  writeFileSync(join(cli.work, 'k.f32'), Float32Array.from(cache.k));
  writeFileSync(join(cli.work, 'v.f32'), Float32Array.from(cache.v));
  const inputs = (suffix: string): string[] =>
    ['q=@q.f32', `k=@k.${suffix}`, `v=@v.${suffix}`].flatMap((input) => ['--input', input]);

  it.each(TARGETS)('reads f16 K/V files on %s and writes our softmax · V', async (target) => {
    const output = `out-${target}.f32`;
    const result = await cli.forge(
      'run',
      'sdpa-decode',
      '--target',
      target,
      ...shapeArgs(),
      ...inputs('f16'),
      '--output',
      `out=${output}`,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ PASS\n/);
    const out = floats(join(cli.work, output));
    expect(normalizedMse(out, expectedOut(cache, 0))).toBeLessThanOrEqual(1e-10);
  });

  it('reads f32 K/V files for sdpa-decode-f32, under a window of 100 positions', async () => {
    const args = [
      ...shapeArgs({ window: 100 }),
      ...inputs('f32'),
      '--output',
      'out=out-window.f32',
    ];
    const result = await cli.forge('run', 'sdpa-decode-f32', '--target', 'interp', ...args);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = floats(join(cli.work, 'out-window.f32'));
    expect(normalizedMse(out, expectedOut(cache, N_KV - 100))).toBeLessThanOrEqual(1e-10);
  });

  it('names the cache layout when a K/V file has the wrong size, and needs max_ctx for it', async () => {
    const run = (...args: string[]): string[] => [
      'run',
      'sdpa-decode',
      '--target',
      'interp',
      ...args,
    ];
    const noMaxCtx = shapeArgs().slice(0, -2);
    await expectBadInput(cli, [
      [
        run(...noMaxCtx, '--input', 'k=@k.f16'),
        /--input k: k\.f16 has 81920 bytes; sdpa-decode with this shape needs 1048576 \(\[max_ctx 4096\]\[n_kv_head 2\]\[head_dim 64\] raw IEEE halves, little-endian; --shape max_ctx=N sizes the cache\)/,
      ],
      [
        run(...shapeArgs(), '--input', 'v=@k.f32'),
        /--input v: k\.f32 has 163840 bytes; sdpa-decode with this shape needs 81920 /,
      ],
      [run(...shapeArgs({ n_kv: 321 })), /n_kv/],
    ]);
  });
});
