// Every published package as a registry would receive it: the tarball `pnpm pack` makes (its
// prepack builds first), linted by publint --strict and @arethetypeswrong/cli's esm-only profile.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_PACKAGES, ROOT, readmeExample } from './workspace.mjs';

const toolsDirectory = fileURLToPath(new URL('.', import.meta.url));
const bin = (name) => join(toolsDirectory, 'node_modules', '.bin', name);
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');

/** Runs a command; returns its exit code and output instead of throwing. */
function run(command, args, options = {}) {
  // Plain text: under CI=true the linters colour their reports, which would split the matched text.
  const env = { ...process.env, NO_COLOR: '1' };
  const result = spawnSync(command, args, { encoding: 'utf8', env, ...options });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

const packs = mkdtempSync(join(tmpdir(), 'forge-packs-'));
/** Tarball path and file list per package directory name. */
const tarballs = new Map();

beforeAll(() => {
  for (const { directory, manifest } of PUBLISHED_PACKAGES) {
    const destination = join(packs, directory);
    mkdirSync(destination);
    execFileSync('pnpm', ['pack', '--pack-destination', destination], {
      cwd: join(ROOT, 'packages', directory),
      stdio: 'pipe',
    });
    const [file] = readdirSync(destination);
    const path = join(destination, file);
    const files = execFileSync('tar', ['tzf', path], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^package\//, ''));
    const packed = JSON.parse(
      execFileSync('tar', ['xzf', path, '-O', 'package/package.json'], { encoding: 'utf8' }),
    );
    tarballs.set(directory, { path, files, packed, bytes: statSync(path).size, manifest });
  }
}, 240_000);

describe.each(PUBLISHED_PACKAGES.map((entry) => [entry.manifest.name, entry.directory]))(
  '%s tarball',
  (name, directory) => {
    const tarball = () => tarballs.get(directory);

    it('holds the built entry points, README and LICENSE, and no build info, maps, sources or tests', () => {
      const { files, manifest } = tarball();
      expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']));
      for (const entry of Object.values(manifest.exports)) {
        expect(files).toContain(entry.default.replace(/^\.\//, ''));
        expect(files).toContain(entry.types.replace(/^\.\//, ''));
      }
      const unwanted = files.filter((file) =>
        /\.tsbuildinfo$|\.map$|^src\/|\.test\.|test-support|vitest/.test(file),
      );
      expect(unwanted).toEqual([]);
      console.log(`${name}: ${files.length} files, ${tarball().bytes} bytes packed`);
    });

    it('declares license, repository, engines and sideEffects, with no workspace: ranges left', () => {
      const { packed } = tarball();
      expect(packed.license).toBe('MIT');
      expect(packed.repository).toEqual({
        ...rootManifest.repository,
        directory: `packages/${directory}`,
      });
      expect(packed.engines).toEqual({ node: '>=20.19' });
      expect(packed.sideEffects).toEqual(directory === 'cli' ? ['./dist/bin.js'] : false);
      expect(tarball().manifest.scripts.prepack).toBe('pnpm run build');
      expect(JSON.stringify(packed)).not.toContain('workspace:');
      expect(readFileSync(join(ROOT, 'packages', directory, 'LICENSE'), 'utf8')).toBe(license);
    });

    it('passes publint --strict', () => {
      const result = run(bin('publint'), ['--strict', tarball().path]);
      expect(result.output).toContain('All good!');
      expect(result.code).toBe(0);
    });

    it('passes @arethetypeswrong/cli with the esm-only profile', () => {
      const result = run(bin('attw'), [tarball().path, '--profile', 'esm-only']);
      expect(result.code, result.output).toBe(0);
    });

    it("runs its README's example", () => {
      const example = readmeExample(directory);
      // The example imports packages by name, resolved from tools/ where every one is installed.
      const result = run(process.execPath, ['--input-type=module'], {
        cwd: toolsDirectory,
        input: example,
      });
      expect(result.output).not.toMatch(/Error/);
      expect(result.code).toBe(0);
    });
  },
);

describe('@forge/test-fixtures', () => {
  const fixtures = JSON.parse(
    readFileSync(join(ROOT, 'packages', 'test-fixtures', 'package.json'), 'utf8'),
  );

  it('is private, so it is never packed or published, and no published package needs it', () => {
    expect(fixtures.private).toBe(true);
    expect(PUBLISHED_PACKAGES.map(({ manifest }) => manifest.name)).not.toContain(fixtures.name);
    for (const { manifest } of PUBLISHED_PACKAGES)
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
        expect(Object.keys(manifest[field] ?? {}), `${manifest.name} ${field}`).not.toContain(
          fixtures.name,
        );
  });

  it('holds the test data @forge/ir no longer ships', () => {
    const { files } = tarballs.get('ir');
    expect(files.filter((file) => /^dist\/testing\//.test(file))).toEqual([]);
    const fixtureSources = readdirSync(join(ROOT, 'packages', 'test-fixtures', 'src'));
    expect(fixtureSources).toEqual(expect.arrayContaining(['op-zoo.ts', 'execution-cases.ts']));
  });
});

describe('the linters fail on a broken package', () => {
  const broken = mkdtempSync(join(tmpdir(), 'forge-broken-package-'));
  writeFileSync(
    join(broken, 'package.json'),
    JSON.stringify({
      name: 'broken',
      version: '1.0.0',
      type: 'module',
      exports: { '.': { types: './index.d.ts', default: './missing.js' } },
    }),
  );
  // An extensionless relative import in ESM types: node16 resolution cannot follow it.
  writeFileSync(join(broken, 'index.d.ts'), "export * from './other';\n");
  writeFileSync(join(broken, 'other.d.ts'), 'export declare const value: number;\n');

  it('publint --strict reports an export whose file is missing', () => {
    // publint's exit code stays 0 on errors; its report is what says "All good!" or not.
    const result = run(bin('publint'), ['--strict', broken]);
    expect(result.output).not.toContain('All good!');
    expect(result.output).toMatch(
      /pkg\.exports\["\."\]\.default is \.\/missing\.js but the file does not exist/,
    );
  });

  it('attw rejects types that node16 cannot resolve', () => {
    const result = run(bin('attw'), ['--pack', broken, '--profile', 'esm-only'], { cwd: broken });
    expect(result.code).not.toBe(0);
  });
});

describe('pnpm pack of an unbuilt package', () => {
  it('builds it first (prepack), so the tarball is never empty', () => {
    // A scratch copy of the repository layout holding @forge/ptx-sim (no Forge dependencies) and no dist/.
    const scratch = mkdtempSync(join(tmpdir(), 'forge-unbuilt-'));
    const packageDirectory = join(scratch, 'packages', 'ptx-sim');
    mkdirSync(join(scratch, 'tools'), { recursive: true });
    cpSync(join(ROOT, 'tsconfig.base.json'), join(scratch, 'tsconfig.base.json'));
    for (const script of ['write-build-info.mjs', 'workspace.mjs'])
      cpSync(join(ROOT, 'tools', script), join(scratch, 'tools', script));
    for (const item of ['src', 'package.json', 'tsconfig.json', 'README.md', 'LICENSE'])
      cpSync(join(ROOT, 'packages', 'ptx-sim', item), join(packageDirectory, item), {
        recursive: true,
        filter: (source) => !source.endsWith('build-info.ts'),
      });
    // corepack picks pnpm from the nearest package.json; the repository's own node_modules supply tsc.
    const manifest = JSON.parse(readFileSync(join(packageDirectory, 'package.json'), 'utf8'));
    manifest.packageManager = rootManifest.packageManager;
    writeFileSync(join(packageDirectory, 'package.json'), JSON.stringify(manifest, null, 2));
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    const out = join(scratch, 'out');
    const result = run('pnpm', ['pack', '--pack-destination', out], { cwd: packageDirectory });
    expect(result.code, result.output).toBe(0);
    const [tarball] = readdirSync(out);
    const files = execFileSync('tar', ['tzf', join(out, tarball)], { encoding: 'utf8' });
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/build-info.js');
  }, 120_000);
});
