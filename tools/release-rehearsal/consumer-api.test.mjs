import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as ir from '@forge/ir';
import * as kernels from '@forge/ir/kernels';
import * as ptx from '@forge/ptx';
import * as ptxas from '@forge/ptx/ptxas';
import * as wgsl from '@forge/wgsl';
import { consumerCheck, consumerScript } from './consumer-api.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the consumer check', () => {
  const versions = Object.fromEntries(
    ['ir', 'ptx', 'wgsl'].map((name) => [
      `@forge/${name}`,
      JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')).version,
    ]),
  );
  const golden = {
    ptx: join(root, 'golden', 'ptx', 'rmsnorm.sm_80.ptx'),
    wgsl: join(root, 'golden', 'wgsl', 'rmsnorm.wgsl'),
  };
  const modules = { ir, kernels, ptx, ptxas, wgsl, readFileSync };

  it('passes on the workspace packages at their own versions', async () => {
    const result = await consumerCheck(modules, { versions, golden });
    expect(result.ptxCacheKey).toMatch(/^[0-9a-f]{64}$/);
    expect(result.registers).toBeGreaterThan(0);
  });

  it('fails when the versions are not the ones built in', async () => {
    const other = { ...versions, '@forge/ptx': '9.9.9' };
    await expect(consumerCheck(modules, { versions: other, golden })).rejects.toThrow(
      /ptx backend is @forge\/ptx@.*, published @forge\/ptx@9\.9\.9/,
    );
  });

  it('is valid source both as an ES module and as CommonJS', () => {
    for (const [kind, inputType] of [
      ['esm', 'module'],
      ['cjs', 'commonjs'],
    ]) {
      const checked = spawnSync(process.execPath, ['--check', `--input-type=${inputType}`], {
        input: consumerScript(kind),
        encoding: 'utf8',
      });
      expect(checked.stderr).toBe('');
      expect(checked.status).toBe(0);
    }
  });
});
