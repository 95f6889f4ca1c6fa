import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { checkCase, makeCaseInputs, type KernelCase } from './case-inputs.js';
import { isInputBuffer, normalizedMse, type Shape } from './catalog-kernel.js';
import { Rng, fillUniform } from './random.js';
import { rope } from './rope.js';
import { ROPE_FREQ_BASE, ropeTable } from './rope-table.js';

const shapeOf = (overrides: Partial<Record<string, number>> = {}): Shape => ({
  n_head: 3,
  n_kv_head: 1,
  head_dim: 8,
  pos: 5,
  max_ctx: 16,
  neox: 0,
  ...overrides,
});

const caseOf = (shape: Shape, name = 'rope unit'): KernelCase => ({
  name,
  kernelId: 'rope',
  schedule: {},
  shape,
  seed: 7,
  magnitude: 1,
});

/** Runs the kernel on the interpreter; returns the case's inputs and the buffers after the run. */
function run(shape: Shape, options: { grid?: [number, number, number]; size?: number } = {}) {
  const testCase = caseOf(shape);
  const buffers = makeCaseInputs(rope, testCase);
  const before = makeCaseInputs(rope, testCase);
  const schedule = resolveSchedule(rope.spec, 'ptx', { workgroupSize: options.size ?? 64 });
  const grid = options.grid;
  interpret(rope.spec, { schedule, params: rope.params(shape), buffers, ...(grid && { grid }) });
  return { testCase, before, buffers };
}

describe('ropeTable', () => {
  it('holds (cos θ, sin θ) rounded to f32 for θ = pos · base^(−2i/d), identity at position 0', () => {
    const table = ropeTable(4096, 128, ROPE_FREQ_BASE);
    expect(table.length).toBe(4096 * 128);
    for (let i = 0; i < 64; i++) expect([table[2 * i], table[2 * i + 1]]).toEqual([1, 0]);
    for (const [pos, i] of [
      [1, 0],
      [17, 3],
      [4095, 0],
      [4095, 63],
      [2048, 31],
    ] as const) {
      const theta = pos / 10000 ** (i / 64);
      const at = (pos * 64 + i) * 2;
      expect(table[at]).toBeCloseTo(Math.fround(Math.cos(theta)), 7);
      expect(table[at + 1]).toBeCloseTo(Math.fround(Math.sin(theta)), 7);
    }
    // θ = 4095 rad: a float32 angle would be off by about 1e-4; the table is not.
    expect(Math.abs((table[4095 * 128] ?? 0) - Math.cos(4095))).toBeLessThan(1e-7);
  });

  it.each([
    [0, 64, 10000, 'maxCtx'],
    [16, 63, 10000, 'headDim'],
    [16, 0, 10000, 'headDim'],
    [16, 64, 1, 'freqBase'],
    [16, 64, Number.NaN, 'freqBase'],
  ])('rejects (%d, %d, %d) naming %s', (maxCtx, headDim, base, path) => {
    expect(() => ropeTable(maxCtx, headDim, base)).toThrow(ValidationError);
    try {
      ropeTable(maxCtx, headDim, base);
    } catch (error) {
      expect((error as ValidationError).issues[0]?.path).toBe(path);
    }
  });
});

describe('rope reference', () => {
  const params = (shape: Shape) => rope.params(shape);

  it('is the identity at position 0', () => {
    const shape = shapeOf({ pos: 0 });
    const q = fillUniform(new Float32Array(24), new Rng(1), 1);
    const k = fillUniform(new Float32Array(8), new Rng(2), 1);
    const out = rope.reference({ q, k }, params(shape));
    expect(Array.from(out['q'] ?? [])).toEqual(Array.from(q));
    expect(Array.from(out['k'] ?? [])).toEqual(Array.from(k));
  });

  it('rotates pair 0 by pos radians: adjacent values in normal mode, halves in NeoX mode', () => {
    const head = [1, 2, 3, 4, 5, 6, 7, 8];
    const [c, s] = [Math.cos(5), Math.sin(5)];
    const normal = rope.reference({ q: head, k: head }, params(shapeOf({ n_head: 1 })));
    expect(normal['q']?.[0]).toBeCloseTo(1 * c - 2 * s, 12);
    expect(normal['q']?.[1]).toBeCloseTo(1 * s + 2 * c, 12);
    const neox = rope.reference({ q: head, k: head }, params(shapeOf({ n_head: 1, neox: 1 })));
    expect(neox['k']?.[0]).toBeCloseTo(1 * c - 5 * s, 12);
    expect(neox['k']?.[4]).toBeCloseTo(1 * s + 5 * c, 12);
    // Pair 1 of a head of 8 turns by 5 · 10000^(−1/4) = 0.5 radians.
    expect(neox['k']?.[1]).toBeCloseTo(2 * Math.cos(0.5) - 6 * Math.sin(0.5), 12);
    expect(normal['k']?.[2]).toBeCloseTo(3 * Math.cos(0.5) - 4 * Math.sin(0.5), 12);
  });

  it('keeps every pair’s length (a rotation)', () => {
    const shape = shapeOf({ pos: 4095, max_ctx: 4096, head_dim: 64 });
    const q = fillUniform(new Float32Array(3 * 64), new Rng(3), 1);
    const out = rope.reference({ q, k: new Float32Array(64) }, params(shape))['q'] ?? [];
    for (let j = 0; j < q.length; j += 2)
      expect(Math.hypot(out[j] ?? 0, out[j + 1] ?? 0)).toBeCloseTo(
        Math.hypot(q[j] ?? 0, q[j + 1] ?? 0),
        12,
      );
  });
});

describe('rope on the interpreter', () => {
  it('updates q and k in place: its cases generate them like inputs', () => {
    expect(isInputBuffer(rope, 'q') && isInputBuffer(rope, 'k')).toBe(true);
    const { q, k } = makeCaseInputs(rope, caseOf(shapeOf()));
    expect(q?.some((value) => value !== 0)).toBe(true);
    expect(k?.some((value) => value !== 0)).toBe(true);
  });

  it.each([
    [{ neox: 0 }],
    [{ neox: 1 }],
    [{ head_dim: 64, pos: 4095, max_ctx: 4096, neox: 1 }],
    [{ n_head: 32, n_kv_head: 8, head_dim: 128, pos: 1, max_ctx: 2 }],
    [{ head_dim: 2, pos: 15 }],
  ])('matches the float64 reference within 1e-14 NMSE at %j', (overrides) => {
    const { testCase, before, buffers } = run(shapeOf(overrides));
    const check = checkCase(rope, testCase, buffers);
    expect(check.nmse).toBeLessThanOrEqual(1e-14);
    // Not vacuous: every value of q and k moved.
    for (const name of ['q', 'k'])
      expect((buffers[name] ?? []).every((value, index) => value !== before[name]?.[index])).toBe(
        true,
      );
  });

  it('covers every pair through its grid-stride loop when the grid is smaller', () => {
    const shape = shapeOf({ n_head: 32, n_kv_head: 8, head_dim: 128, pos: 9, max_ctx: 10 });
    const { testCase, buffers } = run(shape, { grid: [3, 1, 1], size: 32 });
    expect(checkCase(rope, testCase, buffers).nmse).toBeLessThanOrEqual(1e-14);
  });

  it('reads only row pos of the table (the others NaN)', () => {
    const shape = shapeOf({ pos: 9, neox: 1 });
    const buffers = makeCaseInputs(rope, caseOf(shape));
    const table = buffers['cos_sin'] ?? new Float32Array();
    table.fill(Number.NaN, 0, 9 * 8);
    table.fill(Number.NaN, 10 * 8);
    const inputs = makeCaseInputs(rope, caseOf(shape));
    const schedule = resolveSchedule(rope.spec, 'ptx', {});
    interpret(rope.spec, { schedule, params: rope.params(shape), buffers });
    const expected = rope.reference(inputs, rope.params(shape));
    expect(normalizedMse(buffers['q'] ?? [], expected['q'] ?? [])).toBeLessThanOrEqual(1e-14);
    expect(normalizedMse(buffers['k'] ?? [], expected['k'] ?? [])).toBeLessThanOrEqual(1e-14);
  });

  it('fails the reference check when the mode is wrong (the check is not blind to it)', () => {
    const { testCase, buffers } = run(shapeOf({ neox: 1 }));
    const other = { ...testCase, shape: shapeOf({ neox: 0 }) };
    expect(checkCase(rope, other, buffers).nmse).toBeGreaterThan(1e-3);
  });
});

describe('rope shapes', () => {
  it.each([
    [{ head_dim: 7 }, 'head_dim', '7 is not even (values rotate in pairs)'],
    [{ head_dim: 0 }, 'head_dim', '0 is not at least 1'],
    [{ pos: 16 }, 'pos', '16 is not below max_ctx 16'],
    [{ neox: 2 }, 'neox', '2 is not 0 (normal) or 1 (NeoX)'],
    [{ n_kv_head: 0 }, 'n_kv_head', '0 is not at least 1'],
    [{ n_head: 1.5 }, 'n_head', '1.5 is not a whole number'],
    [{ max_ctx: 2 ** 24, head_dim: 128, pos: 0 }, 'max_ctx', /exceeds 2\^32 bytes/],
  ])('rejects %j naming %s', (overrides, path, message) => {
    const shape = shapeOf(overrides);
    try {
      rope.checkShape?.(shape);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      const [issue] = (error as ValidationError).issues;
      expect(issue?.path).toBe(path);
      expect(issue?.message).toMatch(message);
    }
    expect(() => makeCaseInputs(rope, caseOf(shape))).toThrow(ValidationError);
  });

  it('names a missing field', () => {
    const { pos: _pos, ...shape } = shapeOf();
    expect(() => rope.checkShape?.(shape)).toThrow('pos: is missing');
  });

  it('accepts its default shape and sizes the table by max_ctx × head_dim', () => {
    expect(() => rope.checkShape?.(rope.defaultShape)).not.toThrow();
    expect(rope.bufferLengths(rope.defaultShape)).toEqual({
      q: 32 * 128,
      k: 8 * 128,
      cos_sin: 4096 * 128,
    });
    expect(rope.describeInput?.('cos_sin', rope.defaultShape)).toContain('[max_ctx 4096]');
  });
});
