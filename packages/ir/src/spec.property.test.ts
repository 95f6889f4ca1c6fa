import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForgeError, ValidationError } from './errors.js';
import { canonicalJson, semanticHash } from './hash.js';
import { entryPointProblem, identifierProblem } from './identifiers.js';
import { interpret } from './interpreter/run.js';
import { CATALOG, getKernel } from './kernels/catalog.js';
import { resolveSchedule } from './schedule.js';
import type { KernelSpec, KnobBounds } from './spec.js';
import type { ElementArray } from './interpreter/memory.js';
import type { CatalogKernel, Shape } from './kernels/catalog-kernel.js';
import { makeCaseInputs } from './kernels/case-inputs.js';
import { Rng } from './kernels/random.js';
import { checkSpec, validateSpec } from './validate.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Path = readonly (string | number)[];

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const clone = <T extends Json>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const toJson = (spec: KernelSpec): JsonObject => JSON.parse(JSON.stringify(spec)) as JsonObject;

const SPECS = [...CATALOG.values()].map((kernel) => kernel.spec);

function accepts(kernel: CatalogKernel, shape: Shape): boolean {
  try {
    kernel.checkShape?.(shape);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Valid variations of catalog specs

const identifier = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,11}$/)
  .filter((name) => identifierProblem(name) === undefined);

const entryPointName = identifier.filter((name) => entryPointProblem(name) === undefined);

/** Every name a spec declares: buffers, params, shared arrays, knobs, scratch and locals (stages too). */
function declaredNames(spec: KernelSpec): string[] {
  const names = [
    ...spec.buffers.map((buffer) => buffer.name),
    ...spec.params.map((param) => param.name),
    ...spec.shared.map((array) => array.name),
    ...spec.schedule.map((knob) => knob.name),
    ...(spec.scratch ?? []).map((buffer) => buffer.name),
    ...(spec.stages ?? []).flatMap((stage) => stage.shared.map((array) => array.name)),
  ];
  const visit = (node: Json): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (isObject(node)) {
      const op = node['op'];
      if (
        (op === 'let' || op === 'for' || op === 'shuffle' || op === 'reduce') &&
        typeof node['name'] === 'string'
      ) {
        names.push(node['name']);
      }
      // load_vector and mma declare several locals at once.
      if ((op === 'load_vector' || op === 'mma') && Array.isArray(node['names']))
        for (const name of node['names']) if (typeof name === 'string') names.push(name);
      Object.values(node).forEach(visit);
    }
  };
  visit(toJson(spec)['body'] ?? []);
  visit(toJson(spec)['stages'] ?? []);
  // A stage may repeat a name of another dispatch (shared arrays, locals): renamed alike.
  return [...new Set(names)];
}

const renameInText = (text: string, mapping: ReadonlyMap<string, string>): string =>
  text.replace(/[A-Za-z_][A-Za-z0-9_]*/g, (name) => mapping.get(name) ?? name);

/** Renames every declared name and every reference to it (body, launch and shared sizes). */
function rename(spec: JsonObject, mapping: ReadonlyMap<string, string>): JsonObject {
  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      const renamable =
        (key === 'name' || key === 'memory') &&
        node['op'] !== 'builtin' &&
        typeof value === 'string';
      if (key === 'names' && Array.isArray(value)) {
        // load_vector declares several locals at once.
        result[key] = value.map((name) =>
          typeof name === 'string' ? (mapping.get(name) ?? name) : name,
        );
        continue;
      }
      result[key] = renamable ? (mapping.get(value) ?? value) : visit(value);
    }
    return result;
  };
  const renamed = visit(spec) as JsonObject;
  renameSizes(renamed, mapping);
  const stages = renamed['stages'];
  if (Array.isArray(stages))
    for (const stage of stages) if (isObject(stage)) renameSizes(stage, mapping);
  const scratch = renamed['scratch'];
  if (Array.isArray(scratch)) {
    for (const buffer of scratch) {
      if (isObject(buffer) && typeof buffer['length'] === 'string') {
        buffer['length'] = renameInText(buffer['length'], mapping);
      }
    }
  }
  return renamed;
}

/** Renames the references in a dispatch's launch geometry and shared array lengths. */
function renameSizes(renamed: JsonObject, mapping: ReadonlyMap<string, string>): void {
  const launch = renamed['launch'];
  if (isObject(launch)) {
    // Size expressions (a register cap may name knobs too).
    for (const key of ['workgroupSize', 'maxRegisters']) {
      const size = launch[key];
      if (typeof size === 'string') launch[key] = renameInText(size, mapping);
    }
    const grid = launch['grid'];
    if (Array.isArray(grid)) {
      launch['grid'] = grid.map((axis) =>
        typeof axis === 'string' ? renameInText(axis, mapping) : axis,
      );
    }
  }
  const shared = renamed['shared'];
  if (Array.isArray(shared)) {
    for (const array of shared) {
      if (isObject(array) && typeof array['length'] === 'string') {
        array['length'] = renameInText(array['length'], mapping);
      }
    }
  }
}

/** Values a knob's default may take on every target at once. */
function allowedDefaults(spec: KernelSpec, knob: number): number[] {
  const bounds = Object.values(spec.schedule[knob]?.bounds ?? {}).filter(
    (bound): bound is KnobBounds => bound !== undefined,
  );
  const low = Math.max(1, ...bounds.map((bound) => bound.min));
  const high = Math.min(...bounds.map((bound) => bound.max), 4096);
  const values: number[] = [];
  for (let value = low; value <= high; value++) {
    const ok = bounds.every(
      (bound) =>
        (bound.multipleOf === undefined || value % bound.multipleOf === 0) &&
        (bound.powerOfTwo !== true || (value & (value - 1)) === 0),
    );
    if (ok) values.push(value);
  }
  return values;
}

interface ConstantChoice {
  readonly u32: number;
  readonly i32: number;
  readonly f32: number;
  readonly f16: number;
  readonly bool: boolean;
}

const constantChoice: fc.Arbitrary<ConstantChoice> = fc.record({
  u32: fc.nat({ max: 0xffffffff }),
  i32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  // -0 is not JSON (it comes back as 0), so it cannot be part of a round-trippable spec.
  f32: fc.float({ noNaN: true, noDefaultInfinity: true }).map((value) => (value === 0 ? 0 : value)),
  f16: fc.float({ min: -65504, max: 65504, noNaN: true }).map((value) => (value === 0 ? 0 : value)),
  bool: fc.boolean(),
});

/**
 * Replaces the value of every `const` in the body; loop steps stay positive, and constant divisors
 * and shift amounts stay in range (the validator rejects constant faults, as Tint does).
 */
function varyConstants(body: Json, choices: readonly ConstantChoice[]): Json {
  let next = 0;
  const visit = (node: Json, parentKey: string | undefined): Json => {
    if (Array.isArray(node)) return node.map((item) => visit(item, undefined));
    if (!isObject(node)) return node;
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      const op = node['op'];
      if (key === 'args' && Array.isArray(value) && value.length === 2) {
        const role =
          op === 'shl' || op === 'shr' ? 'shift' : op === 'div' || op === 'rem' ? 'divisor' : key;
        result[key] = [visit(value[0] ?? null, key), visit(value[1] ?? null, role)];
      } else result[key] = visit(value, key);
    }
    const type = node['type'];
    if (node['op'] === 'const' && typeof type === 'string') {
      const choice = choices[next++ % choices.length];
      if (
        choice !== undefined &&
        (type === 'u32' || type === 'i32' || type === 'f32' || type === 'f16' || type === 'bool')
      ) {
        let value: number | boolean = choice[type];
        if (parentKey === 'step' && typeof value === 'number') value = Math.max(1, Math.abs(value));
        if (parentKey === 'shift' && typeof value === 'number') value = Math.abs(value) % 32;
        if (parentKey === 'divisor' && typeof value === 'number' && Number.isInteger(value))
          value = value === 0 ? 1 : value;
        result['value'] = value;
      }
    }
    return result;
  };
  return visit(body, undefined);
}

/** `of`, computed once per catalog spec (the specs are sealed). */
const memo = <T>(of: (spec: KernelSpec) => T): ((spec: KernelSpec) => T) => {
  const cache = new Map<KernelSpec, T>();
  return (spec) => {
    const value = cache.get(spec) ?? of(spec);
    cache.set(spec, value);
    return value;
  };
};
const namesOf = memo(declaredNames);
const baseCanonical = memo(canonicalJson);
const baseHash = memo(semanticHash);

interface Variation {
  readonly base: KernelSpec;
  readonly spec: JsonObject;
}

const printable = fc.stringMatching(/^[\x20-\x7e]{0,300}$/);
// Built once: building a regex arbitrary costs more than drawing from it (it was 5 s of this file).
const specId = fc.stringMatching(/^[a-z0-9]{1,8}(?:[-_][a-z0-9]{1,8}){0,3}$/);

const variation: fc.Arbitrary<Variation> = fc.constantFrom(...SPECS).chain((base) => {
  const names = namesOf(base);
  return fc
    .record({
      id: specId,
      semanticVersion: fc.integer({ min: 1, max: 1_000_000 }),
      entryPoint: entryPointName,
      description: printable,
      knobDescriptions: fc.array(printable, {
        minLength: base.schedule.length,
        maxLength: base.schedule.length,
      }),
      defaults: fc.array(fc.nat(), {
        minLength: base.schedule.length,
        maxLength: base.schedule.length,
      }),
      names: fc.uniqueArray(identifier, { minLength: names.length, maxLength: names.length }),
      // Binding 999 in group 0 would leave the params struct no binding below WebGPU's 1000.
      // Scratch buffers take the bindings after the buffers' (unique across both).
      bindings: fc.uniqueArray(fc.nat({ max: 998 }), {
        minLength: base.buffers.length + (base.scratch?.length ?? 0),
        maxLength: base.buffers.length + (base.scratch?.length ?? 0),
      }),
      groups: fc.array(fc.nat({ max: 3 }), {
        minLength: base.buffers.length,
        maxLength: base.buffers.length,
      }),
      constants: fc.array(constantChoice, { minLength: 1, maxLength: 16 }),
    })
    .map((choice) => {
      const mapping = new Map(names.map((name, index) => [name, choice.names[index] ?? name]));
      const spec = rename(toJson(base), mapping);
      spec['id'] = choice.id;
      spec['semanticVersion'] = choice.semanticVersion;
      spec['entryPoint'] = choice.entryPoint;
      spec['description'] = choice.description;
      const knobs = spec['schedule'];
      if (Array.isArray(knobs)) {
        knobs.forEach((knob, index) => {
          if (!isObject(knob)) return;
          const allowed = allowedDefaults(base, index);
          knob['description'] = choice.knobDescriptions[index] ?? '';
          knob['default'] = allowed[(choice.defaults[index] ?? 0) % allowed.length] ?? 1;
        });
      }
      const buffers = spec['buffers'];
      if (Array.isArray(buffers)) {
        buffers.forEach((buffer, index) => {
          if (!isObject(buffer)) return;
          buffer['binding'] = choice.bindings[index] ?? index;
          buffer['group'] = choice.groups[index] ?? 0;
        });
      }
      const scratch = spec['scratch'];
      if (Array.isArray(scratch)) {
        scratch.forEach((buffer, index) => {
          if (isObject(buffer))
            buffer['binding'] = choice.bindings[base.buffers.length + index] ?? 999 - index;
        });
      }
      spec['body'] = varyConstants(spec['body'] ?? [], choice.constants);
      return { base, spec };
    });
});

/** A copy with the keys of every object in a random order. */
function shuffleKeys(value: Json, rng: Rng): Json {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, rng));
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  for (let index = keys.length - 1; index > 0; index--) {
    const other = rng.integer(0, index);
    [keys[index], keys[other]] = [keys[other] as string, keys[index] as string];
  }
  const result: JsonObject = {};
  for (const key of keys) result[key] = shuffleKeys(value[key] ?? null, rng);
  return result;
}

// The properties below run hundreds of catalog-sized specs through validation (one takes 37–44 s
// alone on a 2-core machine, 61 s beside another test file): past the packages' 60 s default.
const PROPERTY_TIMEOUT = { timeout: 300_000 };
// `pnpm test` checks a tenth of each property's runs; `pnpm test:full` (FORGE_TESTS=full, CI) all.
const runs = (count: number): number =>
  process.env['FORGE_TESTS'] === 'full' ? count : Math.ceil(count / 10);

describe('random valid specs', PROPERTY_TIMEOUT, () => {
  it('are valid, round-trip through JSON with an unchanged semantic hash, and resolve their default schedule', () => {
    fc.assert(
      fc.property(variation, ({ base, spec }) => {
        expect(checkSpec(spec)).toEqual([]);
        const roundTripped: unknown = JSON.parse(JSON.stringify(spec));
        expect(roundTripped).toEqual(spec);
        const hash = semanticHash(spec);
        const canonical = canonicalJson(spec);
        expect(semanticHash(roundTripped)).toBe(hash);
        expect(JSON.parse(canonical)).toEqual(spec);
        const valid = validateSpec(spec);
        for (const target of ['ptx', 'wgsl'] as const) {
          const schedule = resolveSchedule(valid, target);
          expect(Object.values(schedule)).toEqual(valid.schedule.map((knob) => knob.default));
        }
        if (canonical !== baseCanonical(base)) expect(hash).not.toBe(baseHash(base));
      }),
      { numRuns: runs(250) },
    );
  });

  it('have a canonical JSON (and hash) independent of key order', () => {
    fc.assert(
      fc.property(variation, fc.integer(), ({ spec }, seed) => {
        const shuffled = shuffleKeys(spec, new Rng(seed));
        expect(shuffled).toEqual(spec);
        expect(canonicalJson(shuffled)).toBe(canonicalJson(spec));
        expect(semanticHash(shuffled)).toBe(semanticHash(spec));
        expect(checkSpec(shuffled)).toEqual([]);
      }),
      { numRuns: runs(150) },
    );
  });

  it('renaming every identifier does not change what a kernel computes', () => {
    const kernelArb = fc.constantFrom(...CATALOG.values());
    // One fresh name per declared name of the largest kernel, so no kept name can collide.
    const most = Math.max(
      ...[...CATALOG.values()].map((kernel) => declaredNames(kernel.spec).length),
    );
    const namesArb = fc.uniqueArray(identifier, { minLength: most, maxLength: most });
    const originals = new Map<CatalogKernel, ElementArray[]>();
    fc.assert(
      fc.property(kernelArb, namesArb, (kernel, fresh) => {
        const names = namesOf(kernel.spec);
        const mapping = new Map(names.map((name, index) => [name, fresh[index] ?? name]));
        const renamed = validateSpec(rename(toJson(kernel.spec), mapping));
        // A ragged shape, or the fewest whole blocks a kernel that takes only those accepts (32
        // keeps decode attention to 32 heads of 32: the interpreter runs it in well under a second).
        const shapes = [37, 32, 64].map((size) =>
          Object.fromEntries(kernel.shapeNames.map((name) => [name, name === 'rows' ? 2 : size])),
        );
        const shape = shapes.find((candidate) => accepts(kernel, candidate)) ?? kernel.defaultShape;
        const testCase = { name: 'rename', kernelId: kernel.spec.id, schedule: {}, shape };
        const run = (spec: KernelSpec, nameOf: (name: string) => string): ElementArray[] => {
          const inputs = makeCaseInputs(kernel, { ...testCase, seed: 1, magnitude: 1 });
          const buffers: Record<string, ElementArray> = {};
          for (const [name, data] of Object.entries(inputs)) buffers[nameOf(name)] = data;
          const params: Record<string, number> = {};
          for (const [name, value] of Object.entries(kernel.params(shape)))
            params[nameOf(name)] = value;
          interpret(spec, { params, buffers });
          return kernel.outputs.map((name) => buffers[nameOf(name)] ?? new Float32Array());
        };
        // The unrenamed kernel's outputs depend only on the kernel: computed once per kernel.
        const original = originals.get(kernel) ?? run(kernel.spec, (name) => name);
        originals.set(kernel, original);
        const result = run(renamed, (name) => mapping.get(name) ?? name);
        expect(result).toEqual(original);
        expect(original.some((output) => Array.from(output).some((value) => value !== 0))).toBe(
          true,
        );
      }),
      { numRuns: runs(20) },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Random corruptions of valid specs

/** Every path in a JSON tree, the root included, in document order. */
function allPaths(node: Json, prefix: Path = [], paths: Path[] = []): Path[] {
  paths.push(prefix);
  if (Array.isArray(node)) node.forEach((item, index) => allPaths(item, [...prefix, index], paths));
  else if (isObject(node))
    for (const [key, value] of Object.entries(node)) allPaths(value, [...prefix, key], paths);
  return paths;
}

/** How many paths a JSON tree has (its nodes, the root included), memoized per container. */
function pathCount(node: Json, counts: Map<Json, number>): number {
  if (!Array.isArray(node) && !isObject(node)) return 1;
  let count = counts.get(node);
  if (count === undefined) {
    count = 1;
    for (const child of Object.values(node)) count += pathCount(child, counts);
    counts.set(node, count);
  }
  return count;
}

/**
 * The `index`-th path of a JSON tree in document order (the root first, then each child's paths),
 * `index` taken modulo the number of paths: listing every path of a catalog-sized spec to pick one
 * was most of this file's time.
 */
function pathAt(root: Json, index: number): Path {
  const counts = new Map<Json, number>();
  let remaining = index % pathCount(root, counts);
  const path: (string | number)[] = [];
  let node = root;
  while (remaining > 0) {
    remaining -= 1;
    const entries: [string | number, Json][] = Array.isArray(node)
      ? node.map((item, position) => [position, item])
      : isObject(node)
        ? Object.entries(node)
        : [];
    for (const [key, child] of entries) {
      const count = pathCount(child, counts);
      if (remaining < count) {
        path.push(key);
        node = child;
        break;
      }
      remaining -= count;
    }
  }
  return path;
}

function nodeAt(root: Json, path: Path): Json | undefined {
  let node: Json | undefined = root;
  for (const key of path) {
    if (Array.isArray(node) && typeof key === 'number') node = node[key];
    else if (isObject(node) && typeof key === 'string')
      node = Object.hasOwn(node, key) ? node[key] : undefined;
    else return undefined;
  }
  return node;
}

/** Sets an own property, even for keys such as `__proto__`. */
function setOwn(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

type Corruption =
  | { readonly kind: 'replace'; readonly at: number; readonly value: Json }
  | { readonly kind: 'delete'; readonly at: number }
  | { readonly kind: 'add'; readonly at: number; readonly key: string; readonly value: Json };

function corrupt(root: Json, corruption: Corruption): Json {
  const path = pathAt(root, corruption.at);
  if (corruption.kind === 'replace' && path.length === 0) return corruption.value;
  if (corruption.kind === 'add') {
    const node = nodeAt(root, path);
    if (isObject(node)) setOwn(node, corruption.key, corruption.value);
    else if (Array.isArray(node)) node.push(corruption.value);
    return root;
  }
  const parent = nodeAt(root, path.slice(0, -1));
  const last = path[path.length - 1];
  if (Array.isArray(parent) && typeof last === 'number') {
    if (corruption.kind === 'delete') parent.splice(last, 1);
    else parent[last] = corruption.value;
  } else if (isObject(parent) && typeof last === 'string') {
    if (corruption.kind === 'delete') delete parent[last];
    else setOwn(parent, last, corruption.value);
  }
  return root;
}

/** Values that look like parts of a spec, so corruptions reach the deeper checks too. */
const plausible: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  'f32', 'f16', 'u32', 'i32', 'bool', 'read', 'read_write', 'uniform', 'ptx', 'wgsl',
  'let', 'assign', 'store', 'if', 'for', 'barrier', 'shuffle', 'reduce',
  'const', 'var', 'param', 'schedule', 'builtin', 'load', 'add', 'mul', 'div', 'rem', 'fma', 'select',
  'convert', 'bitcast', 'unpack_half', 'pack_half', 'not', 'neg', 'sqrt', 'shl', 'shr', 'eq', 'lt', 'and', 'min', 'max', 'xor',
  'down', 'up', 'idx', 'local_id', 'workgroup_id', 'lane_id', 'warp_id', 'x', 'y', 'z',
  'n', 'rows', 'n_embd', 'eps', 'scale', 'w', 'stride', 'i', 'row', 'sum', 'partial', 'workgroupSize',
  'ceil_div(n, 2)', 'n +', '', 'ret', '__x', 'a\nb', 'constructor', 'toString', '__proto__',
  0, 1, -1, 0.5, 32, 2 ** 31, 2 ** 32, 1e39, true, false, null, [], {},
  { op: 'const', type: 'u32', value: 1 },
  { op: 'const', type: 'f32', value: 1 },
  { op: 'const', type: 'bool', value: true },
  { op: 'builtin', type: 'u32', name: 'local_id' },
  { op: 'builtin', type: 'u32', name: 'workgroup_id', axis: 'x' },
  { op: 'var', type: 'u32', name: 'i' },
  { op: 'barrier' },
  { op: 'reduce', reduction: 'add', name: 'fresh', type: 'f32', value: { op: 'const', type: 'f32', value: 1 } },
); // prettier-ignore

const corruptValue: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: plausible, weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>, weight: 2 },
);

const corruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: corruptValue }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('add' as const),
    at: fc.nat(),
    key: fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('op', 'name', 'type', 'args', '__proto__', 'else', 'a\nb', '\u001b[2J'),
    ),
    value: corruptValue,
  }),
);

describe('random corruptions of valid specs', PROPERTY_TIMEOUT, () => {
  it('give a ValidationError with a path for every issue, never another exception', () => {
    const corruptions = runs(800);
    let rejected = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...SPECS),
        fc.array(corruption, { minLength: 1, maxLength: 3 }),
        (spec, corruptions) => {
          const broken = corruptions.reduce<Json>(
            (root, item) => corrupt(root, item),
            toJson(spec),
          );
          const issues = checkSpec(broken);
          for (const issue of issues) {
            expect(typeof issue.path).toBe('string');
            expect(typeof issue.message).toBe('string');
            expect(issue.message.length).toBeGreaterThan(0);
            // The CLI prints each issue on one line.
            expect(`${issue.path}: ${issue.message}`).not.toMatch(/[\r\n]/);
          }
          let valid: KernelSpec | undefined;
          try {
            valid = validateSpec(broken);
          } catch (error) {
            expect(error).toBeInstanceOf(ValidationError);
            const validation = error as ValidationError;
            expect(validation.issues.length).toBeGreaterThan(0);
            expect(validation.issues).toEqual(issues);
            for (const issue of validation.issues) expect(typeof issue.path).toBe('string');
            rejected++;
          }
          if (valid === undefined) return;
          expect(issues).toEqual([]);
          // A corruption that happens to be valid still hashes, and its schedule either resolves or
          // fails as a ForgeError, never as a TypeError.
          expect(semanticHash(valid)).toMatch(/^[0-9a-f]{64}$/);
          for (const target of ['ptx', 'wgsl'] as const) {
            try {
              resolveSchedule(valid, target);
            } catch (error) {
              expect(error).toBeInstanceOf(ForgeError);
            }
          }
        },
      ),
      { numRuns: corruptions },
    );
    // The generator mostly breaks specs (otherwise this test would prove little).
    expect(rejected).toBeGreaterThan(corruptions / 2);
  });

  it('checkSpec never throws on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const issues = checkSpec(value);
        expect(issues.length).toBeGreaterThan(0);
      }),
      { numRuns: runs(200) },
    );
  });

  it('a catalog spec with one field removed is always rejected', () => {
    const spec = toJson(getKernel('rmsnorm').spec);
    // A knob's bounds, and each target kind in them, are optional too.
    const optional = new Set(['multipleOf', 'powerOfTwo', 'bounds']);
    const removable = allPaths(spec).filter((path) => {
      const last = path[path.length - 1];
      return typeof last === 'string' && !optional.has(last) && path.at(-2) !== 'bounds';
    });
    let checked = 0;
    for (const path of removable) {
      const broken = clone(spec);
      const parent = nodeAt(broken, path.slice(0, -1));
      const last = path[path.length - 1];
      if (!isObject(parent) || typeof last !== 'string') continue;
      delete parent[last];
      expect(checkSpec(broken), path.join('.')).not.toEqual([]);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });
});
