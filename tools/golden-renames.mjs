#!/usr/bin/env node
// Whether the golden files differ from a git revision by names alone: for each changed file, the
// two texts must match token for token, identifiers through one consistent renaming (a bijection),
// everything else exactly. Prints each changed file's renames; exits 1 if any differs otherwise.
// Usage: node tools/golden-renames.mjs [revision] (default HEAD).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const revision = process.argv[2] ?? 'HEAD';
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
  const a = old.match(TOKEN) ?? [];
  const b = now.match(TOKEN) ?? [];
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

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = 0;
  let same = 0;
  for (const folder of ['golden/ptx', 'golden/wgsl']) {
    if (!existsSync(join(root, folder))) continue;
    for (const file of readdirSync(join(root, folder)).sort()) {
      const path = `${folder}/${file}`;
      const old = before(path);
      const now = readFileSync(join(root, path), 'utf8');
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
        const shown = result.renames.map(([x, y]) => `${x}->${y}`);
        console.log(`${path}: names only, ${shown.length} renamed: ${shown.join(' ')}`);
      }
    }
  }
  console.log(`golden-renames vs ${revision}: ${same} identical, ${failed} differ beyond names`);
  process.exit(failed === 0 ? 0 : 1);
}
