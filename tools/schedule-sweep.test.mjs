// Every catalog kernel's PTX schedule bounds admit only schedules ptxas assembles without spilling.
// `pnpm test:full` (CI) runs the whole sweep here, every schedule on every arch (~6,000 modules, 16
// a ptxas run); `pnpm test` leaves this file out.
import { describe, expect, it } from 'vitest';
import { formatSchedule } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { PTX_ARCHS } from '@forge/ptx';
import {
  countOutcomes,
  formatSweep,
  knobValues,
  parseArguments,
  ptxKnobValues,
  ptxSchedules,
  runSweep,
  sweepBatches,
  sweepCases,
} from './schedule-sweep.mjs';

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

  it('cuts the cases into batches of one arch, in order', () => {
    const cases = sweepCases({ kernels: ['rmsnorm'], archs: ['sm_75', 'sm_80'] });
    const batches = sweepBatches(cases, 16);
    expect(batches.flat().toSorted((a, b) => a - b)).toEqual(cases.map((_, index) => index));
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(16);
      expect(new Set(batch.map((index) => cases[index].arch)).size).toBe(1);
      expect(batch).toEqual(batch.toSorted((a, b) => a - b));
    }
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
    // In one batch with a clean schedule: the spill is the wide schedule's alone.
    const [result, narrow] = await runSweep([
      { kernelId: spec.id, spec, schedule: { workgroupSize: 1024 }, arch: 'sm_80' },
      { kernelId: spec.id, spec, schedule: { workgroupSize: 128 }, arch: 'sm_80' },
    ]);
    expect(result.outcome).toBe('spill');
    expect(result.spillBytes).toBeGreaterThan(0);
    expect(narrow.outcome).toBe('clean');
    expect(formatSweep([result])).toMatch(
      /^SPILL q6k-soa-gemv sm_80 workgroupSize=1024: Used \d+ registers/m,
    );
  });

  it('assembles every kernel at every in-bounds schedule on every arch: no spills, no failures', async () => {
    const cases = sweepCases();
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
  }, 1_200_000);

  it('reads its options, answers --help, and names a bad option', () => {
    expect(parseArguments(['--help'])).toBe('help');
    expect(parseArguments(['-h'])).toBe('help');
    expect(
      parseArguments([
        '--kernel',
        'rmsnorm',
        '--arch',
        'sm_80',
        '--concurrency',
        '3',
        '--batch',
        '1',
      ]),
    ).toEqual({ kernels: ['rmsnorm'], archs: ['sm_80'], concurrency: 3, batch: 1 });
    expect(parseArguments([]).batch).toBe(16);
    expect(() => parseArguments(['--kernel'])).toThrow('--kernel needs a value');
    expect(() => parseArguments(['--arch', 'sm_99'])).toThrow(
      'unknown option or value: --arch sm_99',
    );
  });
});
