import { describe, expect, it } from 'vitest';
import { GET_ROWS_KERNELS } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Every get-rows kernel assembles without spills at both ends of its workgroupSize bounds.
const KERNELS = Object.values(GET_ROWS_KERNELS).filter((kernel) => kernel !== undefined);
const RUNS = KERNELS.flatMap((kernel) => {
  const bounds = kernel.spec.schedule.find((knob) => knob.name === 'workgroupSize')?.bounds?.[
    'ptx'
  ];
  return [bounds?.min ?? 0, bounds?.max ?? 0].flatMap((size) =>
    (['sm_75', 'sm_90'] as const).map(
      (arch) => [`${kernel.spec.id} workgroupSize=${size} on ${arch}`, kernel, size, arch] as const,
    ),
  );
});

describe('get-rows at its schedule bounds', () => {
  it('runs five kernels at 32 and 1024 threads', () => {
    expect(KERNELS.map((kernel) => kernel.spec.id)).toEqual([
      'get-rows-f32',
      'get-rows-f16',
      'get-rows-q8_0',
      'get-rows-q4k',
      'get-rows-q6k',
    ]);
    expect(new Set(RUNS.map(([, , size]) => size))).toEqual(new Set([32, 1024]));
  });

  it.each(RUNS)('%s assembles without spills', (_name, kernel, workgroupSize, arch) => {
    const shader = emitPtx(kernel.spec, { workgroupSize }, ptxTarget(arch));
    const result = assemblePtx(shader.source, arch);
    expect(result.ok).toBe(true);
    expect(result.spillStores + result.spillLoads).toBe(0);
  });
});
