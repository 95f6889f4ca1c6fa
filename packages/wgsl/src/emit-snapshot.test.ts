import { describe, expect, it } from 'vitest';
import { ValidationError, semanticHash } from '@forge/ir';
import { rmsnorm } from '@forge/ir/kernels';
import { countReads } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { checkWgslTarget, wgslTarget } from './targets.js';

const INJECTED = 'evil() {}\n@compute @workgroup_size(1)\nfn evil';

/** A JSON copy of rmsnorm whose `key` reads as its real value the first time and INJECTED after. */
function swapping(key: 'entryPoint' | 'description'): Record<string, unknown> {
  const spec = JSON.parse(JSON.stringify(rmsnorm.spec)) as Record<string, unknown>;
  let reads = 0;
  Object.defineProperty(spec, key, {
    enumerable: true,
    get: () => (++reads === 1 ? rmsnorm.spec[key] : INJECTED),
  });
  return spec;
}

const computeEntries = (source: string): number => source.split('@compute').length - 1;

describe('emitWgsl reads its input once', () => {
  it.each(['entryPoint', 'description'] as const)(
    'a getter on %s cannot swap unchecked text in after validation',
    (key) => {
      const shader = emitWgsl(swapping(key), {}, wgslTarget());
      expect(computeEntries(shader.source)).toBe(1);
      expect(shader.source).not.toContain('evil');
      expect(shader.source).toBe(emitWgsl(rmsnorm.spec, {}, wgslTarget()).source);
      expect(shader.semanticHash).toBe(semanticHash(rmsnorm.spec));
    },
  );

  it('a getter on the target features is read once', () => {
    let reads = 0;
    const target = {
      kind: 'wgsl',
      get features(): string[] {
        return ++reads === 1 ? [] : ['f16\n@compute fn evil'];
      },
    };
    const shader = emitWgsl(rmsnorm.spec, {}, target as never);
    expect(computeEntries(shader.source)).toBe(1);
    expect(shader.target).toEqual(wgslTarget());
    expect(reads).toBe(1);
  });

  it('every property of spec, overrides and target is read at most once', () => {
    const spec = countReads(JSON.parse(JSON.stringify(rmsnorm.spec)) as object);
    const overrides = countReads({ workgroupSize: 128 });
    const target = countReads({ kind: 'wgsl', features: ['subgroups', 'f16'] });
    const shader = emitWgsl(spec.proxy, overrides.proxy, target.proxy as never);
    const plain = emitWgsl(rmsnorm.spec, { workgroupSize: 128 }, wgslTarget(['f16', 'subgroups']));
    expect(shader.source).toBe(plain.source);
    expect(shader.cacheKey).toBe(plain.cacheKey);
    for (const counter of [spec, overrides, target]) expect(counter.counts()[0]?.reads).toBe(1);
  });
});

describe('checkWgslTarget', () => {
  it('orders features and drops duplicates as wgslTarget does', () => {
    expect(checkWgslTarget({ kind: 'wgsl', features: ['subgroups', 'f16', 'f16'] })).toEqual(
      wgslTarget(['f16', 'subgroups']),
    );
  });

  it.each([
    [{ kind: 'ptx', features: [] }, 'target.kind'],
    [{ kind: 'wgsl', features: 'f16' }, 'target.features'],
    [{ kind: 'wgsl', features: ['fp64'] }, 'features'],
    [{ kind: 'wgsl', features: [], arch: 'x' }, 'target.arch'],
    [null, 'target'],
  ])('rejects %j at %s', (target, path) => {
    try {
      emitWgsl(rmsnorm.spec, {}, target as never);
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toBe(path);
    }
    expect.assertions(2);
  });
});
