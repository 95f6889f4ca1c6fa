import { describe, expect, it } from 'vitest';
import { sdpaDecode, sdpaDecodeF32 } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

/** The PTX values a knob's bounds allow (powers of two only where the bounds say so). */
function ptxValues(kernel: typeof sdpaDecode, name: string): number[] {
  const bounds = kernel.spec.schedule.find((knob) => knob.name === name)?.bounds?.['ptx'];
  const values: number[] = [];
  for (let value = bounds?.min ?? 1; value <= (bounds?.max ?? 0); value++)
    if (bounds?.powerOfTwo !== true || (value & (value - 1)) === 0) values.push(value);
  return values;
}

// Issue #13: zero spills at every schedule in the PTX bounds. Splits only sizes the grid and the
// scratch; warps and heads shape the code: every warps value at the default heads, and every
// heads value at the fewest and most warps (registers grow with heads, not with warps).
const RUNS = [sdpaDecode, sdpaDecodeF32].flatMap((kernel) => {
  const warps = ptxValues(kernel, 'warps');
  const heads = ptxValues(kernel, 'heads');
  const schedules = [
    ...warps.map((count) => ({ warps: count, heads: 4 })),
    ...heads
      .filter((count) => count !== 4)
      .flatMap((count) => [warps[0]!, warps.at(-1)!].map((w) => ({ warps: w, heads: count }))),
  ];
  return schedules.flatMap((schedule) =>
    (['sm_75', 'sm_80', 'sm_90'] as const).map(
      (arch) =>
        [
          `${kernel.spec.id} warps=${schedule.warps} heads=${schedule.heads} on ${arch}`,
          kernel,
          schedule,
          arch,
        ] as const,
    ),
  );
});

describe('sdpa-decode at every in-bounds schedule', () => {
  it('takes 1, 2, 4 or 8 warps and 1, 2, 4 or 8 heads on PTX', () => {
    expect(ptxValues(sdpaDecode, 'warps')).toEqual([1, 2, 4, 8]);
    expect(ptxValues(sdpaDecode, 'heads')).toEqual([1, 2, 4, 8]);
    expect(
      RUNS.filter(([, kernel, , arch]) => kernel === sdpaDecode && arch === 'sm_80'),
    ).toHaveLength(4 + 3 * 2);
  });

  it.each(RUNS)('%s assembles without spills', (_name, kernel, schedule, arch) => {
    const shader = emitPtx(kernel.spec, schedule, ptxTarget(arch));
    const result = assemblePtx(shader.source, arch);
    expect(result.ok).toBe(true);
    expect(result.spillStores + result.spillLoads).toBe(0);
  });
});
