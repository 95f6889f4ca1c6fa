import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { checkTargetRecord } from './target-record.js';

describe('checkTargetRecord', () => {
  it('returns a frozen copy of a record with the backend kind and known fields', () => {
    const target = { kind: 'ptx', arch: 'sm_80' };
    const copy = checkTargetRecord(target, 'ptx', ['arch', 'ptxVersion']);
    expect(copy).toEqual(target);
    expect(copy).not.toBe(target);
    expect(Object.isFrozen(copy)).toBe(true);
  });

  it('lists every problem, unknown fields first, at paths under target', () => {
    try {
      checkTargetRecord({ kind: 'wgsl', extra: 1 }, 'ptx', ['arch']);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([
        { path: 'target.extra', message: 'unknown field (allowed: kind, arch)' },
        { path: 'target.kind', message: 'must be "ptx", got "wgsl"' },
      ]);
    }
  });

  it('rejects a value that is not an object at target', () => {
    expect(() => checkTargetRecord('sm_80', 'ptx', [])).toThrow(
      'target: must be an object, got "sm_80"',
    );
  });
});
