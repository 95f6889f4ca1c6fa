import { describe, expect, it } from 'vitest';
import { addF32, argmax, siluMul } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Issue #15: add, silu-mul and argmax assemble without spills at both ends of their one knob.
const KERNELS = [addF32, siluMul, argmax];
const RUNS = KERNELS.flatMap((kernel) =>
  [32, 256, 1024].flatMap((workgroupSize) =>
    (['sm_75', 'sm_80', 'sm_90'] as const).map(
      (arch) => [`${kernel.spec.id} workgroupSize=${workgroupSize} on ${arch}`, kernel, workgroupSize, arch] as const, // prettier-ignore
    ),
  ),
);

describe('add, silu-mul and argmax at the bounds of workgroupSize', () => {
  it('bound workgroupSize to whole warps from 32 to 1024 on PTX', () => {
    for (const kernel of KERNELS) {
      const knob = kernel.spec.schedule.find((entry) => entry.name === 'workgroupSize');
      expect(knob?.bounds?.['ptx']).toEqual({ min: 32, max: 1024, multipleOf: 32 });
    }
  });

  it.each(RUNS)('%s assembles without spills', (_name, kernel, workgroupSize, arch) => {
    const shader = emitPtx(kernel.spec, { workgroupSize }, ptxTarget(arch));
    const result = assemblePtx(shader.source, arch);
    expect(result.ok).toBe(true);
    expect(result.spillStores + result.spillLoads).toBe(0);
  });

  it('moves their data in 16-byte loads and stores (add, silu-mul) and loads (argmax)', () => {
    const expected = [
      [addF32, 2, 1],
      [siluMul, 2, 1],
      // argmax: four loads in flight a thread before it ranks any.
      [argmax, 4, 0],
    ] as const;
    for (const [kernel, loads, stores] of expected) {
      const { source } = emitPtx(kernel.spec, {}, ptxTarget('sm_80'));
      expect(source.match(/ld\.global\.nc\.v4\.f32/g)?.length ?? 0).toBe(loads);
      expect(source.match(/st\.global\.v4\.f32/g)?.length ?? 0).toBe(stores);
    }
  });
});
