// Fails when a published package changed since its last release without a pending changeset
// that bumps it. Run as `pnpm check:changesets`; see USAGE below for the rules it applies.
//
// - Published packages: every packages/*/package.json that is not `"private": true`.
// - Last release of a package: the newest commit in HEAD's history where its package.json
//   `version` value changed (what `changeset version` commits); found with
//   `git log -G'"version"'` and confirmed by reading the JSON at the commit and its parent. If the
//   version never changed since the file was added, or a shallow clone lacks that commit, the
//   package counts as never released and is compared with the empty tree. A version that differs
//   only in the working tree is a release in progress (`changeset version` not yet committed): its
//   base is the working tree.
// - Changed since the release (base versus the working tree: commits, uncommitted edits and
//   untracked files that git does not ignore):
//     packages/X/src/** except tests and test data (*.test.ts, *.test-support.ts,
//       vitest.setup.ts, src/fixtures/**) and Markdown notes (none of these reach dist/);
//     packages/X/package.json when a field that shapes the published package differs
//       (PUBLISHED_FIELDS; not version, scripts, devDependencies or description);
//     golden/ptx/** for @forge/ptx and golden/wgsl/** for @forge/wgsl (the packages that emit
//       them), and golden/manifest.json entry by entry: an added, removed or changed entry counts
//       for the package of its target.kind (any other change in the manifest counts for both).
// - Bumped: a .changeset/*.md file in the working tree (not README.md) whose frontmatter gives
//   the package patch, minor or major, and whose path was not in the base commit (a changeset the
//   release left behind is not pending). config.json's fixed/linked/ignore are not modelled.
//
// Exit 0 when every changed package is bumped, 1 when one is not (each named on a MISSING line),
// 2 for a usage error or a directory outside any git repository.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** package.json fields whose change alters what a release of the package would publish. */
const PUBLISHED_FIELDS = [
  'name',
  'type',
  'main',
  'types',
  'exports',
  'bin',
  'files',
  'engines',
  'dependencies',
  'peerDependencies',
  'optionalDependencies',
];

/** Golden folders and the package that emits their files. */
const GOLDEN_FOLDERS = { 'golden/ptx/': '@forge/ptx', 'golden/wgsl/': '@forge/wgsl' };
/** golden/manifest.json `target.kind` and the package that emits entries of that kind. */
const GOLDEN_KINDS = { ptx: '@forge/ptx', wgsl: '@forge/wgsl' };
const MANIFEST = 'golden/manifest.json';
const BUMPS = ['patch', 'minor', 'major'];

const USAGE = `Usage: node tools/check-changesets.mjs [--cwd DIR]

Fails (exit 1) when a published package changed since its last release without a pending
changeset that bumps it, naming the package and a changed file.

  --cwd DIR   check the git repository that contains DIR (default: the current directory)
  -h, --help  print this help

Rules:
  published package  packages/*/package.json without "private": true
  last release       newest commit in HEAD's history that changed its package.json "version";
                     none (or not in a shallow clone): never released, compared with the empty
                     tree; a version changed only in the working tree: a release in progress
  changed            base vs working tree (committed, uncommitted and untracked, not ignored):
                     packages/X/src/** except *.test.ts, *.test-support.ts, vitest.setup.ts,
                     src/fixtures/** and *.md; golden/ptx/** for @forge/ptx, golden/wgsl/**
                     for @forge/wgsl, golden/manifest.json entries by their target.kind;
                     package.json when one of these fields differs:
                     ${PUBLISHED_FIELDS.slice(0, 6).join(', ')},
                     ${PUBLISHED_FIELDS.slice(6).join(', ')}
  bumped             a .changeset/*.md (not README.md) absent from the base commit whose
                     frontmatter gives the package patch, minor or major

Exit status: 0 all changed packages bumped, 1 some package is not, 2 usage error or not a git
repository.`;

class UsageError extends Error {}

function parseArguments(argv) {
  let cwd = process.cwd();
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '-h' || argument === '--help') return { help: true };
    if (argument === '--cwd') {
      if (index + 1 >= argv.length) throw new UsageError('--cwd needs a directory');
      cwd = argv[(index += 1)];
    } else if (argument.startsWith('--cwd=')) {
      cwd = argument.slice('--cwd='.length);
    } else if (argument.startsWith('-')) {
      throw new UsageError(`unknown option ${argument} (see --help)`);
    } else {
      throw new UsageError(`unexpected argument ${argument} (see --help)`);
    }
  }
  return { help: false, cwd: resolve(cwd) };
}

/** Runs git in `cwd`; returns stdout (a Buffer when `raw`), or null when git exits non-zero. */
function git(cwd, args, { input, raw = false } = {}) {
  const result = spawnSync('git', ['-c', 'core.quotePath=false', ...args], {
    cwd,
    input,
    ...(raw ? {} : { encoding: 'utf8' }),
    maxBuffer: 1 << 28,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (result.error) throw new UsageError(`cannot run git: ${result.error.message}`);
  return result.status === 0 ? result.stdout : null;
}

function gitOrThrow(cwd, args, options) {
  const output = git(cwd, args, options);
  if (output === null) throw new Error(`git ${args.join(' ')} failed in ${cwd}`);
  return output;
}

const splitZ = (text) => text.split('\0').filter((entry) => entry !== '');

/** The blobs named by `specs` (`rev:path`), read in one `git cat-file --batch`; null when absent. */
function readBlobs(root, specs) {
  if (specs.length === 0) return [];
  const output = gitOrThrow(root, ['cat-file', '--batch'], {
    input: `${specs.join('\n')}\n`,
    raw: true,
  });
  const blobs = [];
  let position = 0;
  for (let index = 0; index < specs.length; index += 1) {
    const end = output.indexOf(10, position);
    const header = output.subarray(position, end).toString('utf8').split(' ');
    position = end + 1;
    if (header.length !== 3) {
      blobs.push(null); // "<spec> missing" or "<spec> ambiguous"
      continue;
    }
    const size = Number(header[2]);
    blobs.push(header[1] === 'blob' ? output.subarray(position, position + size).toString() : null);
    position += size + 1;
  }
  return blobs;
}

function parseJson(text) {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** JSON text with object keys sorted, so that key order alone never counts as a change. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

function readWorkingFile(root, path) {
  const full = join(root, path);
  return existsSync(full) ? readFileSync(full, 'utf8') : null;
}

/**
 * The package's last release: `{ commit, version }`, `{ commit: 'worktree' }` for a version
 * changed only in the working tree, or `{ commit: null, reason }` when never released.
 */
function findRelease(root, manifestPath, headExists, shallow) {
  const never = {
    commit: null,
    reason: shallow ? 'no release found in this shallow clone' : null,
  };
  if (!headExists) return never;
  const [headText] = readBlobs(root, [`HEAD:${manifestPath}`]);
  const headVersion = parseJson(headText)?.version;
  const workingVersion = parseJson(readWorkingFile(root, manifestPath))?.version;
  if (headVersion !== undefined && workingVersion !== headVersion) {
    return { commit: 'worktree', version: workingVersion };
  }
  const log = gitOrThrow(root, [
    'log',
    '--format=%H',
    '--no-ext-diff',
    '--no-textconv',
    '-G"version"',
    'HEAD',
    '--',
    manifestPath,
  ]);
  const candidates = log.split('\n').filter((line) => line !== '');
  const blobs = readBlobs(
    root,
    candidates.flatMap((commit) => [`${commit}:${manifestPath}`, `${commit}^:${manifestPath}`]),
  );
  for (let index = 0; index < candidates.length; index += 1) {
    const version = parseJson(blobs[2 * index])?.version;
    const before = parseJson(blobs[2 * index + 1])?.version;
    // A parent without the file (or beyond a shallow boundary) is the package's first commit.
    if (version !== undefined && before !== undefined && version !== before) {
      return { commit: candidates[index], version };
    }
  }
  return never;
}

/** Is this path under packages/X/src/ part of what the package publishes? */
function isPublishedSource(pathInSrc) {
  if (pathInSrc === 'vitest.setup.ts' || pathInSrc.startsWith('fixtures/')) return false;
  const name = pathInSrc.slice(pathInSrc.lastIndexOf('/') + 1);
  return !/\.test\.ts$|\.test-support\.ts$|\.md$/i.test(name);
}

function goldenOwner(path) {
  for (const [folder, owner] of Object.entries(GOLDEN_FOLDERS)) {
    if (path.startsWith(folder)) return owner;
  }
  return null;
}

/** Package name → labels of the golden/manifest.json entries that differ between two texts. */
function manifestChanges(oldText, newText) {
  const owners = new Map();
  const add = (owner, label) => {
    if (!owners.has(owner)) owners.set(owner, []);
    owners.get(owner).push(label);
  };
  const before = parseJson(oldText);
  const after = parseJson(newText);
  const everyOwner = [...new Set(Object.values(GOLDEN_KINDS))];
  const entriesOf = (manifest) =>
    manifest !== null && typeof manifest === 'object' && Array.isArray(manifest.entries)
      ? manifest.entries
      : null;
  const oldEntries = before === null ? [] : entriesOf(before);
  const newEntries = after === null ? [] : entriesOf(after);
  if (oldEntries === null || newEntries === null) {
    for (const owner of everyOwner) add(owner, 'not a manifest with entries');
    return owners;
  }
  const rest = (manifest) => (manifest === null ? '' : canonical({ ...manifest, entries: null }));
  if (before !== null && after !== null && rest(before) !== rest(after)) {
    for (const owner of everyOwner) add(owner, 'fields outside entries');
  }
  const keyOf = (entry) => (typeof entry?.file === 'string' ? entry.file : canonical(entry));
  const index = (entries) => new Map(entries.map((entry) => [keyOf(entry), entry]));
  const oldByKey = index(oldEntries);
  const newByKey = index(newEntries);
  for (const key of new Set([...oldByKey.keys(), ...newByKey.keys()])) {
    const oldEntry = oldByKey.get(key);
    const newEntry = newByKey.get(key);
    if (oldEntry !== undefined && newEntry !== undefined) {
      if (canonical(oldEntry) === canonical(newEntry)) continue;
    }
    const kinds = new Set([oldEntry?.target?.kind, newEntry?.target?.kind]);
    kinds.delete(undefined);
    const entryOwners = [...kinds].map((kind) => GOLDEN_KINDS[kind]).filter(Boolean);
    for (const owner of entryOwners.length > 0 ? new Set(entryOwners) : everyOwner) {
      add(owner, key);
    }
  }
  return owners;
}

/** `{ file, bumps: Map<package, bump> }` for each changeset in the working tree. */
function readChangesets(root) {
  const directory = join(root, '.changeset');
  if (!existsSync(directory)) return [];
  return readdirSync(directory)
    .filter((name) => name.endsWith('.md') && name.toLowerCase() !== 'readme.md')
    .sort()
    .map((name) => {
      const text = readFileSync(join(directory, name), 'utf8');
      const bumps = new Map();
      const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
      for (const line of match === null ? [] : match[1].split(/\r?\n/)) {
        const entry = /^\s*(['"]?)([^'":\s]+)\1\s*:\s*(\w+)\s*$/.exec(line);
        if (entry !== null && BUMPS.includes(entry[3])) bumps.set(entry[2], entry[3]);
      }
      return { file: `.changeset/${name}`, bumps };
    });
}

function check(root) {
  const headExists = git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']) !== null;
  const shallow = git(root, ['rev-parse', '--is-shallow-repository'])?.trim() === 'true';
  const emptyTree = gitOrThrow(root, ['hash-object', '-t', 'tree', '--stdin'], {
    input: '',
  }).trim();
  const untracked = splitZ(
    gitOrThrow(root, [
      'ls-files',
      '-z',
      '--others',
      '--exclude-standard',
      '--',
      'packages',
      'golden',
    ]),
  );
  const changesets = readChangesets(root);

  const packagesDirectory = join(root, 'packages');
  const packages = (existsSync(packagesDirectory) ? readdirSync(packagesDirectory) : [])
    .sort()
    .map((directory) => ({ directory, manifestPath: `packages/${directory}/package.json` }))
    .filter(({ manifestPath }) => existsSync(join(root, manifestPath)))
    .map((pkg) => ({ ...pkg, manifest: parseJson(readWorkingFile(root, pkg.manifestPath)) }))
    .filter(({ manifest }) => manifest?.private !== true && typeof manifest?.name === 'string');

  // Everything below is computed once per distinct base commit.
  const perBase = new Map();
  const baseFacts = (base) => {
    if (perBase.has(base)) return perBase.get(base);
    const changed = new Set(
      splitZ(
        gitOrThrow(root, [
          'diff',
          '--name-only',
          '-z',
          '--no-renames',
          '--no-ext-diff',
          base,
          '--',
          'packages',
          'golden',
        ]),
      ),
    );
    for (const path of untracked) changed.add(path);
    const pendingAtBase = new Set(
      splitZ(gitOrThrow(root, ['ls-tree', '-r', '-z', '--name-only', base, '--', '.changeset/'])),
    );
    let manifestOwners = new Map();
    if (changed.has(MANIFEST)) {
      const [oldText] = base === emptyTree ? [null] : readBlobs(root, [`${base}:${MANIFEST}`]);
      manifestOwners = manifestChanges(oldText, readWorkingFile(root, MANIFEST));
    }
    const facts = { changed, pendingAtBase, manifestOwners };
    perBase.set(base, facts);
    return facts;
  };

  const lines = [];
  const missing = [];
  for (const { directory, manifestPath, manifest } of packages) {
    const name = manifest.name;
    const release = findRelease(root, manifestPath, headExists, shallow);
    if (release.commit === 'worktree') {
      lines.push(
        `ok ${name}: version ${release.version} not yet committed (a release in progress); nothing to check`,
      );
      continue;
    }
    const base = release.commit ?? emptyTree;
    const since =
      release.commit === null
        ? `(never released${release.reason === null ? '' : `: ${release.reason}`})`
        : `since release ${release.commit.slice(0, 7)} (${release.version})`;
    const { changed, pendingAtBase, manifestOwners } = baseFacts(base);

    const items = [];
    const srcPrefix = `packages/${directory}/src/`;
    for (const path of [...changed].sort()) {
      if (path.startsWith(srcPrefix) && isPublishedSource(path.slice(srcPrefix.length))) {
        items.push(path);
      }
    }
    if (changed.has(manifestPath)) {
      const [oldText] = base === emptyTree ? [null] : readBlobs(root, [`${base}:${manifestPath}`]);
      const before = parseJson(oldText);
      const fields = PUBLISHED_FIELDS.filter(
        (field) => before === null || canonical(before?.[field]) !== canonical(manifest[field]),
      );
      if (before === null) items.push(`${manifestPath} (new)`);
      else if (fields.length > 0) items.push(`${manifestPath} (${fields.join(', ')})`);
    }
    for (const path of [...changed].sort()) {
      if (path !== MANIFEST && goldenOwner(path) === name) items.push(path);
    }
    const entries = manifestOwners.get(name);
    if (entries !== undefined) {
      const shown = entries.slice(0, 3).join(', ');
      const more = entries.length > 3 ? ` and ${entries.length - 3} more` : '';
      items.push(`${MANIFEST} (${entries.length === 1 ? 'entry' : 'entries'} ${shown}${more})`);
    }

    if (items.length === 0) {
      lines.push(`ok ${name}: no changes ${since}`);
      continue;
    }
    const count = `${items.length} changed file${items.length === 1 ? '' : 's'} ${since}`;
    const bumping = changesets
      .filter(({ file, bumps }) => bumps.has(name) && !pendingAtBase.has(file))
      .map(({ file, bumps }) => ({ file, bump: bumps.get(name) }));
    if (bumping.length > 0) {
      const top = Math.max(...bumping.map(({ bump }) => BUMPS.indexOf(bump)));
      const first = bumping.find(({ bump }) => BUMPS.indexOf(bump) === top);
      const others = bumping.length > 1 ? ` and ${bumping.length - 1} more` : '';
      lines.push(`ok ${name}: ${count}, bumped ${BUMPS[top]} by ${first.file}${others}`);
    } else {
      const more = items.length > 1 ? ` and ${items.length - 1} more` : '';
      lines.push(
        `MISSING ${name}: ${items[0]}${more} changed ${since} with no changeset that bumps it; run \`pnpm changeset\``,
      );
      missing.push(name);
    }
  }
  lines.push(
    missing.length === 0
      ? `check:changesets: ${packages.length} published packages, every changed one has a changeset`
      : `check:changesets: ${missing.length} of ${packages.length} published packages changed without a changeset: ${missing.join(', ')}`,
  );
  return { lines, exitCode: missing.length === 0 ? 0 : 1 };
}

function main() {
  let options;
  try {
    options = parseArguments(process.argv.slice(2));
  } catch (error) {
    console.error(`check:changesets: ${error.message}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  if (!existsSync(options.cwd) || !statSync(options.cwd).isDirectory()) {
    console.error(`check:changesets: ${options.cwd} is not a directory`);
    return 2;
  }
  try {
    const root = git(options.cwd, ['rev-parse', '--show-toplevel'])?.trim();
    if (!root) {
      console.error(`check:changesets: ${options.cwd} is not inside a git repository`);
      return 2;
    }
    const { lines, exitCode } = check(root);
    for (const line of lines) console.log(line);
    return exitCode;
  } catch (error) {
    console.error(`check:changesets: ${error.message}`);
    return 2;
  }
}

process.exitCode = main();
