import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { entryPoints, packageProblems, readTarball, workspaceRanges } from './published.mjs';

function temporaryDirectory() {
  const directory = mkdtempSync(join(tmpdir(), 'forge-rehearsal-test-'));
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

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

describe('packageProblems', () => {
  const versions = new Map([
    ['@forge/ir', '0.2.0'],
    ['@forge/wgsl', '0.2.0'],
  ]);
  const good = {
    name: '@forge/wgsl',
    version: '0.2.0',
    repository: { type: 'git', url: 'git+https://github.com/forge-kernels/forge.git' },
    engines: { node: '>=20.19' },
    main: './dist/index.js',
    dependencies: { '@forge/ir': '0.2.0' },
    peerDependencies: { webgpu: '0.6.2' },
    peerDependenciesMeta: { webgpu: { optional: true } },
  };
  const packageFiles = (...names) =>
    new Map(
      ['package.json', 'README.md', 'LICENSE', 'dist/index.js', ...names].map((name) => [
        `package/${name}`,
        Buffer.from(''),
      ]),
    );
  const problems = (packed, files = packageFiles()) =>
    packageProblems({
      name: packed.name,
      version: packed.version,
      manifest: packed,
      packed,
      files,
      versions,
    });

  it('passes a package with README.md, LICENSE, repository, engines and webgpu an optional peer', () => {
    expect(problems(good)).toEqual([]);
  });

  it('fails without README.md or LICENSE in the tarball, or repository or engines', () => {
    const files = new Map([...packageFiles()].filter(([path]) => !/README|LICENSE/.test(path)));
    const { repository, engines, ...bare } = good;
    expect(problems(bare, files)).toEqual([
      '@forge/wgsl: no README.md in the tarball',
      '@forge/wgsl: no LICENSE in the tarball',
      '@forge/wgsl: no "repository" in package.json',
      '@forge/wgsl: no "engines": { "node" } in package.json',
    ]);
  });

  it('fails on workspace: ranges and on ranges that miss the published version', () => {
    expect(problems({ ...good, dependencies: { '@forge/ir': 'workspace:*' } })).toEqual([
      '@forge/wgsl@0.2.0: registry manifest keeps dependencies @forge/ir@workspace:*',
      '@forge/wgsl@0.2.0: package.json in the tarball keeps dependencies @forge/ir@workspace:*',
    ]);
    expect(problems({ ...good, dependencies: { '@forge/ir': '^0.1.0' } })).toEqual([
      '@forge/wgsl: dependencies @forge/ir@^0.1.0 misses 0.2.0',
    ]);
  });

  it('fails when webgpu is a dependency or a peer that npm installs', () => {
    expect(problems({ ...good, dependencies: { webgpu: '0.6.2' } })).toEqual([
      '@forge/wgsl: registry manifest has webgpu in dependencies; it is an optional peer',
      '@forge/wgsl: package.json in the tarball has webgpu in dependencies; it is an optional peer',
    ]);
    expect(problems({ ...good, peerDependenciesMeta: {} })).toEqual([
      '@forge/wgsl: peer dependency webgpu is not optional, so npm installs it',
    ]);
  });

  it('fails on an entry point missing from the tarball', () => {
    expect(problems({ ...good, bin: { forge: './dist/bin.js' } })).toEqual([
      '@forge/wgsl: dist/bin.js (from package.json) is not in the tarball',
    ]);
  });
});
