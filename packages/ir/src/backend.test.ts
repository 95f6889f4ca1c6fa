import { beforeAll, describe, expect, it } from 'vitest';
import {
  BIND_SCHEDULE,
  emit,
  lowerDispatches,
  type Backend,
  type BackendPass,
  type LoweredModule,
} from './backend.js';
import type { Stmt } from './body.js';
import { ForgeError, ValidationError } from './errors.js';
import { ready } from './hash.js';
import { printKernel } from './printer.js';
import type { KernelSpec, Target } from './spec.js';
import { getKernel } from './kernels/index.js';

beforeAll(ready);

interface TextTarget extends Target {
  readonly kind: 'text';
}
const TEXT: TextTarget = { kind: 'text' };

/** A backend that prints each lowered dispatch's IR, recording what the driver called in order. */
function textBackend(calls: string[], passes: readonly BackendPass<TextTarget>[]) {
  const backend: Backend<TextTarget> = {
    name: 'text@1',
    limits: { kind: 'text', maxWorkgroupSize: 256, maxSharedBytes: 1024 },
    checkTarget: (target) => {
      calls.push('checkTarget');
      if (target.kind !== 'text') throw new ForgeError('target.kind must be text');
      return target;
    },
    checkSpec: () => void calls.push('checkSpec'),
    passes,
    render: (module: LoweredModule<TextTarget>) => {
      calls.push('render');
      const source = module.dispatches
        .map(({ view, body }) => printKernel({ ...view, body }))
        .join('\n');
      const entryPoint = module.spec.entryPoint;
      return {
        source,
        launch: {
          entryPoint,
          workgroupSize: [32, 1, 1],
          grid: ['1', '1', '1'],
          sharedBytes: 0,
          parameters: [],
          parameterBytes: 0,
        },
      };
    },
  };
  return backend;
}

// A kernel whose body reads its workgroupSize knob (default 256).
const spec: KernelSpec = getKernel('affine-f32').spec;

describe('one driver for every backend', () => {
  it('validates, checks the target then the spec, runs the passes in order, renders, hashes', () => {
    const calls: string[] = [];
    const seen: string[] = [];
    const record =
      (name: string): BackendPass<TextTarget> =>
      (body: readonly Stmt[], { workgroupSize }) => {
        seen.push(`${name}@${workgroupSize}`);
        return [...body];
      };
    const backend = textBackend(calls, [record('before'), BIND_SCHEDULE, record('after')]);
    const shader = emit(backend, spec, {}, TEXT);
    expect(calls).toEqual(['checkTarget', 'checkSpec', 'render']);
    expect(seen).toEqual(['before@256', 'after@256']);
    expect(shader.kernelId).toBe(spec.id);
    expect(shader.cacheKey).toMatch(/^[0-9a-f]{64}$/);
    // The backend's name is part of the cache key.
    const renamed = emit({ ...backend, name: 'text@2' }, spec, {}, TEXT);
    expect(renamed.source).toBe(shader.source);
    expect(renamed.cacheKey).not.toBe(shader.cacheKey);
  });

  it('binds the schedule where BIND_SCHEDULE stands: a pass before it sees the knob', () => {
    const knobs = (body: readonly Stmt[]): number =>
      JSON.stringify(body).split('"op":"schedule"').length - 1;
    const counts: number[] = [];
    const count: BackendPass<TextTarget> = (body) => {
      counts.push(knobs(body));
      return [...body];
    };
    lowerDispatches([count, BIND_SCHEDULE, count], spec, { workgroupSize: 64 }, TEXT);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBe(0);
  });

  it('rejects a bad spec before the target is looked at, and a bad schedule after it', () => {
    const calls: string[] = [];
    const backend = textBackend(calls, [BIND_SCHEDULE]);
    expect(() => emit(backend, { ...spec, id: 'Bad Id' }, {}, TEXT)).toThrow(ValidationError);
    expect(calls).toEqual([]);
    expect(() => emit(backend, spec, { workgroupSize: 4096 }, TEXT)).toThrow(ValidationError);
    expect(calls).toEqual(['checkTarget', 'checkSpec']);
  });
});
