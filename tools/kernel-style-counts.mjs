#!/usr/bin/env node
// Prints how the catalog kernels are written: casts, non-null assertions, `?? 0` fallbacks,
// names built by hand, the names builders go by, schedule ladders, and lines per family.
// Usage: node tools/kernel-style-counts.mjs [folder ...] (default: the IR's kernels and quant).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const folders = process.argv.slice(2);
const roots = folders.length > 0 ? folders : ['packages/ir/src/kernels', 'packages/ir/src/quant'];

/** Every non-test TypeScript file under `folder`. */
function sources(folder) {
  return readdirSync(join(root, folder)).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return /\.ts$/.test(name) && !/\.test(-support)?\.ts$|test-support/.test(name) ? [path] : [];
  });
}

// Families by file name, as the issue groups them.
const FAMILIES = [
  ['attention', /sdpa|kv-store/],
  ['wmma', /wmma/],
  ['gemv', /gemv|q6k-values|x-quantize/],
  ['norm', /rmsnorm/],
  ['rope', /rope/],
  ['rows', /get-rows|argmax|elementwise|affine/],
  ['quant', /quant\//],
];
const BUILDER_CALL =
  /\b([A-Za-z_]\w*)\.(let|if|for|store|storeVector|loadVector|load|barrier|shuffle|reduce|mma|assign|specialize|blockReduce)\(/g;
const NAMING_CALL = /\.(let|for|loadVector|shuffle|reduce|mma)\(\s*`[^`]*\$\{/g;

const totals = { casts: 0, nonNull: 0, fallbacks: 0, handNames: 0, ladders: 0, blocks: 0 };
const receivers = new Set();
const lines = new Map();
for (const path of roots.flatMap(sources)) {
  const text = readFileSync(join(root, path), 'utf8');
  const code = text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*\*)/.test(line) && !/^\s*import\b/.test(line))
    .join('\n');
  totals.casts += (code.match(/\bas (?!const\b)/g) ?? []).length;
  totals.nonNull += (code.match(/[\w)\]]!(?=[.[),;:\s}])/g) ?? []).length;
  totals.fallbacks += (code.match(/\?\? 0\b/g) ?? []).length;
  totals.handNames += (code.match(NAMING_CALL) ?? []).length;
  totals.handNames += (code.match(/\bfresh\(|vectorNames\(`[^`]*\$\{/g) ?? []).length;
  totals.ladders += (code.match(/\bswitchHeads\b|\bALL_HEADS\b/g) ?? []).length;
  totals.blocks += (code.match(/\.(if|for|specialize)\(/g) ?? []).length;
  for (const [, receiver] of code.matchAll(BUILDER_CALL))
    if (!['ir', 'Math', 'Object', 'console'].includes(receiver)) receivers.add(receiver);
  const name = relative(root, path);
  const family = FAMILIES.find(([, pattern]) => pattern.test(name))?.[0] ?? 'other';
  lines.set(family, (lines.get(family) ?? 0) + text.split('\n').length - 1);
}

console.log(`casts (as, not as const): ${totals.casts}`);
console.log(`non-null assertions (!): ${totals.nonNull}`);
console.log(`?? 0 fallbacks: ${totals.fallbacks}`);
console.log(
  `names built by hand (template names, fresh(), vectorNames templates): ${totals.handNames}`,
);
console.log(`schedule ladders (switchHeads, ALL_HEADS): ${totals.ladders}`);
console.log(`block openings (if, for, specialize): ${totals.blocks}`);
console.log(`names builders go by: ${receivers.size} (${[...receivers].sort().join(' ')})`);
for (const [family, count] of [...lines].sort()) console.log(`lines ${family}: ${count}`);
