import { describe, expect, it } from 'vitest';
import { sdpaDecode, sdpaDecodeF32 } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Issue #13: zero spills at every schedule in the PTX bounds (the knob only sizes shared memory
// and the loops, so the golden archs at each value cover it).
const RUNS = [sdpaDecode, sdpaDecodeF32].flatMap((kernel) => {
  const bounds = kernel.spec.schedule.find((knob) => knob.name === 'warps')?.bounds?.['ptx'];
  const warps = Array.from(
    { length: (bounds?.max ?? 0) - (bounds?.min ?? 1) + 1 },
    (_, i) => i + 1,
  );
  return warps.flatMap((count) =>
    (['sm_75', 'sm_80', 'sm_90'] as const).map(
      (arch) => [`${kernel.spec.id} warps=${count} on ${arch}`, kernel, count, arch] as const,
    ),
  );
});

describe('sdpa-decode at every in-bounds schedule', () => {
  it('takes 1 to 8 warps on PTX', () => {
    expect(
      RUNS.filter(([, kernel, , arch]) => kernel === sdpaDecode && arch === 'sm_80'),
    ).toHaveLength(8);
  });

  it.each(RUNS)('%s assembles without spills', (_name, kernel, warps, arch) => {
    const shader = emitPtx(kernel.spec, { warps }, ptxTarget(arch));
    const result = assemblePtx(shader.source, arch);
    expect(result.ok).toBe(true);
    expect(result.spillStores + result.spillLoads).toBe(0);
  });
});
