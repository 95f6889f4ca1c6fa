import { describe, expect, it } from 'vitest';
import { CATALOG } from '@forge/ir/kernels';
import { GOLDEN_ENTRIES, goldenFileName } from './entries.js';

describe('golden entries derived from the catalog', () => {
  it('are the 31 pinned files, in manifest order', () => {
    const kernels = ['affine-f32', 'rmsnorm', 'q8_0-gemv', 'q4k-gemv', 'q6k-gemv', 'q6k-soa-gemv'];
    expect(GOLDEN_ENTRIES.map(goldenFileName)).toEqual([
      ...kernels.flatMap((id) =>
        ['sm_75', 'sm_80', 'sm_90'].map((arch) => `ptx/${id}.${arch}.ptx`),
      ),
      'ptx/rmsnorm.sm_80.workgroupSize-128.ptx',
      ...kernels.flatMap((id) => [`wgsl/${id}.wgsl`, `wgsl/${id}.f16-subgroups.wgsl`]),
    ]);
    expect(GOLDEN_ENTRIES).toHaveLength(31);
  });

  it("pin each kernel's declared extra schedules and nothing else off the default", () => {
    const extra = GOLDEN_ENTRIES.filter((entry) => Object.keys(entry.schedule).length > 0);
    const declared = [...CATALOG.values()].flatMap((kernel) =>
      Object.values(kernel.goldenSchedules ?? {}).flatMap((schedules) =>
        schedules.map((schedule) => ({ kernelId: kernel.spec.id, schedule })),
      ),
    );
    expect(extra.map(({ kernelId, schedule }) => ({ kernelId, schedule }))).toEqual(declared);
  });
});
