// `forge run kv-store` / `kv-store-f32` on every engine, and its shape errors as one-line exits.
import { describe, expect, it } from 'vitest';
import { TARGETS, expectBadInput, gemvCli } from './run-gemv-suite.test-support.js';

const cli = gemvCli('kv-store');
const SHAPE = ['--shape', 'n_kv_head=2', '--shape', 'head_dim=64', '--shape', 'max_ctx=16'];

describe('forge run kv-store', () => {
  const RUNS = (['kv-store', 'kv-store-f32'] as const).flatMap((kernelId) =>
    TARGETS.map((target) => [kernelId, target] as const),
  );
  it.each(RUNS)('%s runs exactly on %s at the last row', async (kernelId, target) => {
    const args = ['run', kernelId, '--target', target, ...SHAPE, '--shape', 'pos=15', '--json'];
    const result = await cli.forge(...args);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { pass: boolean; nmse: number; shape: object };
    expect(report.shape).toEqual({ n_kv_head: 2, head_dim: 64, max_ctx: 16, pos: 15 });
    expect(report.pass).toBe(true);
    expect(report.nmse).toBe(0);
  });

  it('rejects a pos past the cache and an odd head_dim in one line, exit 2', async () => {
    await expectBadInput(cli, [
      [['run', 'kv-store', ...SHAPE, '--shape', 'pos=16'], /pos: 16 is not below max_ctx 16/],
      [['run', 'kv-store-f32', '--shape', 'head_dim=7'], /head_dim: 7 is not even/],
    ]);
  });
});
