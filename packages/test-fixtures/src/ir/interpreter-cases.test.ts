import { interpret, resolveSchedule } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { describe, expect, it } from 'vitest';
import { executionCasesFor } from '../execution-cases.js';
import { testTier } from '../test-tier.js';

// Every case in `pnpm test:full`, one a kernel in `pnpm test` (see executionCasesFor).
const CASES = executionCasesFor('interpreter', testTier());

describe('execution cases on the interpreter', () => {
  it.each(CASES.map((testCase) => [testCase.name, testCase] as const))('%s', (_name, testCase) => {
    const catalogKernel = getKernel(testCase.kernelId);
    const buffers = makeCaseInputs(catalogKernel, testCase);
    const schedule = resolveSchedule(catalogKernel.spec, 'ptx', testCase.schedule);
    const params = catalogKernel.params(testCase.shape);
    interpret(catalogKernel.spec, { schedule, params, buffers });
    const check = checkCase(catalogKernel, testCase, buffers);
    const tolerances = [
      catalogKernel.tolerance,
      ...Object.values(catalogKernel.outputTolerance ?? {}),
    ];
    expect(tolerances).toContain(check.tolerance);
    expect(check.nmse).toBeLessThanOrEqual(check.tolerance);
    // The comparison is not vacuous: the kernel wrote non-zero results (a NaN counts).
    const written = catalogKernel.outputs.some((name) =>
      Array.from(buffers[name] ?? []).some((value) => value !== 0),
    );
    expect(written).toBe(true);
  });
});
