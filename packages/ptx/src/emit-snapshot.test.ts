import { describe, expect, it } from 'vitest';
import { ValidationError, semanticHash } from '@forge/ir';
import { affineF32 } from '@forge/ir/kernels';
import { countReads } from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { PTX_ISA_VERSIONS, PTX_VERSIONS, checkPtxTarget, ptxTarget } from './targets.js';

const INJECTED = 'evil()\n{\n\tret;\n}\n.visible .entry evil';

/** A JSON copy of affine-f32 whose `key` reads as `valid` the first time and INJECTED after. */
function swapping(key: string, valid: unknown): Record<string, unknown> {
  const spec = JSON.parse(JSON.stringify(affineF32.spec)) as Record<string, unknown>;
  let reads = 0;
  Object.defineProperty(spec, key, {
    enumerable: true,
    get: () => (++reads === 1 ? valid : INJECTED),
  });
  return spec;
}

const entries = (source: string): number => source.split('.visible .entry').length - 1;

describe('emitPtx reads its input once', () => {
  it.each([
    ['entryPoint', affineF32.spec.entryPoint],
    ['description', affineF32.spec.description],
  ])('a getter on %s cannot swap unchecked text in after validation', (key, valid) => {
    const shader = emitPtx(swapping(key, valid), {}, ptxTarget('sm_80'));
    expect(entries(shader.source)).toBe(1);
    expect(shader.source).not.toContain('evil');
    expect(shader.source).toContain(key === 'entryPoint' ? `.entry ${valid}(` : `// ${valid}\n`);
  });

  it('a getter on the target cannot either', () => {
    const target: Record<string, unknown> = { kind: 'ptx', ptxVersion: '7.0' };
    let reads = 0;
    Object.defineProperty(target, 'arch', {
      enumerable: true,
      get: () => (++reads === 1 ? 'sm_80' : `sm_80\n${INJECTED}`),
    });
    const shader = emitPtx(affineF32.spec, {}, target as never);
    expect(entries(shader.source)).toBe(1);
    expect(shader.target).toEqual(ptxTarget('sm_80'));
  });

  it('a getter on the schedule overrides is read once', () => {
    let reads = 0;
    const overrides = {
      get workgroupSize(): number {
        return ++reads === 1 ? 64 : 100_000;
      },
    };
    const shader = emitPtx(affineF32.spec, overrides, ptxTarget('sm_80'));
    expect(shader.schedule).toEqual({ workgroupSize: 64 });
    expect(shader.launch.workgroupSize[0]).toBe(64);
    expect(reads).toBe(1);
  });

  it('every property of spec, overrides and target is read at most once', () => {
    const spec = countReads(JSON.parse(JSON.stringify(affineF32.spec)) as object);
    const overrides = countReads({ workgroupSize: 128 });
    const target = countReads({ ...ptxTarget('sm_86') });
    const shader = emitPtx(spec.proxy, overrides.proxy, target.proxy as never);
    expect(shader.source).toBe(
      emitPtx(affineF32.spec, { workgroupSize: 128 }, ptxTarget('sm_86')).source,
    );
    for (const counter of [spec, overrides, target]) expect(counter.counts()[0]?.reads).toBe(1);
  });

  it('hash and cache key are those of the snapshot', () => {
    const shader = emitPtx(
      swapping('entryPoint', affineF32.spec.entryPoint),
      {},
      ptxTarget('sm_80'),
    );
    const plain = emitPtx(affineF32.spec, {}, ptxTarget('sm_80'));
    expect(shader.semanticHash).toBe(semanticHash(affineF32.spec));
    expect(shader.cacheKey).toBe(plain.cacheKey);
  });
});

describe('checkPtxTarget', () => {
  it('accepts what ptxTarget builds and a newer ISA version', () => {
    expect(checkPtxTarget(ptxTarget('sm_90'))).toEqual(ptxTarget('sm_90'));
    expect(checkPtxTarget({ kind: 'ptx', arch: 'sm_80', ptxVersion: '8.0' }).ptxVersion).toBe(
      '8.0',
    );
  });

  it('every ISA version it accepts for sm_80 assembles with ptxas', () => {
    const accepted = PTX_ISA_VERSIONS.filter((version) => version >= PTX_VERSIONS.sm_80);
    for (const ptxVersion of accepted) {
      const { source } = emitPtx(affineF32.spec, {}, { kind: 'ptx', arch: 'sm_80', ptxVersion });
      expect(assemblePtx(source, 'sm_80').ok, ptxVersion).toBe(true);
    }
    expect(accepted).toHaveLength(19);
  });

  it.each([
    [{ kind: 'wgsl', arch: 'sm_80', ptxVersion: '7.0' }, 'target.kind'],
    [{ kind: 'ptx', arch: 'sm_70', ptxVersion: '7.0' }, 'target.arch'],
    [{ kind: 'ptx', arch: 'sm_80', ptxVersion: '7.0\n.target sm_90' }, 'target.ptxVersion'],
    [{ kind: 'ptx', arch: 'sm_90', ptxVersion: '7.0' }, 'target.ptxVersion'],
    [{ kind: 'ptx', arch: 'sm_80', ptxVersion: '9.1' }, 'target.ptxVersion'],
    [{ kind: 'ptx', arch: 'sm_80', ptxVersion: '7.9' }, 'target.ptxVersion'],
    [{ kind: 'ptx', arch: 'sm_80', ptxVersion: '7.0', extra: 1 }, 'target.extra'],
    ['sm_80', 'target'],
  ])('rejects %j at %s', (target, path) => {
    expect(() => checkPtxTarget(target)).toThrow(ValidationError);
    try {
      emitPtx(affineF32.spec, {}, target as never);
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toBe(path);
      expect((error as ValidationError).message).not.toContain('\n');
    }
    expect.assertions(4);
  });
});
