import { describe, expect, it } from 'vitest';
import { getKernel } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Issue #14: zero spills at every schedule in the PTX bounds (`warps` only sizes shared memory and
// the split of K, so the golden archs at each value cover it). sm_75 runs two m16n8k8 an mma (ISA
// 6.5), newer archs one m16n8k16: never the shuffle lowering, whose idx shuffles would show; the
// only ones are q4k-soa-wmma's 8 that hand round a block's meta words.
const KERNELS = [
  { id: 'wmma-gemv', idxShuffles: 0 },
  { id: 'q4k-soa-wmma', idxShuffles: 8 },
];

for (const { id, idxShuffles } of KERNELS) {
  const spec = getKernel(id).spec;
  const bounds = spec.schedule.find((knob) => knob.name === 'warps')?.bounds?.['ptx'];
  const warpCounts = Array.from(
    { length: (bounds?.max ?? 0) - (bounds?.min ?? 1) + 1 },
    (_, i) => i + (bounds?.min ?? 1),
  );
  const runs = warpCounts.flatMap((warps) =>
    (['sm_75', 'sm_80', 'sm_90'] as const).map(
      (arch) => [`warps=${warps} on ${arch}`, warps, arch] as const,
    ),
  );

  describe(`${id} at every in-bounds schedule`, () => {
    it('takes 1 to 8 warps on PTX', () => {
      expect(warpCounts).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it.each(runs)('%s assembles without spills, on tensor cores', (_name, warps, arch) => {
      const shader = emitPtx(spec, { warps }, ptxTarget(arch));
      const form = arch === 'sm_75' ? 'm16n8k8' : 'm16n8k16';
      expect(shader.source).toContain(`mma.sync.aligned.${form}.row.col.f32.f16.f16.f32`);
      expect(shader.source.split('shfl.sync.idx').length - 1).toBe(idxShuffles);
      const result = assemblePtx(shader.source, arch);
      expect(result.ok).toBe(true);
      expect(result.spillStores + result.spillLoads).toBe(0);
    });
  });
}
