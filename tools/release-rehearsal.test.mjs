// The release rehearsal's helpers. The rehearsal itself (registry, publish, npm install) is
// `pnpm release:rehearse`, run by CI; these tests stay fast and start no registry.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import * as ir from '@forge/ir';
import * as ptx from '@forge/ptx';
import * as ptxas from '@forge/ptx/ptxas';
import * as wgsl from '@forge/wgsl';
import {
  cleanEnvironment,
  consumerCheck,
  consumerScript,
  entryPoints,
  parseOptions,
  readTarball,
  rehearsalNpmrc,
  verdaccioConfig,
  waitForRegistry,
  withoutCredentials,
  workspaceRanges,
} from './release-rehearsal.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function temporaryDirectory() {
  const directory = mkdtempSync(join(tmpdir(), 'forge-rehearsal-test-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** An HTTP server on 127.0.0.1 answering /-/ping with the statuses given, then the last forever. */
async function pingServer(statuses) {
  let calls = 0;
  const server = createServer((request, response) => {
    const status =
      request.url === '/-/ping' ? statuses[Math.min(calls++, statuses.length - 1)] : 404;
    response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}/`, calls: () => calls };
}

describe('options', () => {
  it('knows --keep and --help, and refuses anything else', () => {
    expect(parseOptions([])).toEqual({ keep: false, help: false });
    expect(parseOptions(['--keep'])).toEqual({ keep: true, help: false });
    expect(() => parseOptions(['--fail-at=publish'])).toThrow(/unknown argument '--fail-at/);
  });
});

describe('verdaccioConfig', () => {
  const text = verdaccioConfig({ storage: '/tmp/x y/storage', htpasswd: '/tmp/x y/htpasswd' });

  it('keeps storage and users in the given paths, one user at most', () => {
    expect(text).toContain('storage: "/tmp/x y/storage"');
    expect(text).toContain('    file: "/tmp/x y/htpasswd"');
    expect(text).toContain('    max_users: 1');
  });

  it('has no uplink, so no @forge package is ever proxied from npmjs', () => {
    expect(text).toMatch(/^uplinks: \{\}$/m);
    expect(text).not.toMatch(/proxy:|registry\.npmjs\.org|url:/);
  });

  it('lets anyone read @forge/* and only a logged-in user publish it; no web UI, no audit', () => {
    expect(text).toContain(
      "  '@forge/*':\n    access: $all\n    publish: $authenticated\n    unpublish: $authenticated\n",
    );
    expect(text).toContain("  '**':\n    access: $all\nweb:");
    expect(text).toContain('web:\n  enable: false');
    expect(text).toContain('middlewares:\n  audit:\n    enabled: false');
  });
});

describe('waitForRegistry', () => {
  it('returns once /-/ping answers 200', async () => {
    const server = await pingServer([503, 503, 200]);
    await waitForRegistry(server.url, { timeoutMs: 5000, intervalMs: 10 });
    expect(server.calls()).toBe(3);
  });

  it('gives up after its timeout, saying what it last saw', async () => {
    const server = await pingServer([503]);
    await expect(waitForRegistry(server.url, { timeoutMs: 300, intervalMs: 20 })).rejects.toThrow(
      /did not answer \/-\/ping within 300 ms \(HTTP 503\)/,
    );
  });

  it('stops at once when the server process is gone', async () => {
    const server = await pingServer([503]);
    await expect(
      waitForRegistry(server.url, { timeoutMs: 5000, intervalMs: 10, alive: () => false }),
    ).rejects.toThrow(/exited before answering/);
  });

  it('stops when aborted', async () => {
    const server = await pingServer([503]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(
      waitForRegistry(server.url, { timeoutMs: 5000, intervalMs: 10, signal: controller.signal }),
    ).rejects.toThrow('stop');
  });
});

describe('readTarball', () => {
  it('reads what tar packs, long names included', () => {
    const directory = temporaryDirectory();
    const long = `dist/${'deep/'.repeat(30)}index.js`;
    mkdirSync(join(directory, 'package', ...long.split('/').slice(0, -1)), { recursive: true });
    writeFileSync(join(directory, 'package', 'package.json'), '{"name":"@forge/x"}');
    writeFileSync(join(directory, 'package', long), 'export {};\n');
    const tarball = join(directory, 'x.tgz');
    const packed = spawnSync('tar', ['-czf', tarball, '-C', directory, 'package']);
    expect(packed.status).toBe(0);
    const files = readTarball(readFileSync(tarball));
    expect([...files.keys()].sort()).toEqual([`package/${long}`, 'package/package.json']);
    expect(files.get('package/package.json').toString()).toBe('{"name":"@forge/x"}');
    expect(files.get(`package/${long}`).toString()).toBe('export {};\n');
  });
});

describe('manifest checks', () => {
  it('lists every entry point: main, types, bin and nested exports, wildcards left out', () => {
    expect(
      entryPoints({
        main: './dist/index.js',
        types: './dist/index.d.ts',
        bin: { forge: './dist/bin.js' },
        exports: {
          '.': { types: './dist/index.d.ts', default: './dist/index.js' },
          './runner': { types: './dist/runner/index.d.ts', default: './dist/runner/index.js' },
          './data/*': './dist/data/*.js',
        },
      }),
    ).toEqual([
      'dist/bin.js',
      'dist/index.d.ts',
      'dist/index.js',
      'dist/runner/index.d.ts',
      'dist/runner/index.js',
    ]);
  });

  it('finds workspace: ranges in every dependency field', () => {
    expect(
      workspaceRanges({
        dependencies: { '@forge/ir': 'workspace:*', 'hash-wasm': '4.13.0' },
        peerDependencies: { webgpu: '0.6.2' },
        devDependencies: { '@forge/ptx-sim': 'workspace:^' },
      }),
    ).toEqual(['dependencies @forge/ir@workspace:*', 'devDependencies @forge/ptx-sim@workspace:^']);
    expect(workspaceRanges({ dependencies: { '@forge/ir': '0.2.0' } })).toEqual([]);
  });
});

describe('cleanEnvironment', () => {
  const path = ['/usr/bin', join(root, 'node_modules', '.bin'), '/opt/bin'].join(':');

  it('drops what pnpm run adds, scoped registry overrides and the checkout on PATH', () => {
    const environment = cleanEnvironment({
      PATH: path,
      HOME: '/root',
      NPM_CONFIG_REGISTRY: 'https://mirror.example/',
      'npm_config_@forge:registry': 'https://registry.npmjs.org/',
      'NPM_CONFIG_@FORGE:REGISTRY': 'https://registry.npmjs.org/',
      npm_lifecycle_event: 'release:rehearse',
      npm_package_name: 'forge-monorepo',
      npm_config_registry: 'https://registry.npmjs.org/',
      npm_config_reporter: 'silent',
      PNPM_SCRIPT_SRC_DIR: root,
      INIT_CWD: root,
    });
    expect(environment).toEqual({
      PATH: '/usr/bin:/opt/bin',
      HOME: '/root',
      NPM_CONFIG_REGISTRY: 'https://mirror.example/',
    });
  });

  it("keeps the caller's npm_config_* when not started by a package manager script", () => {
    expect(
      cleanEnvironment({ PATH: '/usr/bin', npm_config_registry: 'https://m.example/' }),
    ).toEqual({ PATH: '/usr/bin', npm_config_registry: 'https://m.example/' });
  });
});

describe('credentials and registries in the scratch copy', () => {
  it("keeps the checkout's .npmrc settings but no registry or credential line", () => {
    const { kept, dropped } = rehearsalNpmrc(
      [
        '# comment',
        'reporter=silent',
        'registry=https://mirror.example/',
        '@forge:registry = https://registry.npmjs.org/',
        '//registry.npmjs.org/:_authToken=${NPM_TOKEN}',
      ].join('\n'),
    );
    expect(kept).toBe('# comment\nreporter=silent\n');
    expect(dropped).toEqual(['registry', '@forge:registry', '//registry.npmjs.org/:<auth>']);
  });

  it('drops token variables from the publishing environment', () => {
    expect(
      withoutCredentials({
        HOME: '/root',
        NPM_TOKEN: 'x',
        NODE_AUTH_TOKEN: 'x',
        'npm_config_//registry.npmjs.org/:_authToken': 'x',
      }),
    ).toEqual({ HOME: '/root' });
  });
});

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
  const modules = { ir, ptx, ptxas, wgsl, readFileSync };

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
    const directory = temporaryDirectory();
    for (const [kind, file] of [
      ['esm', 'check.mjs'],
      ['cjs', 'check.cjs'],
    ]) {
      writeFileSync(join(directory, file), consumerScript(kind));
      const checked = spawnSync(process.execPath, ['--check', join(directory, file)], {
        encoding: 'utf8',
      });
      expect(checked.stderr).toBe('');
      expect(checked.status).toBe(0);
    }
  });
});
