import { describe, expect, it } from 'vitest';
import {
  checkSpec,
  interpret,
  lowerMmaToShuffles,
  resolveSchedule,
  mmaAPosition,
  mmaBPosition,
  mmaCPosition,
  printBody,
  validateSpec,
} from '@forge/ir';
import { MMA_PROBE, mmaProbeCase } from '../mma-probe.js';

/** Normalized MSE of `actual` against the float64 `reference`. */
function nmse(actual: ArrayLike<number>, reference: ArrayLike<number>): number {
  let error = 0;
  let norm = 0;
  for (let i = 0; i < reference.length; i++) {
    const r = reference[i] as number;
    error += ((actual[i] as number) - r) ** 2;
    norm += r * r;
  }
  return error / norm;
}

/** Runs the probe on the interpreter; returns D. */
function run(spec: unknown, pairs: number, kChunks: number): Float32Array {
  const { a, b, c } = mmaProbeCase(pairs, kChunks);
  const d = new Float32Array(pairs * 256);
  interpret(validateSpec(spec), { params: { k_chunks: kChunks, pairs }, buffers: { a, b, c, d } });
  return d;
}

/** The probe's JSON with its mma (body[…] `for` loop, body[1]) changed by `edit`. */
function probeWith(edit: (statement: Record<string, unknown>) => void): unknown {
  const json = JSON.parse(JSON.stringify(MMA_PROBE)) as { body: Record<string, unknown>[] };
  const loop = json.body.find((statement) => statement['op'] === 'for') as {
    body: Record<string, unknown>[];
  };
  const statement = loop.body.find((candidate) => candidate['op'] === 'mma');
  if (statement === undefined) throw new Error('probe layout changed');
  edit(statement);
  return json;
}
const mmaPath = (): string => {
  const index = MMA_PROBE.body.findIndex((statement) => statement.op === 'for');
  const loop = MMA_PROBE.body[index];
  const inner = loop?.op === 'for' ? loop.body.findIndex((s) => s.op === 'mma') : -1;
  return `body[${index}].body[${inner}]`;
};

describe('mma fragment layout', () => {
  it('covers every element of A, B and C/D exactly once over the warp', () => {
    const seen = { a: new Set<string>(), b: new Set<string>(), c: new Set<string>() };
    for (let lane = 0; lane < 32; lane++) {
      for (let word = 0; word < 4; word++)
        for (let half = 0; half < 2; half++) seen.a.add(String(mmaAPosition(lane, word, half)));
      for (let word = 0; word < 2; word++)
        for (let half = 0; half < 2; half++) seen.b.add(String(mmaBPosition(lane, word, half)));
      for (let index = 0; index < 4; index++) seen.c.add(String(mmaCPosition(lane, index)));
    }
    expect([seen.a.size, seen.b.size, seen.c.size]).toEqual([256, 128, 128]);
    // Spot checks against the PTX ISA figures: lane 5 is g 1, t 1.
    expect(mmaAPosition(5, 0, 1)).toEqual([1, 3]);
    expect(mmaAPosition(5, 3, 0)).toEqual([9, 10]);
    expect(mmaBPosition(5, 1, 1)).toEqual([11, 1]);
    expect(mmaCPosition(5, 3)).toEqual([9, 3]);
  });
});

describe('mma on the interpreter', () => {
  for (const [pairs, kChunks] of [
    [1, 1],
    [2, 3],
  ] as const) {
    it(`computes D = A·B + C within NMSE 1e-12 of float64, ${pairs} workgroups, K = ${16 * kChunks}`, () => {
      const { reference } = mmaProbeCase(pairs, kChunks);
      const d = run(MMA_PROBE, pairs, kChunks);
      expect(nmse(d, reference)).toBeLessThan(1e-12);
      expect(d.some((value) => value === 0)).toBe(false);
    });
  }

  it('validates, and prints as a tuple of f32 locals', () => {
    expect(checkSpec(MMA_PROBE)).toEqual([]);
    const loop = MMA_PROBE.body.find((statement) => statement.op === 'for');
    const mma = loop?.op === 'for' ? loop.body.find((s) => s.op === 'mma') : undefined;
    expect(mma && printBody([mma])).toEqual([
      'let (d0, d1, d2, d3): f32 = mma_m16n8k16(' +
        'a: (a[((row_lo + off) + 0u32)], a[((row_hi + off) + 0u32)], a[((row_lo + off) + 4u32)], a[((row_hi + off) + 4u32)]), ' +
        'b: (b[((col + off) + 0u32)], b[((col + off) + 4u32)]), c: (acc0, acc1, acc2, acc3))',
    ]);
  });

  it('lowered to shuffles and f32 arithmetic (as for WGSL), gives the same D bit for bit', () => {
    const lowered = { ...MMA_PROBE, body: lowerMmaToShuffles(MMA_PROBE.body) };
    expect(JSON.stringify(lowered.body)).not.toContain('"mma"');
    const { a, b, c } = mmaProbeCase(2, 2);
    const d = new Float32Array(512);
    interpret(lowered, { params: { k_chunks: 2, pairs: 2 }, buffers: { a, b, c, d } });
    expect([...d]).toEqual([...run(MMA_PROBE, 2, 2)]);
  });

  it('round-trips through JSON unchanged', () => {
    expect(validateSpec(JSON.parse(JSON.stringify(MMA_PROBE)))).toEqual(MMA_PROBE);
  });
});

type Edit = (statement: Record<string, unknown>) => void;
const set =
  (field: string, value: unknown): Edit =>
  (statement) => {
    statement[field] = value;
  };
const u32 = (value: number) => ({ op: 'const', type: 'u32', value });
const f32 = (value: number) => ({ op: 'const', type: 'f32', value });

describe('mma validation', () => {
  const rejections: readonly (readonly [string, Edit, string, RegExp])[] = [
    ['an unknown shape', set('shape', 'm16n8k8'), 'shape', /must be one of m16n8k16/],
    ['three a words', set('a', [u32(0), u32(0), u32(0)]), 'a', /array of 4 u32 values for m16n8k16/],
    ['one b word', set('b', [u32(0)]), 'b', /array of 2 u32 values for m16n8k16/],
    ['an f32 among the a words', set('a', [u32(0), f32(0), u32(0), u32(0)]), 'a[1]', /u32 is required/],
    ['a u32 among the c values', set('c', [f32(0), f32(0), f32(0), u32(0)]), 'c[3]', /f32 is required/],
    ['two names', set('names', ['x', 'y']), 'names', /array of 4 local names/],
    ['a name taken by a buffer', set('names', ['d0', 'a', 'd2', 'd3']), 'names[1]', /already a buffer/],
  ]; // prettier-ignore
  it.each(rejections)('rejects %s, naming the field', (_name, edit, field, message) => {
    const issues = checkSpec(probeWith(edit));
    const issue = issues.find((candidate) => candidate.path === `${mmaPath()}.${field}`);
    expect(issue?.message, JSON.stringify(issues)).toMatch(message);
  });

  it('rejects an mma in control flow that differs between lanes, naming its path', () => {
    const json = JSON.parse(JSON.stringify(MMA_PROBE)) as { body: unknown[] };
    const index = json.body.findIndex((s) => (s as { op: string }).op === 'for');
    // if (lane_id < 16) { for … { mma } }: half the warp would skip it.
    json.body[index] = {
      op: 'if',
      condition: { op: 'lt', type: 'bool', args: [{ op: 'builtin', type: 'u32', name: 'lane_id' }, u32(16)] }, // prettier-ignore
      then: [json.body[index]],
      else: [],
    };
    const issues = checkSpec(json);
    const inner = mmaPath().replace(/^body\[\d+\]/, `body[${index}].then[0]`);
    expect(issues).toEqual([
      {
        path: inner,
        message: expect.stringMatching(/mma in control flow that is not uniform across the warp/),
      },
    ]);
  });

  it('accepts an mma in warp-uniform control flow, and rejects a workgroup of 48', () => {
    const json = JSON.parse(JSON.stringify(MMA_PROBE)) as {
      body: unknown[];
      launch: { workgroupSize: string };
    };
    const index = json.body.findIndex((s) => (s as { op: string }).op === 'for');
    json.body[index] = {
      op: 'if',
      condition: { op: 'lt', type: 'bool', args: [{ op: 'builtin', type: 'u32', name: 'warp_id' }, u32(1)] }, // prettier-ignore
      then: [json.body[index]],
      else: [],
    };
    expect(checkSpec(json)).toEqual([]);
    json.launch.workgroupSize = '48';
    expect(() => resolveSchedule(validateSpec(json), 'ptx', {})).toThrow(
      /launch\.workgroupSize: 48 is not a multiple of the 32-lane warp .*mma/,
    );
  });
});
