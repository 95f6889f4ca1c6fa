#!/usr/bin/env node
// Whether the golden files differ from a git revision by names alone: for each changed file, the
// two texts must match token for token, identifiers through one consistent renaming (a bijection),
// everything else exactly. Prints each changed file's renames; exits 1 if any differs otherwise.
// A `semantic hash` line may differ (renaming a local changes the spec's hash).
//   node tools/golden-renames.mjs [revision]      golden/ against a revision (default HEAD)
//   node tools/golden-renames.mjs --dirs OLD NEW  two trees of `tools/emit-all.mjs` output
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dirs = process.argv[2] === '--dirs' ? process.argv.slice(3, 5) : undefined;
const revision = dirs === undefined ? (process.argv[2] ?? 'HEAD') : undefined;
const HASH_LINE = /semantic hash [0-9a-f]{64}/g;
const TOKEN = /[A-Za-z_][A-Za-z0-9_]*|[0-9]+|\s+|./g;
const IDENTIFIER = /^[A-Za-z_]/;

/** The file at `revision`, or undefined where it did not exist. */
function before(path) {
  try {
    return execFileSync('git', ['show', `${revision}:${path}`], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
}

/** The renames taking `old` to `now`, or the first line where they differ otherwise. */
export function renamesBetween(old, now) {
  const a = old.replace(HASH_LINE, 'semantic hash').match(TOKEN) ?? [];
  const b = now.replace(HASH_LINE, 'semantic hash').match(TOKEN) ?? [];
  const forward = new Map();
  const backward = new Map();
  let line = 1;
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const [x, y] = [a[index], b[index]];
    if (x === undefined || y === undefined) return { line };
    if (IDENTIFIER.test(x) && IDENTIFIER.test(y)) {
      if ((forward.get(x) ?? y) !== y || (backward.get(y) ?? x) !== x) return { line };
      forward.set(x, y);
      backward.set(y, x);
    } else if (x !== y) return { line };
    line += (x.match(/\n/g) ?? []).length;
  }
  return { renames: [...forward].filter(([x, y]) => x !== y) };
}

/** Every file under `folder`, as paths relative to it. */
function files(folder, prefix = '') {
  return readdirSync(join(folder, prefix))
    .sort()
    .flatMap((name) =>
      statSync(join(folder, prefix, name)).isDirectory()
        ? files(folder, join(prefix, name))
        : [join(prefix, name)],
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = 0;
  let same = 0;
  let renamed = 0;
  const pairs =
    dirs === undefined
      ? ['golden/ptx', 'golden/wgsl']
          .filter((folder) => existsSync(join(root, folder)))
          .flatMap((folder) => files(join(root, folder)).map((file) => join(folder, file)))
          .map((path) => [path, before(path), readFileSync(join(root, path), 'utf8')])
      : files(dirs[1]).map((file) => [
          file,
          existsSync(join(dirs[0], file)) ? readFileSync(join(dirs[0], file), 'utf8') : undefined,
          readFileSync(join(dirs[1], file), 'utf8'),
        ]);
  for (const [path, old, now] of pairs) {
    if (old === now) {
      same++;
      continue;
    }
    if (old === undefined) {
      console.log(`${path}: new`);
      continue;
    }
    const result = renamesBetween(old, now);
    if (result.renames === undefined) {
      failed++;
      console.log(`${path}: DIFFERS beyond names from line ${result.line}`);
    } else {
      renamed++;
      const shown = result.renames.map(([x, y]) => `${x}->${y}`);
      console.log(`${path}: names only, ${shown.length} renamed: ${shown.join(' ')}`);
    }
  }
  const against = dirs === undefined ? revision : dirs[0];
  console.log(
    `golden-renames vs ${against}: ${same} identical, ${renamed} names only, ${failed} differ beyond names`,
  );
  process.exit(failed === 0 ? 0 : 1);
}
