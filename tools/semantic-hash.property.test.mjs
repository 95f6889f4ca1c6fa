// Issue #10, point 2: a cache keyed on semanticHash or cacheKey must never serve the wrong kernel.
// Specs and variants of them (zero's sign flipped, numbers spelled differently, keys reordered,
// sub-objects shared, undefined fields added, defaults given explicitly) are emitted on every target;
// whenever two share a semanticHash their outcomes are equal on every target, and whenever two
// shaders share a cacheKey their sources are equal.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ForgeError, canonicalJson, ready, semanticHash } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { OP_ZOO } from '@forge/test-fixtures';
import { PTX_ARCHS, emitPtx, ptxTarget } from '@forge/ptx';
import { emitWgsl, wgslTarget } from '@forge/wgsl';

const TARGETS = [
  ...PTX_ARCHS.map((arch) => ({
    name: arch,
    emit: (spec, schedule) => emitPtx(spec, schedule, ptxTarget(arch)),
  })),
  ...[[], ['f16'], ['subgroups'], ['f16', 'subgroups']].map((features) => ({
    name: `wgsl[${features.join(',')}]`,
    emit: (spec, schedule) => emitWgsl(spec, schedule, wgslTarget(features)),
  })),
];

// structuredClone keeps -0, which a JSON round trip would turn into 0.
const json = (value) => structuredClone(value);
const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every `const` node of a JSON tree, in document order. */
function constants(node, found = []) {
  if (Array.isArray(node)) node.forEach((item) => constants(item, found));
  else if (isObject(node)) {
    if (node.op === 'const') found.push(node);
    Object.values(node).forEach((child) => constants(child, found));
  }
  return found;
}

const SPECIAL = [0, -0, 1, -1, 0.5, -0.5, 3, 65504, 1e-8, 2 ** 31 - 1];

/** Sets the numeric constants of a copy of `base` from `choices` (loop steps stay positive). */
function withConstants(base, choices) {
  const spec = json(base);
  const steps = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (isObject(node)) {
      if (node.op === 'for') steps.add(node.step);
      Object.values(node).forEach(visit);
    }
  };
  visit(spec.body);
  constants(spec.body).forEach((node, index) => {
    const choice = choices[index % choices.length];
    if (typeof node.value !== 'number' || steps.has(node) || choice === undefined) return;
    const value = choice.special ? SPECIAL[choice.index % SPECIAL.length] : choice.value;
    if (node.type === 'f32' || node.type === 'f16') node.value = value;
    else if (Number.isInteger(value) && (node.type === 'i32' || value >= 0)) node.value = value;
  });
  return spec;
}

/** The spec with the sign of every `which`-th zero constant flipped; undefined when it has none. */
function flipZeros(spec, which) {
  const copy = json(spec);
  const zeros = constants(copy.body).filter((node) => node.value === 0);
  if (zeros.length === 0) return undefined;
  zeros.forEach((node, index) => {
    if (index % which === 0) node.value = Object.is(node.value, -0) ? 0 : -0;
  });
  return copy;
}

// JSON.stringify writes -0 as 0, so the variants below are built from a -0-aware writer.
function respell(value, seed) {
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return seed % 2 === 0 ? '-0' : '-0.0e0';
    if (Number.isInteger(value))
      return seed % 3 === 0 ? `${value}.0` : seed % 3 === 1 ? `${value}e0` : `${value}`;
    return seed % 2 === 0 ? value.toExponential() : String(value);
  }
  if (Array.isArray(value))
    return `[${value.map((item, index) => respell(item, seed + index)).join(', ')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value);
    // Rotating by the seed reorders the keys of every object.
    const rotated = keys.map((_, index) => keys[(index + seed) % keys.length]);
    return `{ ${rotated.map((key, index) => `${JSON.stringify(key)}: ${respell(value[key], seed + index)}`).join(', ')} }`;
  }
  return JSON.stringify(value);
}

/** Structurally equal sub-objects made one object (a DAG), with an undefined field on each. */
function shareAndPad(spec) {
  const seen = new Map();
  const visit = (node) => {
    if (!isObject(node) && !Array.isArray(node)) return node;
    const copy = Array.isArray(node)
      ? node.map(visit)
      : Object.fromEntries(Object.entries(node).map(([key, child]) => [key, visit(child)]));
    if (!Array.isArray(copy)) copy.padding = undefined;
    const key = canonicalJson(copy);
    if (!seen.has(key)) seen.set(key, copy);
    return seen.get(key);
  };
  return visit(spec);
}

/** Variants that must hash alike, and the zero-flipped ones that may not. */
function family(spec, seed) {
  const flipped = flipZeros(spec, 1 + (seed % 3));
  const equivalents = (value) => [value, JSON.parse(respell(value, seed)), shareAndPad(value)];
  return [...equivalents(spec), ...(flipped === undefined ? [] : equivalents(flipped))];
}

const outcomes = new Map(); // semanticHash -> target -> outcome
const sources = new Map(); // cacheKey -> source
let checkedPairs = 0;
let distinctZeroSigns = 0;
let emitted = 0;
let rejected = 0;

function outcome(spec, schedule, target) {
  try {
    const shader = target.emit(spec, schedule);
    const known = sources.get(shader.cacheKey);
    if (known !== undefined) expect(shader.source, `cacheKey ${shader.cacheKey}`).toBe(known);
    sources.set(shader.cacheKey, shader.source);
    emitted += 1;
    return shader.source;
  } catch (error) {
    // A rejection is an outcome to compare too; a failed expectation is not.
    if (!(error instanceof ForgeError)) throw error;
    rejected += 1;
    return `${error.name}: ${error.message}`;
  }
}

function check(specs) {
  const hashes = specs.map((spec) => semanticHash(spec));
  specs.forEach((spec, index) => {
    const defaults = Object.fromEntries(
      json(spec).schedule?.map((knob) => [knob.name, knob.default]) ?? [],
    );
    const byTarget = outcomes.get(hashes[index]) ?? new Map();
    for (const target of TARGETS) {
      // An empty override and the defaults spelled out resolve to one schedule, one cache key.
      for (const schedule of index === 0 ? [{}, defaults] : [{}]) {
        const result = outcome(spec, schedule, target);
        const known = byTarget.get(target.name);
        if (known !== undefined) {
          checkedPairs += 1;
          expect(result, `${target.name}, hash ${hashes[index]}`).toBe(known);
        }
        byTarget.set(target.name, result);
      }
    }
    outcomes.set(hashes[index], byTarget);
  });
  // The flipped half differs in the sign of a zero only; count how often that changed a hash.
  if (specs.length === 6 && hashes[0] !== hashes[3]) distinctZeroSigns += 1;
}

beforeAll(ready);

describe('equal semanticHash means equal bytes on every target', () => {
  // About 55 s alone on 2 cores, and two or three times that beside the other test files.
  it('for every catalog kernel and its variants', () => {
    [...CATALOG.values()].forEach((kernel, index) => check(family(json(kernel.spec), index)));
    expect(checkedPairs).toBeGreaterThan(0);
  }, 600_000);

  it('for generated specs (constants varied, zeros of either sign)', () => {
    const bases = [OP_ZOO, CATALOG.get('affine-f32').spec, CATALOG.get('rmsnorm').spec];
    const choice = fc.oneof(
      fc.record({ special: fc.constant(true), index: fc.nat() }),
      fc.record({
        special: fc.constant(false),
        value: fc.double({ noNaN: true, min: -1e6, max: 1e6 }),
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...bases),
        fc.array(choice, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        (base, choices, seed) => check(family(withConstants(base, choices), seed)),
      ),
      { numRuns: 12 },
    );
    // Without a distinct encoding of -0 every flipped family would hash like its original.
    expect(distinctZeroSigns).toBeGreaterThan(0);
    console.log(
      `semantic-hash property: ${emitted} shaders emitted, ${rejected} rejections, ${checkedPairs} equal-hash pairs compared`,
    );
    expect(emitted).toBeGreaterThan(rejected);
  });
});
