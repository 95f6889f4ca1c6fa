// check-changesets.mjs on commits made in temporary clones: a small synthetic repository with the
// real layout (packages/*, golden/ptx, golden/wgsl, golden/manifest.json, .changeset), and a
// clone of this repository, which must pass as it stands.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_PACKAGES } from './workspace.mjs';

const script = fileURLToPath(new URL('check-changesets.mjs', import.meta.url));
const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));

// Commits work on a bare CI machine, and nothing reads or writes the user's git configuration.
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Forge Test',
  GIT_AUTHOR_EMAIL: 'forge-test@example.invalid',
  GIT_COMMITTER_NAME: 'Forge Test',
  GIT_COMMITTER_EMAIL: 'forge-test@example.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

const git = (cwd, ...args) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function write(root, path, text) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}
const read = (root, path) => readFileSync(join(root, path), 'utf8');
const remove = (root, path) => rmSync(join(root, path));
const writeJson = (root, path, value) => write(root, path, `${JSON.stringify(value, null, 2)}\n`);
const readJson = (root, path) => JSON.parse(read(root, path));

function commit(root, message) {
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '--no-verify', '-m', message);
  return git(root, 'rev-parse', '--short=7', 'HEAD').trim();
}

const changeset = (bumps, summary = 'A change.') =>
  `---\n${Object.entries(bumps)
    .map(([name, bump]) => `'${name}': ${bump}`)
    .join('\n')}\n---\n\n${summary}\n`;

/** The release `changeset version` would commit: new versions, every pending changeset gone. */
function release(root, versions) {
  for (const [directory, version] of Object.entries(versions)) {
    const path = `packages/${directory}/package.json`;
    writeJson(root, path, { ...readJson(root, path), version });
  }
  for (const name of git(root, 'ls-files', '.changeset').split('\n')) {
    if (name.endsWith('.md') && !name.endsWith('README.md')) remove(root, name);
  }
  return commit(root, 'Version packages');
}

function check(root, ...args) {
  const result = spawnSync(process.execPath, [script, ...args, ...(root ? ['--cwd', root] : [])], {
    env,
    encoding: 'utf8',
  });
  const lines = result.stdout.split('\n').filter((line) => line !== '');
  /** The line about one package. */
  const about = (name) => lines.find((line) => line.split(' ')[1] === `${name}:`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, lines, about };
}

const manifestEntry = (file, kind, sourceHash) => ({
  file,
  kernelId: 'k',
  semanticVersion: 1,
  target: kind === 'ptx' ? { kind, arch: 'sm_80', ptxVersion: '7.0' } : { kind, features: [] },
  schedule: { workgroupSize: 256 },
  semanticHash: 'aa',
  sourceHash,
});

let scratch;
let origin;
let counter = 0;

/** A fresh clone of the synthetic repository, at its release commit unless `at` says otherwise. */
function clone(at) {
  const root = join(scratch, `clone-${(counter += 1)}`);
  git(scratch, 'clone', '-q', origin, root);
  if (at !== undefined) git(root, 'reset', '-q', '--hard', at);
  return root;
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'forge-check-changesets-'));
  origin = join(scratch, 'origin');
  mkdirSync(origin);
  git(origin, 'init', '-q');
  git(origin, 'checkout', '-q', '-b', 'main');
  write(origin, '.gitignore', 'node_modules/\ndist/\npackages/*/src/build-info.ts\n');
  for (const [directory, dependencies] of [
    ['ir', {}],
    ['ptx', { '@forge/ir': 'workspace:*' }],
    ['wgsl', { '@forge/ir': 'workspace:*' }],
  ]) {
    writeJson(origin, `packages/${directory}/package.json`, {
      name: `@forge/${directory}`,
      version: '0.1.0',
      type: 'module',
      exports: { '.': './dist/index.js' },
      files: ['dist'],
      scripts: { test: 'vitest run' },
      dependencies,
    });
    write(origin, `packages/${directory}/src/index.ts`, `export const name = '${directory}';\n`);
    write(origin, `packages/${directory}/src/index.test.ts`, `// tests of ${directory}\n`);
    write(origin, `packages/${directory}/src/vitest.setup.ts`, '// setup\n');
  }
  writeJson(origin, 'packages/private-thing/package.json', {
    name: 'private-thing',
    private: true,
  });
  write(origin, 'packages/private-thing/src/index.ts', 'export {};\n');
  write(origin, 'golden/ptx/k.sm_80.ptx', '// ptx v1\n');
  write(origin, 'golden/wgsl/k.wgsl', '// wgsl v1\n');
  writeJson(origin, 'golden/manifest.json', {
    format: 1,
    entries: [
      manifestEntry('ptx/k.sm_80.ptx', 'ptx', 'p1'),
      manifestEntry('wgsl/k.wgsl', 'wgsl', 'w1'),
    ],
  });
  write(origin, '.changeset/README.md', '# Changesets\n');
  writeJson(origin, '.changeset/config.json', { baseBranch: 'main', ignore: [] });
  write(
    origin,
    '.changeset/first.md',
    changeset({ '@forge/ir': 'minor', '@forge/ptx': 'minor', '@forge/wgsl': 'minor' }),
  );
  commit(origin, 'First kernels');
  git(origin, 'tag', 'before-release');
  release(origin, { ir: '0.2.0', ptx: '0.2.0', wgsl: '0.2.0' });
});

afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

describe('check-changesets on a synthetic repository', () => {
  it('never released: pending changesets cover every package; without them each is missing', () => {
    const root = clone('before-release');
    const covered = check(root);
    expect(covered.status).toBe(0);
    expect(covered.about('@forge/ir')).toMatch(
      /^ok @forge\/ir: 2 changed files \(never released\), bumped minor by \.changeset\/first\.md$/,
    );
    // The private package is not published, so it is not checked.
    expect(covered.stdout).not.toContain('private-thing');

    remove(root, '.changeset/first.md');
    commit(root, 'Drop the changeset');
    const uncovered = check(root);
    expect(uncovered.status).toBe(1);
    for (const name of ['@forge/ir', '@forge/ptx', '@forge/wgsl']) {
      expect(uncovered.about(name)).toMatch(new RegExp(`^MISSING ${name}: .*never released`));
    }
    expect(uncovered.about('@forge/ptx')).toContain('packages/ptx/src/index.ts and 3 more changed');
    expect(uncovered.lines.at(-1)).toBe(
      'check:changesets: 3 of 3 published packages changed without a changeset: @forge/ir, @forge/ptx, @forge/wgsl',
    );
  });

  it('right after a release commit (versions bumped, changesets deleted) everything is clean', () => {
    const root = clone();
    const releaseCommit = git(root, 'rev-parse', '--short=7', 'HEAD').trim();
    const result = check(root);
    expect(result.status).toBe(0);
    expect(result.lines).toEqual([
      `ok @forge/ir: no changes since release ${releaseCommit} (0.2.0)`,
      `ok @forge/ptx: no changes since release ${releaseCommit} (0.2.0)`,
      `ok @forge/wgsl: no changes since release ${releaseCommit} (0.2.0)`,
      'check:changesets: 3 published packages, every changed one has a changeset',
    ]);
  });

  it('a source change without a changeset fails naming the package; a changeset bumping it passes', () => {
    const root = clone();
    write(root, 'packages/ir/src/index.ts', "export const name = 'ir, changed';\n");
    commit(root, 'Change ir');
    const missing = check(root);
    expect(missing.status).toBe(1);
    expect(missing.about('@forge/ir')).toMatch(
      /^MISSING @forge\/ir: packages\/ir\/src\/index\.ts changed since release [0-9a-f]{7} \(0\.2\.0\) with no changeset that bumps it; run `pnpm changeset`$/,
    );
    expect(missing.about('@forge/ptx')).toMatch(/^ok @forge\/ptx: no changes/);
    expect(missing.lines.at(-1)).toBe(
      'check:changesets: 1 of 3 published packages changed without a changeset: @forge/ir',
    );

    write(root, '.changeset/fix-ir.md', changeset({ '@forge/ir': 'patch' }));
    commit(root, 'Changeset for ir');
    const covered = check(root);
    expect(covered.status).toBe(0);
    expect(covered.about('@forge/ir')).toMatch(
      /^ok @forge\/ir: 1 changed file since release [0-9a-f]{7} \(0\.2\.0\), bumped patch by \.changeset\/fix-ir\.md$/,
    );
  });

  it('after a later release commit the package is clean again, and counts from that release', () => {
    const root = clone();
    write(root, 'packages/ir/src/index.ts', 'export const name = 2;\n');
    write(root, '.changeset/ir.md', changeset({ '@forge/ir': 'minor' }));
    commit(root, 'Change ir');
    const second = release(root, { ir: '0.3.0' });
    expect(check(root).about('@forge/ir')).toBe(
      `ok @forge/ir: no changes since release ${second} (0.3.0)`,
    );

    write(root, 'packages/ir/src/more.ts', 'export const more = 1;\n');
    commit(root, 'More ir');
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.about('@forge/ir')).toContain(
      `packages/ir/src/more.ts changed since release ${second} (0.3.0)`,
    );
  });

  it('a golden/ptx or golden/wgsl file names the package that emits it', () => {
    const root = clone();
    write(root, 'golden/ptx/k.sm_80.ptx', '// ptx v2\n');
    commit(root, 'New PTX');
    const ptx = check(root);
    expect(ptx.status).toBe(1);
    expect(ptx.about('@forge/ptx')).toMatch(
      /^MISSING @forge\/ptx: golden\/ptx\/k\.sm_80\.ptx changed/,
    );
    expect(ptx.about('@forge/wgsl')).toMatch(/^ok @forge\/wgsl: no changes/);
    expect(ptx.about('@forge/ir')).toMatch(/^ok @forge\/ir: no changes/);

    remove(root, 'golden/wgsl/k.wgsl');
    commit(root, 'Drop WGSL');
    expect(check(root).about('@forge/wgsl')).toMatch(
      /^MISSING @forge\/wgsl: golden\/wgsl\/k\.wgsl changed/,
    );
  });

  it('golden/manifest.json changes count entry by entry for the package of target.kind', () => {
    const root = clone();
    const manifest = readJson(root, 'golden/manifest.json');
    // Formatting and key order alone are no change.
    write(
      root,
      'golden/manifest.json',
      JSON.stringify({ entries: manifest.entries.map((entry) => ({ ...entry })), format: 1 }),
    );
    commit(root, 'Reformat the manifest');
    expect(check(root).status).toBe(0);

    manifest.entries[1].sourceHash = 'w2';
    writeJson(root, 'golden/manifest.json', manifest);
    commit(root, 'Change the WGSL entry');
    const wgsl = check(root);
    expect(wgsl.status).toBe(1);
    expect(wgsl.about('@forge/wgsl')).toMatch(
      /^MISSING @forge\/wgsl: golden\/manifest\.json \(entry wgsl\/k\.wgsl\) changed/,
    );
    expect(wgsl.about('@forge/ptx')).toMatch(/^ok @forge\/ptx: no changes/);

    manifest.entries.push(manifestEntry('ptx/k.sm_90.ptx', 'ptx', 'p9'));
    writeJson(root, 'golden/manifest.json', manifest);
    commit(root, 'Add a PTX entry');
    expect(check(root).about('@forge/ptx')).toMatch(
      /^MISSING @forge\/ptx: golden\/manifest\.json \(entry ptx\/k\.sm_90\.ptx\) changed/,
    );
  });

  it('tests, test support, test fixtures and notes under src/ need no changeset', () => {
    const root = clone();
    write(root, 'packages/ir/src/index.test.ts', '// more tests\n');
    write(root, 'packages/ir/src/cases.test-support.ts', 'export const cases = [];\n');
    write(root, 'packages/ptx/src/vitest.setup.ts', '// other setup\n');
    write(root, 'packages/wgsl/src/fixtures/case.wgsl', '// fixture\n');
    write(root, 'packages/wgsl/src/NOTES.md', '# Notes\n');
    commit(root, 'Tests only');
    const result = check(root);
    expect(result.status).toBe(0);
    for (const name of ['@forge/ir', '@forge/ptx', '@forge/wgsl']) {
      expect(result.about(name)).toMatch(new RegExp(`^ok ${name}: no changes since release`));
    }
  });

  it('package.json counts only for fields that shape the published package', () => {
    const root = clone();
    const path = 'packages/ptx/package.json';
    const pkg = readJson(root, path);
    writeJson(root, path, {
      ...pkg,
      description: 'PTX',
      scripts: { test: 'vitest run --reporter=dot' },
      devDependencies: { vitest: '4.1.12' },
    });
    commit(root, 'Scripts and dev dependencies');
    expect(check(root).status).toBe(0);

    writeJson(root, path, { ...readJson(root, path), dependencies: { '@forge/ir': '^0.2.0' } });
    commit(root, 'A dependency range');
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.about('@forge/ptx')).toMatch(
      /^MISSING @forge\/ptx: packages\/ptx\/package\.json \(dependencies\) changed/,
    );
  });

  it('a changeset that names another package, or does not bump, does not count', () => {
    const root = clone();
    write(root, 'packages/ir/src/index.ts', 'export const name = 3;\n');
    write(root, '.changeset/ptx-only.md', changeset({ '@forge/ptx': 'minor' }));
    write(root, '.changeset/none.md', changeset({ '@forge/ir': 'none' }));
    write(root, '.changeset/README.md', changeset({ '@forge/ir': 'major' }, 'Not a changeset.'));
    commit(root, 'Change ir, changeset for ptx');
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.about('@forge/ir')).toMatch(/^MISSING @forge\/ir: packages\/ir\/src\/index\.ts/);
    // A changeset for a package without changes is harmless.
    expect(result.about('@forge/ptx')).toMatch(/^ok @forge\/ptx: no changes/);
  });

  it('a changeset already present at the release does not count for the released package', () => {
    const root = clone();
    // Released with a changeset left behind (it was added in the release commit itself).
    write(root, '.changeset/stale.md', changeset({ '@forge/wgsl': 'minor' }));
    const wgslPath = 'packages/wgsl/package.json';
    writeJson(root, wgslPath, { ...readJson(root, wgslPath), version: '0.3.0' });
    commit(root, 'Version packages, leaving a changeset behind');
    write(root, 'packages/wgsl/src/index.ts', 'export const name = 4;\n');
    commit(root, 'Change wgsl');
    const stale = check(root);
    expect(stale.status).toBe(1);
    expect(stale.about('@forge/wgsl')).toMatch(
      /^MISSING @forge\/wgsl: packages\/wgsl\/src\/index\.ts changed since release [0-9a-f]{7} \(0\.3\.0\)/,
    );

    write(root, '.changeset/fresh.md', changeset({ '@forge/wgsl': 'patch' }));
    commit(root, 'Changeset for wgsl');
    expect(check(root).about('@forge/wgsl')).toMatch(/bumped patch by \.changeset\/fresh\.md$/);
  });

  it('sees uncommitted edits and untracked files, not ignored ones', () => {
    const root = clone();
    write(root, 'packages/ir/src/build-info.ts', 'export const BUILD_INFO = {};\n');
    write(root, 'packages/ir/dist/index.js', 'export {};\n');
    expect(check(root).status).toBe(0);

    write(root, 'packages/ir/src/index.ts', 'export const name = 5;\n');
    write(root, 'packages/ptx/src/new.ts', 'export const fresh = 1;\n');
    remove(root, 'golden/wgsl/k.wgsl');
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.about('@forge/ir')).toMatch(/^MISSING @forge\/ir: packages\/ir\/src\/index\.ts /);
    expect(result.about('@forge/ptx')).toMatch(
      /^MISSING @forge\/ptx: packages\/ptx\/src\/new\.ts /,
    );
    expect(result.about('@forge/wgsl')).toMatch(/^MISSING @forge\/wgsl: golden\/wgsl\/k\.wgsl /);

    // An untracked changeset counts too.
    write(
      root,
      '.changeset/wip.md',
      changeset({ '@forge/ir': 'patch', '@forge/ptx': 'minor', '@forge/wgsl': 'patch' }),
    );
    expect(check(root).status).toBe(0);
  });

  it('a `changeset version` run not yet committed is a release in progress', () => {
    const root = clone();
    write(root, 'packages/ir/src/index.ts', 'export const name = 6;\n');
    write(root, '.changeset/ir.md', changeset({ '@forge/ir': 'minor' }));
    commit(root, 'Change ir');
    const irPath = 'packages/ir/package.json';
    writeJson(root, irPath, { ...readJson(root, irPath), version: '0.3.0' });
    remove(root, '.changeset/ir.md');
    const result = check(root);
    expect(result.status).toBe(0);
    expect(result.about('@forge/ir')).toBe(
      'ok @forge/ir: version 0.3.0 not yet committed (a release in progress); nothing to check',
    );
  });

  it('a shallow clone without the release commit counts packages as never released, and says so', () => {
    const root = join(scratch, `shallow-${(counter += 1)}`);
    git(scratch, 'clone', '-q', '--depth', '1', `file://${origin}`, root);
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.about('@forge/ir')).toContain(
      '(never released: no release found in this shallow clone)',
    );
  });

  it('usage errors and a directory outside git exit 2 with one line', () => {
    const unknown = check(clone(), '--frobnicate');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe('check:changesets: unknown option --frobnicate (see --help)\n');
    expect(unknown.stdout).toBe('');

    const outside = mkdtempSync(join(tmpdir(), 'forge-not-git-'));
    try {
      const notGit = check(outside);
      expect(notGit.status).toBe(2);
      expect(notGit.stderr).toBe(`check:changesets: ${outside} is not inside a git repository\n`);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }

    const help = check(undefined, '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: node tools/check-changesets.mjs [--cwd DIR]');
  });
});

describe('check-changesets on this repository', () => {
  it('a clone of HEAD passes: every changed published package has a pending changeset', () => {
    const top = git(repositoryRoot, 'rev-parse', '--show-toplevel').trim();
    const root = join(scratch, 'forge');
    git(scratch, 'clone', '-q', top, root);
    const result = check(root);
    expect(result.stderr).toBe('');
    expect(result.status, result.stdout).toBe(0);
    expect(result.lines.filter((line) => line.startsWith('ok @forge/')).length).toBe(
      PUBLISHED_PACKAGES.length,
    );
  });
});
