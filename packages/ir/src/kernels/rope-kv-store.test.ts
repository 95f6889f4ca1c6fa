import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import type { ElementArray } from '../interpreter/memory.js';
import { resolveSchedule } from '../schedule.js';
import { checkCase, makeCaseInputs, type KernelCase } from './case-inputs.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { kvStore, kvStoreF32 } from './kv-store.js';
import { rope } from './rope.js';
import { ropeKvStore, ropeKvStoreF32 } from './rope-kv-store.js';

const shapeOf = (overrides: Partial<Record<string, number>> = {}): Shape => ({
  n_head: 3,
  n_kv_head: 1,
  head_dim: 8,
  pos: 5,
  max_ctx: 16,
  neox: 0,
  ...overrides,
});

const caseOf = (kernel: CatalogKernel, shape: Shape): KernelCase => ({
  name: `${kernel.spec.id} unit`,
  kernelId: kernel.spec.id,
  schedule: {},
  shape,
  seed: 11,
  magnitude: 2,
});

type Buffers = Record<string, ElementArray>;

function runOn(
  kernel: CatalogKernel,
  shape: Shape,
  buffers: Buffers,
  grid?: [number, number, number],
) {
  const schedule = resolveSchedule(kernel.spec, 'ptx', grid ? { workgroupSize: 32 } : {});
  interpret(kernel.spec, {
    schedule,
    params: kernel.params(shape),
    buffers,
    ...(grid && { grid }),
  });
}

const words = (values: ElementArray | undefined): number[] =>
  Array.from(values instanceof Float32Array ? new Uint32Array(values.buffer) : (values ?? []));

describe.each([
  ['f16', ropeKvStore, kvStore],
  ['f32', ropeKvStoreF32, kvStoreF32],
] as const)('rope-kv-store, %s cache', (_cache, fused, store) => {
  it.each([
    [{}],
    [{ neox: 1 }],
    [{ n_head: 32, n_kv_head: 8, head_dim: 128, pos: 63, max_ctx: 64 }],
    [{ n_head: 32, n_kv_head: 8, head_dim: 128, pos: 0, max_ctx: 64, neox: 1 }],
    [{ n_head: 5, n_kv_head: 5, head_dim: 4, pos: 15 }],
    [{ n_head: 2, n_kv_head: 2, head_dim: 80, pos: 9, neox: 1 }],
  ])('writes exactly what rope then kv-store write at %j', (overrides) => {
    const shape = shapeOf(overrides);
    const buffers = makeCaseInputs(fused, caseOf(fused, shape));
    const apart: Buffers = Object.fromEntries(
      Object.entries(buffers).map(([name, values]) => [name, values.slice()]),
    );
    runOn(fused, shape, buffers);
    runOn(rope, shape, apart);
    runOn(store, shape, apart);
    for (const name of ['q', 'k_cache', 'v_cache'])
      expect(words(buffers[name]), name).toEqual(words(apart[name]));
    const check = checkCase(fused, caseOf(fused, shape), buffers);
    expect(check.nmse).toBeLessThanOrEqual(1e-14);
    // Not vacuous: row pos of each cache holds the step's values.
    const row = ((shape['pos'] ?? 0) * (buffers['k_cache']?.length ?? 0)) / (shape['max_ctx'] ?? 1);
    expect(buffers['k_cache']?.[row]).not.toBe(0);
  });

  it('covers every value through its grid-stride loop when the grid is smaller', () => {
    const shape = shapeOf({ n_head: 32, n_kv_head: 8, head_dim: 128, pos: 9, neox: 1 });
    const buffers = makeCaseInputs(fused, caseOf(fused, shape));
    runOn(fused, shape, buffers, [3, 1, 1]);
    expect(checkCase(fused, caseOf(fused, shape), buffers).nmse).toBeLessThanOrEqual(1e-14);
  });

  it('compares the caches exactly: one changed word fails the check', () => {
    const shape = shapeOf();
    const buffers = makeCaseInputs(fused, caseOf(fused, shape));
    runOn(fused, shape, buffers);
    const cache = buffers['k_cache'] ?? new Uint32Array();
    const at = ((shape['pos'] ?? 0) * cache.length) / (shape['max_ctx'] ?? 1);
    const bits = new Uint32Array(cache.buffer, cache.byteOffset, cache.length);
    bits[at] = (bits[at] ?? 0) ^ 1;
    const check = checkCase(fused, caseOf(fused, shape), buffers);
    expect(check.tolerance).toBe(0);
    expect(check.nmse).toBeGreaterThan(0);
  });
});

describe('rope-kv-store shapes', () => {
  it.each([
    [{ head_dim: 6 }, 'head_dim', '6 is not a multiple of 4 (a thread moves two pairs)'],
    [{ head_dim: 7 }, 'head_dim', '7 is not even (values rotate in pairs)'],
    [{ pos: 16 }, 'pos', '16 is not below max_ctx 16'],
    [{ neox: 2 }, 'neox', '2 is not 0 (normal) or 1 (NeoX)'],
    [{ max_ctx: 2 ** 24, n_kv_head: 8, head_dim: 128, pos: 0 }, 'max_ctx', /exceeds 2\^32 bytes/],
  ])('rejects %j naming %s, each problem once', (overrides, path, message) => {
    try {
      ropeKvStore.checkShape?.(shapeOf(overrides));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      const issues = (error as ValidationError).issues;
      expect(issues[0]?.path).toBe(path);
      expect(issues[0]?.message).toMatch(message);
      expect(issues.filter((issue) => issue.path === path)).toHaveLength(1);
    }
  });

  it('sizes the caches like kv-store and the table like rope', () => {
    const shape = shapeOf({ n_kv_head: 2, max_ctx: 4 });
    expect(ropeKvStore.bufferLengths(shape)).toEqual({
      q: 24,
      k: 16,
      v: 16,
      cos_sin: 32,
      k_cache: 32,
      v_cache: 32,
    });
    expect(ropeKvStoreF32.bufferLengths(shape)['k_cache']).toBe(64);
  });
});
