// The packages load wherever an engine puts them: bundled by esbuild for the browser or for Node,
// and required from CommonJS. Nothing reads package.json at run time or needs a `node:` module to emit.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_PACKAGES, ROOT } from './workspace.mjs';

const toolsDirectory = fileURLToPath(new URL('.', import.meta.url));
const golden = (file) => readFileSync(join(ROOT, 'golden', file), 'utf8');
const versionOf = (directory) =>
  PUBLISHED_PACKAGES.find((entry) => entry.directory === directory).manifest.version;

/** Bundles `source` (an ES module importing Forge packages by name) and returns the output text. */
async function bundle(source, options) {
  const result = await build({
    stdin: { contents: source, resolveDir: toolsDirectory, loader: 'js' },
    bundle: true,
    format: 'esm',
    write: false,
    logLevel: 'silent',
    metafile: true,
    ...options,
  });
  return { text: result.outputFiles[0].text, inputs: Object.keys(result.metafile.inputs) };
}

/** Runs an ES module file with Node in `cwd`; returns its stdout, failing on any stderr. */
function runModule(path, cwd) {
  const result = spawnSync(process.execPath, [path], { cwd, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

const EMIT_RMSNORM = `
import { ready } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { emitPtx, ptxTarget } from '@forge/ptx';
import { emitWgsl, wgslTarget } from '@forge/wgsl';
await ready();
const spec = getKernel('rmsnorm').spec;
const ptx = emitPtx(spec, {}, ptxTarget('sm_80'));
const wgsl = emitWgsl(spec, {}, wgslTarget([]));
export const result = { ptx: ptx.source, wgsl: wgsl.source, ptxKey: ptx.cacheKey, wgslKey: wgsl.cacheKey };
`;

describe('a browser bundle of @forge/ir + @forge/ptx + @forge/wgsl', () => {
  it('has no node: import and emits rmsnorm byte-identical to the goldens', async () => {
    const { text, inputs } = await bundle(EMIT_RMSNORM, { platform: 'browser' });
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    expect(text).not.toMatch(/["']node:[a-z_]+["']/);
    expect(text).not.toMatch(/\bprocess\.(env|cwd|versions)\b/);
    const directory = mkdtempSync(join(tmpdir(), 'forge-browser-bundle-'));
    const path = join(directory, 'bundle.mjs');
    writeFileSync(path, text);
    const { result } = await import(path);
    expect(result.ptx).toBe(golden('ptx/rmsnorm.sm_80.ptx'));
    expect(result.wgsl).toBe(golden('wgsl/rmsnorm.wgsl'));
  });

  it('of @forge/ir + @forge/wgsl alone: its size, minified and gzipped', async () => {
    const { text } = await bundle(
      `import { ready } from '@forge/ir';
       import { getKernel } from '@forge/ir/kernels';
       import { emitWgsl, wgslTarget } from '@forge/wgsl';
       await ready();
       export const source = emitWgsl(getKernel('rmsnorm').spec, {}, wgslTarget([])).source;`,
      { platform: 'browser', minify: true },
    );
    const gzipped = gzipSync(text).length;
    console.log(
      `browser bundle @forge/ir + @forge/wgsl: ${text.length} B minified, ${gzipped} B gzipped`,
    );
    expect(text.length).toBeGreaterThan(0);
  });

  it('keeps only what is imported (sideEffects: false)', async () => {
    const whole = await bundle(`export * from '@forge/ir';`, { platform: 'browser', minify: true });
    const one = await bundle(`export { canonicalJson } from '@forge/ir';`, {
      platform: 'browser',
      minify: true,
    });
    console.log(
      `@forge/ir: everything ${whole.text.length} B, canonicalJson alone ${one.text.length} B`,
    );
    expect(one.text.length).toBeLessThan(2_000);
    expect(whole.text.length).toBeGreaterThan(50 * one.text.length);
  });
});

describe('@forge/ptx bundled into an engine that has its own package.json', () => {
  it('names the real backend version in cacheKey, never the engine’s', async () => {
    const engine = mkdtempSync(join(tmpdir(), 'forge-engine-'));
    writeFileSync(
      join(engine, 'package.json'),
      JSON.stringify({ name: 'some-engine', version: '9.9.9', type: 'module' }),
    );
    const { text } = await bundle(
      `${EMIT_RMSNORM}
       import { PTX_BACKEND } from '@forge/ptx';
       console.log(JSON.stringify({ backend: PTX_BACKEND, key: result.ptxKey, same: result.ptx === ${JSON.stringify(golden('ptx/rmsnorm.sm_80.ptx'))} }));`,
      { platform: 'node' },
    );
    expect(text).not.toContain('package.json');
    writeFileSync(join(engine, 'engine.mjs'), text);
    const printed = JSON.parse(runModule(join(engine, 'engine.mjs'), engine));
    expect(printed.backend).toBe(`@forge/ptx@${versionOf('ptx')}`);
    expect(printed.same).toBe(true);

    // The same cache key as the workspace package computes in a process of its own.
    const reference = spawnSync(process.execPath, ['--input-type=module'], {
      cwd: toolsDirectory,
      input: `${EMIT_RMSNORM}\nconsole.log(result.ptxKey);\n`,
      encoding: 'utf8',
    });
    expect(reference.stdout.trim()).toBe(printed.key);
  });
});

describe('CommonJS', () => {
  it('require() loads every entry point on Node ≥ 20.19 and emits after ready()', () => {
    const entries = PUBLISHED_PACKAGES.flatMap(({ manifest }) =>
      Object.keys(manifest.exports).map((subpath) => `${manifest.name}${subpath.slice(1)}`),
    );
    expect(entries).toEqual(
      expect.arrayContaining([
        '@forge/ir',
        '@forge/ir/kernels',
        '@forge/ir/gguf',
        '@forge/ptx',
        '@forge/wgsl',
        '@forge/wgsl/runner',
      ]),
    );
    const script = `
      for (const entry of ${JSON.stringify(entries)}) require(entry);
      const ir = require('@forge/ir');
      const { getKernel } = require('@forge/ir/kernels');
      const { emitPtx, ptxTarget } = require('@forge/ptx');
      const { emitWgsl, wgslTarget } = require('@forge/wgsl');
      ir.ready().then(() => {
        const spec = getKernel('rmsnorm').spec;
        process.stdout.write(emitPtx(spec, {}, ptxTarget('sm_80')).source);
        process.stdout.write(emitWgsl(spec, {}, wgslTarget([])).source);
      });`;
    const result = spawnSync(process.execPath, ['--input-type=commonjs'], {
      cwd: toolsDirectory,
      input: script,
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(golden('ptx/rmsnorm.sm_80.ptx') + golden('wgsl/rmsnorm.wgsl'));
  });
});
