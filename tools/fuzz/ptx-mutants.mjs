// PTX fuzz cases: real PTX (the golden files) and hand-made hostile modules, mutated by byte
// flips, line splices, duplications, truncation, edge numbers, deep nesting, long lines and
// declaration bombs; each with the `forge sim` arguments that launch it. Every case replays from
// (seed, index).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../mulberry32.mjs';

const GOLDEN = fileURLToPath(new URL('../../golden/ptx/', import.meta.url));
const HEADER = '.version 8.0\n.target sm_90\n.address_size 64\n';

/** Largest mutant, in characters: parse time, not the simulator's limits, sets it. */
const MAX_CASE_CHARS = 8 * 2 ** 20;

/** A small deterministic generator (mulberry32) per case. */
export function random(seed, index) {
  const next = mulberry32(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index, 0xc2b2ae35));
  const int = (min, max) => min + Math.floor(next() * (max - min + 1));
  return {
    int,
    chance: (p) => next() < p,
    one: (options) => options[int(0, options.length - 1)],
    /** One of `[weight, value]` pairs, by weight. */
    weighted(pairs) {
      let roll = next() * pairs.reduce((sum, [weight]) => sum + weight, 0);
      for (const [weight, value] of pairs) if ((roll -= weight) < 0) return value;
      return pairs[pairs.length - 1][1];
    },
  };
}

const kernel = (body, params = '') =>
  `${HEADER}.visible .entry k(${params})\n{\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n${body}\nret;\n}\n`;

/** Hand-made hostile modules: each one of issue #26's shapes, at or near a limit. */
const HOSTILE = {
  'deep-nesting': kernel(`${'{'.repeat(1663)}\nadd.u32 %r1, %r1, 1;\n${'}'.repeat(1663)}`),
  'huge-registers': kernel('.reg .b32 %q<2000000000>;\nmov.u32 %q1999999999, 1;'),
  'huge-shared': kernel('.shared .align 16 .b8 s[49152];\nst.shared.u32 [s+49148], 1;'),
  'huge-local': kernel('.local .b8 l[524288];\nst.local.u32 [l+524284], 1;'),
  'long-line': kernel(`mov.u32 %r1, 1; ${'add.u32 %r1, %r1, 1; '.repeat(20000)}`),
  'huge-literal': kernel(`mov.u32 %r1, ${'1'.repeat(64)};`),
  'wide-vector': kernel(
    '.reg .b32 %v<1100>;\nmov.b64 {%v0, %v1}, 0;\nld.global.v4.u32 {%v0, %v1, %v2, %v3}, [0];',
  ),
  'repeated-labels': kernel(
    Array.from({ length: 500 }, (_, i) => `$L${i}:\n@%p1 bra $L${i};`).join('\n'),
  ),
  loop: kernel('$Lx:\nadd.u32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, 1000000;\n@%p1 bra $Lx;'),
  params: kernel(
    '.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nst.global.u32 [%rd2], 1;',
    '.param .u64 out, .param .u32 n, .param .f32 scale',
  ),
};

let seedsCache;
/** Every seed module by name: the golden PTX files and the hostile ones. */
export function seeds() {
  if (seedsCache !== undefined) return seedsCache;
  const golden = readdirSync(GOLDEN)
    .filter((file) => file.endsWith('.ptx'))
    .sort()
    .map((file) => [file, readFileSync(`${GOLDEN}${file}`, 'utf8')]);
  seedsCache = [...golden, ...Object.entries(HOSTILE).map(([name, text]) => [name, text])];
  return seedsCache;
}

const EDGE_NUMBERS = [
  '0', '1', '-1', '31', '32', '33', '255', '1023', '1024', '1025', '1663', '1664', '49152',
  '49153', '65536', '232449', '524289', '2147483647', '2147483648', '4294967295', '4294967296',
  '9007199254740993', '18446744073709551615', '18446744073709551616', '0xffffffffffffffff',
  '0x8000000000000000', '1099511627776', '1e308', '1.0e-400', '0f7FC00000', '0d7FF0000000000000',
  `1${'0'.repeat(400)}`,
]; // prettier-ignore

const BOMBS = [
  (r, n) => `.reg .b32 %z<${n}>;`,
  (r, n) => `.shared .b8 z${r.int(0, 9)}[${n}];`,
  (r, n) => `.local .align 8 .b8 z${r.int(0, 9)}[${n}];`,
  (r, n) => `.reg .pred %zp<${n}>;\n@%zp${Math.max(0, Number(n) - 1)} bra $Lz; $Lz:`,
  (r, n) => `.shared .align ${n} .b8 za[4];`,
  (r) => `mov.b32 %r1, {${Array.from({ length: r.int(2, 3000) }, () => '%r2').join(', ')}};`,
  (r) => `ld.global.v${r.one([8, 16, 1024])}.u32 {%r1, %r2}, [%r3];`,
];

/** Each mutation takes (lines, r, other) and returns new lines; `other` is a second seed. */
const MUTATIONS = {
  flip(lines, r) {
    const index = r.int(0, lines.length - 1);
    const line = lines[index] ?? '';
    const at = r.int(0, line.length);
    const chars = '{}[]();,.%@!<>|=+-_:"/*\\0123456789abcxyz \t\u0000\u00ff\u202e';
    const char = r.chance(0.8) ? r.one([...chars]) : String.fromCharCode(r.int(0, 0xffff));
    lines[index] = line.slice(0, at) + char + line.slice(at + (r.chance(0.5) ? 1 : 0));
    return lines;
  },
  splice(lines, r, other) {
    const from = r.int(0, other.length - 1);
    const run = other.slice(from, from + r.int(1, 40));
    lines.splice(r.int(0, lines.length), 0, ...run);
    return lines;
  },
  duplicate(lines, r) {
    const from = r.int(0, lines.length - 1);
    const run = lines.slice(from, from + r.int(1, 20));
    const times = r.one([2, 10, 100, 2000]);
    const copies = [];
    for (let n = 0; n < times && copies.length < 200_000; n++) copies.push(...run);
    lines.splice(from, 0, ...copies);
    return lines;
  },
  delete(lines, r) {
    lines.splice(r.int(0, lines.length - 1), r.int(1, 30));
    return lines;
  },
  truncate(lines, r) {
    const text = lines.join('\n');
    return text.slice(0, r.int(0, text.length)).split('\n');
  },
  number(lines, r) {
    for (let attempt = 0; attempt < 20; attempt++) {
      const index = r.int(0, lines.length - 1);
      const line = lines[index] ?? '';
      const numbers = [...line.matchAll(/\b(?:0[xXfFdD][0-9a-fA-F]+|\d+)\b/g)];
      if (numbers.length === 0) continue;
      const match = r.one(numbers);
      const at = match.index ?? 0;
      lines[index] = line.slice(0, at) + r.one(EDGE_NUMBERS) + line.slice(at + match[0].length);
      return lines;
    }
    return lines;
  },
  nest(lines, r) {
    const body = lines.findIndex((line) => line.trim() === '{');
    if (body < 0) return lines;
    const at = r.int(body + 1, lines.length - 1);
    const depth = r.one([2, 100, 1663, 1664, 20_000]);
    lines.splice(at, 0, '{'.repeat(depth));
    lines.splice(r.int(at + 1, lines.length), 0, '}'.repeat(depth));
    return lines;
  },
  long(lines, r) {
    const length = r.one([1000, 100_000, 2_000_000]);
    const piece = r.one(['a', '%r', '9', '{', '// ', '/*', '"', '.b32 ', 'add.u32 %r1, %r1, 1; ']);
    lines.splice(r.int(0, lines.length), 0, piece.repeat(Math.ceil(length / piece.length)));
    return lines;
  },
  bomb(lines, r) {
    const body = lines.findIndex((line) => line.trim() === '{');
    const at = body < 0 ? r.int(0, lines.length) : body + 1;
    const bomb = r.one(BOMBS);
    lines.splice(at, 0, bomb(r, r.one(EDGE_NUMBERS.filter((n) => /^\d+$/.test(n)))));
    return lines;
  },
  label(lines, r) {
    const at = r.int(0, lines.length);
    const name = r.one(['$L__BB0_1', '$Lz', 'k', '%r1', '_', 'x.y']);
    lines.splice(at, 0, ...Array.from({ length: r.one([1, 2, 1000]) }, () => `${name}:`));
    return lines;
  },
};

/** The params a module's entries take, as `forge sim --arg` values (small, so kernels end). */
function argumentsFor(text, r) {
  const args = [];
  const seen = new Set();
  for (const match of text.matchAll(/\.param\s+(?:\.align\s+\d+\s+)?\.(u64|u32|s32|f32|b32|u16|b64)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?([A-Za-z_$][\w$]*)/g)) {
    const [, type, name] = match;
    if (seen.has(name) || seen.size >= 32) continue;
    seen.add(name);
    if (type === 'u64' || type === 'b64') args.push(`${name}=zeros:${r.one([0, 64, 65536, 262144])}`);
    else if (type === 'f32') args.push(`${name}=f32:${r.one(['0', '1', '0.5', '-2'])}`);
    else args.push(`${name}=u32:${r.one([0, 1, 7, 32, 64, 256])}`);
  } // prettier-ignore
  return args;
}

/**
 * Case `index` of `seed`: a seed module, one to four mutations, and the `forge sim` arguments after
 * the file (entry, a small grid, a valid block, the params, a step budget).
 */
export function ptxCase(seed, index) {
  const r = random(seed, index);
  const all = seeds();
  const [name, original] = all[r.int(0, all.length - 1)];
  let lines = original.split('\n');
  const tags = [name.replace(/\.sm_\d+\.ptx$/, '')];
  // A fifth unmutated (real PTX runs), half with one mutation, the rest with two to four.
  const count = r.weighted([
    [2, 0],
    [5, 1],
    [3, r.int(2, 4)],
  ]);
  for (let n = 0; n < count; n++) {
    const mutation = r.one(Object.keys(MUTATIONS));
    const other = r.one(all)[1].split('\n');
    const mutated = MUTATIONS[mutation]([...lines], r, other);
    // A mutant past MAX_CASE_CHARS is dropped: the module-size limit has its own seed.
    if (mutated.reduce((sum, line) => sum + line.length + 1, 0) > MAX_CASE_CHARS) continue;
    lines = mutated;
    tags.push(mutation);
  }
  const text = lines.join('\n');
  const entry = /\.entry\s+([A-Za-z_$][\w$]*)/.exec(text)?.[1];
  const required = /\.reqntid\s+(\d+)/.exec(text)?.[1];
  const block =
    required !== undefined && Number(required) <= 1024 && Number(required) > 0 && r.chance(0.9)
      ? required
      : String(r.one([1, 32, 64, 128, 256]));
  const args = [
    ...(entry === undefined ? [] : ['--entry', entry]),
    '--grid', String(r.one([1, 1, 2, 3])),
    '--block', block,
    ...argumentsFor(text, r).flatMap((arg) => ['--arg', arg]),
    '--max-steps', '2000000',
    ...(r.chance(0.1) ? ['--dynamic-shared', String(r.one([0, 1024, 232448]))] : []),
  ]; // prettier-ignore
  return { index, name, tags, text, args };
}
