import { describe, expect, it } from 'vitest';
import { f16Gemv, f32Gemv } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

const ARCHS = ['sm_75', 'sm_80', 'sm_90'] as const;
const bounds = (name: string) =>
  f32Gemv.spec.schedule.find((knob) => knob.name === name)?.bounds?.['ptx'];
const [groups, vectors] = [bounds('workgroupSize'), bounds('vectors')];
const vectorCounts = Array.from(
  { length: (vectors?.max ?? 0) - (vectors?.min ?? 1) + 1 },
  (_, i) => i + (vectors?.min ?? 1),
);
// Every vector count at both ends of the group size (it only sizes the grid and the row stride).
const SCHEDULES = [groups?.min, groups?.max].flatMap((workgroupSize) =>
  vectorCounts.map((count) => ({ workgroupSize, vectors: count })),
);
const RUNS = [f32Gemv, f16Gemv].flatMap((kernel) =>
  SCHEDULES.flatMap((schedule) =>
    ARCHS.map(
      (arch) =>
        [
          `${kernel.spec.id} ${JSON.stringify(schedule)} on ${arch}`,
          kernel,
          schedule as Record<string, number>,
          arch,
        ] as const,
    ),
  ),
);

describe('f32-gemv and f16-gemv at the ends of their PTX bounds', () => {
  it('bounds 32 to 512 threads and 1 to 4 vectors a step', () => {
    expect([groups?.min, groups?.max]).toEqual([32, 512]);
    expect(vectorCounts).toEqual([1, 2, 3, 4]);
    // The same knobs and bounds; f16 keeps 4 vectors in flight by default, f32 2.
    const knobs = (kernel: typeof f32Gemv) =>
      kernel.spec.schedule.map(({ name, bounds: range }) => ({ name, range }));
    expect(knobs(f16Gemv)).toEqual(knobs(f32Gemv));
    const defaults = (kernel: typeof f32Gemv) =>
      kernel.spec.schedule.map((knob) => [knob.name, knob.default]);
    expect(defaults(f16Gemv)).toEqual([
      ['workgroupSize', 256],
      ['vectors', 4],
    ]);
    expect(defaults(f32Gemv)).toEqual([
      ['workgroupSize', 256],
      ['vectors', 2],
    ]);
  });

  it.each(RUNS)(
    '%s assembles without spills, W in 16-byte loads',
    (_name, kernel, schedule, arch) => {
      const shader = emitPtx(kernel.spec, schedule, ptxTarget(arch));
      expect(shader.source).toMatch(/ld\.global(\.nc)?\.v4\.(f32|u32|b32)/);
      const result = assemblePtx(shader.source, arch);
      expect(result.ok).toBe(true);
      expect(result.spillStores + result.spillLoads).toBe(0);
    },
  );
});
