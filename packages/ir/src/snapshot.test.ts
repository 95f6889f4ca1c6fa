import { describe, expect, it } from 'vitest';
import type { Expr } from './body.js';
import { defineKernel } from './builder.js';
import { ValidationError } from './errors.js';
import * as ir from './expressions.js';
import { canonicalJson, semanticHash } from './hash.js';
import { CATALOG, getKernel } from './kernels/catalog.js';
import { resolveSchedule } from './schedule.js';
import {
  MAX_SPEC_DEPTH,
  MAX_SPEC_NODES,
  isSnapshot,
  snapshotJson,
  takeSnapshot,
} from './snapshot.js';
import { MAX_EXPRESSION_VALUES } from './typecheck.js';
import { checkSpec, validateSpec } from './validate.js';

const rmsnormJson = (): Record<string, unknown> =>
  JSON.parse(JSON.stringify(getKernel('rmsnorm').spec)) as Record<string, unknown>;

const issuesOf = (value: unknown) => snapshotJson(value, 'x').issues;

/** `depth` levels of `add(a, a)` where both operands are the same object: 2^depth leaves. */
function sharedAdd(depth: number): unknown {
  let node: unknown = { op: 'const', type: 'f32', value: 1 };
  for (let level = 0; level < depth; level++) node = { op: 'add', type: 'f32', args: [node, node] };
  return node;
}

/** rmsnorm with one extra `let` whose value is `expression`. */
function withLet(expression: unknown): Record<string, unknown> {
  const spec = rmsnormJson();
  spec['body'] = [
    { op: 'let', name: 'big', type: 'f32', value: expression },
    ...(spec['body'] as unknown[]),
  ];
  return spec;
}

describe('snapshotJson', () => {
  it('copies JSON data into a deep-frozen snapshot equal to it', () => {
    const value = { b: [1, -0, 'x', null, true, { c: Number.NaN }], a: {} };
    const copy = takeSnapshot(value) as typeof value;
    expect(copy).not.toBe(value);
    expect(copy).toEqual(value);
    expect(Object.is(copy.b[1], -0)).toBe(true);
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.b) && Object.isFrozen(copy.b[5])).toBe(
      true,
    );
    expect(isSnapshot(copy)).toBe(true);
    expect(isSnapshot(value)).toBe(false);
    expect(takeSnapshot(copy)).toBe(copy);
  });

  it('reads each property once: a getter cannot change the copy after the fact', () => {
    let reads = 0;
    const value = {
      get name(): string {
        reads += 1;
        return reads === 1 ? 'first' : 'second';
      },
    };
    const copy = takeSnapshot(value) as { name: string };
    expect(copy.name).toBe('first');
    expect(copy.name).toBe('first');
    expect(reads).toBe(1);
  });

  it('drops undefined fields like JSON.stringify and keeps "__proto__" as data', () => {
    const copy = takeSnapshot({ a: 1, b: undefined }) as object;
    expect(Object.keys(copy)).toEqual(['a']);
    const parsed: unknown = JSON.parse('{"__proto__":{"x":1}}');
    const own = takeSnapshot(parsed) as object;
    expect(Object.getPrototypeOf(own)).toBe(Object.prototype);
    expect(Object.keys(own)).toEqual(['__proto__']);
    const spec = { ...rmsnormJson() };
    Object.defineProperty(spec, '__proto__', { value: 1, enumerable: true });
    expect(checkSpec(spec).map((issue) => issue.path)).toContain('__proto__');
  });

  it.each([
    ['a function', () => 1, 'x: must be JSON data, got a function'],
    ['a symbol', Symbol('s'), 'x: must be JSON data, got a symbol'],
    ['a bigint', 1n, 'x: must be JSON data, got a bigint'],
    [
      'a class instance',
      new Date(0),
      'x: must be a plain object or array, got an instance of a class',
    ],
    ['a Map', new Map(), 'x: must be a plain object or array, got an instance of a class'],
  ])('rejects %s with a one-line issue naming the path', (_name, value, message) => {
    expect(() => takeSnapshot(value, 'x')).toThrow(ValidationError);
    expect(() => takeSnapshot(value, 'x')).toThrow(message);
    expect(issuesOf({ deep: [value] })[0]?.path).toBe('x.deep[0]');
  });

  it('rejects holes and undefined entries in arrays', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(issuesOf([1, , 3])).toEqual([
      { path: 'x[1]', message: 'must be JSON data, got undefined (arrays may not have holes)' },
    ]);
    expect(issuesOf([undefined])[0]?.path).toBe('x[0]');
  });

  it('rejects cycles with an issue, not a stack overflow', () => {
    const object: Record<string, unknown> = { a: 1 };
    object['self'] = object;
    expect(issuesOf(object)).toEqual([
      { path: 'x.self', message: 'contains itself (a cycle is not JSON)' },
    ]);
    const array: unknown[] = [];
    array.push([array]);
    expect(issuesOf(array)[0]?.path).toBe('x[0][0]');
    const spec = rmsnormJson();
    const body = spec['body'] as unknown[];
    body.push(spec);
    expect(() => validateSpec(spec)).toThrow(
      `body[${body.length - 1}]: contains itself (a cycle is not JSON)`,
    );
  });

  it('rejects nesting past MAX_SPEC_DEPTH without a stack overflow', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    const [issue] = issuesOf(deep);
    expect(issue?.message).toBe(`nests deeper than ${MAX_SPEC_DEPTH} levels`);
    expect(issue?.path.startsWith('x[0][0]')).toBe(true);
  });

  it('turns a throwing getter into a one-line issue', () => {
    const value = {
      get bad(): never {
        throw new Error('boom\nsecond line\u001b[31m');
      },
    };
    expect(issuesOf(value)).toEqual([{ path: 'x.bad', message: 'could not be read: boom' }]);
  });

  it('accepts null-prototype objects and reports a revoked Proxy as unreadable', () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    expect(takeSnapshot(bare)).toEqual({ a: 1 });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(issuesOf({ p: proxy })[0]?.path).toBe('x.p');
    expect(issuesOf({ p: proxy })[0]?.message).toMatch(/^could not be read: /);
  });

  it('stops at an array length past the limit without walking it', () => {
    const huge = new Proxy([], {
      get: (target, key) => (key === 'length' ? 2 ** 32 - 1 : Reflect.get(target, key)),
    });
    expect(issuesOf(huge)[0]?.message).toBe(`has more than ${MAX_SPEC_NODES} entries`);
  });
});

describe('shared sub-objects', () => {
  it('below the limit become an unshared tree that hashes and validates like its JSON copy', () => {
    const spec = withLet(sharedAdd(10));
    const copy = validateSpec(spec);
    const value = (copy.body[0] as unknown as { value: { args: unknown[] } }).value;
    expect(value.args[0]).not.toBe(value.args[1]);
    expect(value.args[0]).toEqual(value.args[1]);
    const parsed: unknown = JSON.parse(JSON.stringify(spec));
    expect(semanticHash(spec)).toBe(semanticHash(parsed));
    expect(canonicalJson(copy)).toBe(canonicalJson(parsed));
  });

  it('built with defineKernel, a DAG 30 levels deep is a ValidationError, quickly', () => {
    let value: Expr = ir.f32(1);
    for (let level = 0; level < 30; level++) value = ir.add(value, value);
    const started = performance.now();
    expect(() =>
      defineKernel({ ...getKernel('affine-f32').spec, id: 'dag' }, (b) =>
        b.store('y', b.localId(), value),
      ),
    ).toThrow(`expands to more than ${MAX_SPEC_NODES} values`);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('in one expression, pass its own limit only as a one-line issue at its path', () => {
    // sharedAdd(d) expands to 4 · (2^(d+1) − 1) values: 16,380 at 11 levels, 32,764 at 12.
    expect(checkSpec(withLet(sharedAdd(11)))).toEqual([]);
    const issues = checkSpec(withLet(sharedAdd(12)));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('body[0].value');
    expect(issues[0]?.message).toBe(
      `has more than ${MAX_EXPRESSION_VALUES} values (each use of a shared sub-expression counts); split it with let`,
    );
  });

  it('every catalog kernel stays far below the limit', () => {
    const count = (value: unknown): number =>
      value !== null && typeof value === 'object'
        ? 1 + Object.values(value).reduce((sum: number, child) => sum + count(child), 0)
        : 1;
    // A fifth at most: the largest, sdpa-decode-quantize with code for 8 query heads, has about
    // 51,000 values.
    for (const kernel of CATALOG.values())
      expect(count(kernel.spec) * 5).toBeLessThan(MAX_SPEC_NODES);
  });
});

describe('resolveSchedule snapshots its overrides', () => {
  const spec = getKernel('rmsnorm').spec;

  it('rejects a value that is not a number, naming the knob', () => {
    expect(() => resolveSchedule(spec, 'ptx', { workgroupSize: '64' } as never)).toThrow(
      'schedule.workgroupSize: must be a number, got "64"',
    );
  });

  it('reports a "__proto__" key from JSON as an unknown knob instead of dropping it', () => {
    const overrides = JSON.parse('{"__proto__": 1}') as Record<string, number>;
    expect(() => resolveSchedule(spec, 'ptx', overrides)).toThrow(/^schedule.__proto__: unknown/);
  });

  it('returns a frozen schedule and rejects a malformed target kind', () => {
    expect(Object.isFrozen(resolveSchedule(spec, 'wgsl'))).toBe(true);
    expect(Object.isFrozen(resolveSchedule(spec, 'cuda'))).toBe(true);
    expect(() => resolveSchedule(spec, 'CUDA')).toThrow(ValidationError);
    expect(() => resolveSchedule(spec, 7 as never)).toThrow(/^target: must be a target kind/);
  });
});
