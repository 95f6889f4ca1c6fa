import {
  MAX_SPEC_NODES,
  ValidationError,
  checkSpec,
  resolveSchedule,
  semanticHash,
  validateSpec,
} from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { describe, expect, it } from 'vitest';
import { countReads } from '../read-counter.js';

// The IR's read-once guarantees, counted through the shared read-counting proxy.

const rmsnormJson = (): Record<string, unknown> =>
  JSON.parse(JSON.stringify(getKernel('rmsnorm').spec)) as Record<string, unknown>;

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
  it('reads every property of a spec at most once through validation and hashing', () => {
    const counter = countReads(rmsnormJson());
    const spec = validateSpec(counter.proxy);
    semanticHash(spec);
    const counts = counter.counts();
    expect(counts.length).toBeGreaterThan(100);
    expect(counts[0]?.reads).toBe(1);
  });
});

describe('shared sub-objects', () => {
  it('are counted per use and rejected past MAX_SPEC_NODES after reading each object once', () => {
    for (const depth of [24, 40]) {
      const counter = countReads(withLet(sharedAdd(depth)));
      const started = performance.now();
      const issues = checkSpec(counter.proxy);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(issues).toHaveLength(1);
      expect(issues[0]?.message).toBe(
        `expands to more than ${MAX_SPEC_NODES} values (each use of a shared sub-object counts)`,
      );
      expect(issues[0]?.path).toMatch(/^body\[0\]\.value(\.args\[0\])*(\.args)?$/);
      // Linear: each distinct object's fields are read once, however often it is shared.
      expect(counter.counts()[0]?.reads).toBe(1);
      expect(counter.counts().length).toBeLessThan(10 * depth);
      expect(() => semanticHash(counter.proxy)).toThrow(ValidationError);
    }
  });
});

describe('resolveSchedule', () => {
  it('reads target limits once', () => {
    const counter = countReads({ kind: 'ptx', maxWorkgroupSize: 1024, maxSharedBytes: 0 });
    expect(() => resolveSchedule(getKernel('rmsnorm').spec, counter.proxy)).toThrow(
      /^shared: 32 bytes exceed the 0-byte/,
    );
    expect(Math.max(...counter.counts().map((count) => count.reads))).toBe(1);
  });
});
