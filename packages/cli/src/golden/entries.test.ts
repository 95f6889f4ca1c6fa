import { describe, expect, it } from 'vitest';
import { CATALOG } from '@forge/ir/kernels';
import { GOLDEN_SCHEDULES, goldenEntries, goldenFileName } from './entries.js';

describe('golden entries derived from the catalog', () => {
  it('pin every catalog kernel on sm_75/sm_80/sm_90 and WGSL with and without f16+subgroups', () => {
    const ids = [...CATALOG.keys()];
    const extra = (kind: 'ptx' | 'wgsl', target: readonly string[]) =>
      [...CATALOG.values()].flatMap((kernel) =>
        (GOLDEN_SCHEDULES[kernel.spec.id]?.[kind] ?? []).map((schedule) => {
          const knobs = Object.entries(schedule).map(([name, value]) => `${name}-${value}`);
          return `${kind}/${[kernel.spec.id, ...target, ...knobs].join('.')}.${kind}`;
        }),
      );
    expect(goldenEntries().map(goldenFileName)).toEqual([
      ...ids.flatMap((id) => ['sm_75', 'sm_80', 'sm_90'].map((arch) => `ptx/${id}.${arch}.ptx`)),
      ...extra('ptx', ['sm_80']),
      ...ids.flatMap((id) => [`wgsl/${id}.wgsl`, `wgsl/${id}.f16-subgroups.wgsl`]),
      ...extra('wgsl', []),
    ]);
    // Today: 6 kernels on 5 targets, plus rmsnorm at workgroupSize=128 on sm_80.
    expect(goldenEntries().map(goldenFileName)).toContain(
      'ptx/rmsnorm.sm_80.workgroupSize-128.ptx',
    );
  });

  it('name catalog kernels only in the table of extra schedules', () => {
    const unknown = Object.keys(GOLDEN_SCHEDULES).filter((id) => !CATALOG.has(id));
    expect(unknown).toEqual([]);
    expect(Object.keys(GOLDEN_SCHEDULES).length).toBeGreaterThan(0);
    // packages/wgsl's browser suite runs the WGSL golden cases at the default schedule only.
    const wgsl = Object.keys(GOLDEN_SCHEDULES).filter((id) => GOLDEN_SCHEDULES[id]?.wgsl);
    expect(wgsl, 'a WGSL golden schedule needs execution.browser.test.ts to run it').toEqual([]);
  });

  it("pin each kernel's declared extra schedules and nothing else off the default", () => {
    const extra = goldenEntries().filter((entry) => Object.keys(entry.schedule).length > 0);
    const declared = [...CATALOG.values()].flatMap((kernel) =>
      Object.values(GOLDEN_SCHEDULES[kernel.spec.id] ?? {}).flatMap((schedules) =>
        schedules.map((schedule) => ({ kernelId: kernel.spec.id, schedule })),
      ),
    );
    expect(extra.map(({ kernelId, schedule }) => ({ kernelId, schedule }))).toEqual(declared);
  });
});
