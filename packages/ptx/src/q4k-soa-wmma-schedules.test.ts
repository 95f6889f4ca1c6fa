import { describe, expect, it } from 'vitest';
import { q4kSoaWmma } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Issue #14: zero spills at every schedule in the PTX bounds (`warps` only sizes shared memory and
// the split of K, so the golden archs at each value cover it).
const bounds = q4kSoaWmma.spec.schedule.find((knob) => knob.name === 'warps')?.bounds?.['ptx'];
const RUNS = Array.from(
  { length: (bounds?.max ?? 0) - (bounds?.min ?? 1) + 1 },
  (_, i) => i + (bounds?.min ?? 1),
).flatMap((warps) =>
  (['sm_75', 'sm_80', 'sm_90'] as const).map(
    (arch) => [`warps=${warps} on ${arch}`, warps, arch] as const,
  ),
);

describe('q4k-soa-wmma at every in-bounds schedule', () => {
  it('takes 1 to 8 warps on PTX', () => {
    expect(RUNS.filter(([, , arch]) => arch === 'sm_80').map(([, warps]) => warps)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
  });

  it.each(RUNS)('%s assembles without spills, on tensor cores', (_name, warps, arch) => {
    const shader = emitPtx(q4kSoaWmma.spec, { warps }, ptxTarget(arch));
    // sm_75 runs two m16n8k8 an mma (ISA 6.5), newer archs one m16n8k16; the only shuffles are the 8
    // that hand round a block's meta words (the mma's shuffle lowering would add hundreds).
    const form = arch === 'sm_75' ? 'm16n8k8' : 'm16n8k16';
    expect(shader.source).toContain(`mma.sync.aligned.${form}.row.col.f32.f16.f16.f32`);
    expect(shader.source.split('shfl.sync.idx').length - 1).toBe(8);
    const result = assemblePtx(shader.source, arch);
    expect(result.ok).toBe(true);
    expect(result.spillStores + result.spillLoads).toBe(0);
  });
});
