// Every catalog kernel's PTX schedule bounds admit only schedules ptxas assembles without spilling.
// The full sweep (`pnpm sweep:schedules`, 3,000 ptxas runs) takes minutes on a shared 2-core
// machine, so this runs its edges and a seeded sample on every arch.
import { describe, expect, it } from 'vitest';
import { formatSchedule } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { PTX_ARCHS } from '@forge/ptx';
import {
  countOutcomes,
  edgeSchedules,
  formatSweep,
  knobValues,
  parseArguments,
  ptxKnobValues,
  ptxSchedules,
  quickCases,
  runSweep,
  sampledSchedules,
  sweepCases,
} from './schedule-sweep.mjs';

/** Workgroup sizes at which ptxas 13.0 spilled q6k-soa-gemv before its bounds left them out. */
const SPILLED_BEFORE = [96, 416, 480, 512, 608, 640];

describe('schedule sweep', () => {
  it('enumerates the cross product of every knob on every arch', () => {
    expect(knobValues({ min: 32, max: 1024, multipleOf: 32 })).toHaveLength(32);
    expect(knobValues({ min: 1, max: 64, powerOfTwo: true })).toEqual([1, 2, 4, 8, 16, 32, 64]);
    // A knob without ptx bounds is swept at its default only.
    const wgslOnly = { name: 'x', default: 7, bounds: { wgsl: { min: 1, max: 8 } } };
    expect(ptxKnobValues(wgslOnly)).toEqual([7]);
    expect(ptxKnobValues({ name: 'x', default: 3 })).toEqual([3]);
    // sdpa-decode: warps 1-8, splits 1-64 and heads 1-8, powers of two.
    const sdpa = CATALOG.get('sdpa-decode').spec;
    expect(ptxSchedules(sdpa)).toHaveLength(4 * 7 * 4);
    const expected = [...CATALOG.values()].reduce(
      (sum, { spec }) =>
        sum + spec.schedule.reduce((product, knob) => product * ptxKnobValues(knob).length, 1),
      0,
    );
    const cases = sweepCases();
    expect(cases).toHaveLength(expected * PTX_ARCHS.length);
    const keys = cases.map((c) => `${c.kernelId} ${c.arch} ${formatSchedule(c.schedule)}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('samples edges and seeded schedules, the same for the same seed', () => {
    const sdpa = CATALOG.get('sdpa-decode').spec;
    const edges = edgeSchedules(sdpa).map(formatSchedule);
    for (const edge of [
      'heads=4,splits=64,warps=1',
      'heads=1,splits=1,warps=1',
      'heads=8,splits=64,warps=8',
    ])
      expect(edges).toContain(edge);
    expect(sampledSchedules(sdpa, 5, 7)).toEqual(sampledSchedules(sdpa, 5, 7));
    expect(sampledSchedules(sdpa, 5, 7)).not.toEqual(sampledSchedules(sdpa, 5, 8));
    expect(sampledSchedules(sdpa, 200, 7)).toHaveLength(4 * 7 * 4);
  });

  it('finds the spill that widened bounds would let through (issue #10 item 8)', async () => {
    // q6k-soa-gemv with PTX workgroup sizes up to 1024: at 1024 threads an SM's registers allow 64
    // a thread, under the ~115 the kernel wants (a step's loads in flight), so ptxas spills on sm_80.
    const soa = CATALOG.get('q6k-soa-gemv').spec;
    const wide = { min: 32, max: 1024, multipleOf: 32 };
    const schedule = soa.schedule.map((knob) =>
      knob.name === 'workgroupSize' ? { ...knob, bounds: { ...knob.bounds, ptx: wide } } : knob,
    );
    const spec = { ...soa, schedule };
    const [result] = await runSweep([
      {
        kernelId: spec.id,
        spec,
        schedule: { workgroupSize: 1024 },
        arch: 'sm_80',
      },
    ]);
    expect(result.outcome).toBe('spill');
    expect(result.spillBytes).toBeGreaterThan(0);
    expect(formatSweep([result])).toMatch(
      /^SPILL q6k-soa-gemv sm_80 workgroupSize=1024: Used \d+ registers/m,
    );
  });

  it('assembles every kernel at its edge and sampled schedules on every arch: no spills, no failures', async () => {
    const cases = quickCases({ seed: 10, perArch: 3, workgroupSizes: SPILLED_BEFORE });
    for (const { spec } of CATALOG.values())
      for (const arch of PTX_ARCHS)
        expect(cases.some((c) => c.kernelId === spec.id && c.arch === arch)).toBe(true);
    const results = await runSweep(cases, { concurrency: 2 });
    const problems = results.filter((result) => result.outcome !== 'clean');
    // The report's line for each problem, so a failure shows which schedules and why.
    expect(problems.map((problem) => formatSweep([problem]).split('\n').at(-1))).toEqual([]);
    expect(countOutcomes(results)).toEqual({
      clean: cases.length,
      spill: 0,
      'ptxas-error': 0,
      'emit-error': 0,
    });
    for (const result of results) expect(result.registers).toBeGreaterThan(0);
  }, 600_000);

  it('reads its options, answers --help, and names a bad option', () => {
    expect(parseArguments(['--help'])).toBe('help');
    expect(parseArguments(['-h'])).toBe('help');
    expect(
      parseArguments(['--kernel', 'rmsnorm', '--arch', 'sm_80', '--concurrency', '3']),
    ).toEqual({ kernels: ['rmsnorm'], archs: ['sm_80'], concurrency: 3 });
    expect(() => parseArguments(['--kernel'])).toThrow('--kernel needs a value');
    expect(() => parseArguments(['--arch', 'sm_99'])).toThrow(
      'unknown option or value: --arch sm_99',
    );
  });
});
