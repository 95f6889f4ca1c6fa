import { expect } from 'vitest';
import type { GeneratedShader } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import type { ExecutionCase } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { runWgsl, type WebGpuContext } from './runner/index.js';
import { wgslTarget, type WgslFeature } from './targets.js';

// What the WebGPU execution suites (Dawn in Node, Chromium in the browser) share: the feature
// sets, how a case's shader is emitted, and how its outputs are checked.

/**
 * The feature sets WGSL goldens are pinned for (packages/cli/src/golden/entries.ts): warps emulated
 * in workgroup memory, and with subgroup shuffles.
 */
export const GOLDEN_FEATURE_SETS: readonly (readonly WgslFeature[])[] = [[], ['f16', 'subgroups']];

/** The case's kernel emitted for a feature set, at the case's schedule. */
export function caseShader(
  testCase: ExecutionCase,
  features: readonly WgslFeature[],
): GeneratedShader {
  const kernel = getKernel(testCase.kernelId);
  return emitWgsl(kernel.spec, testCase.schedule, wgslTarget(features));
}

/**
 * Runs the case's shader on the context over the case's seeded inputs; asserts the outputs are
 * within the kernel's tolerance of its float64 reference and not all zero.
 */
export async function expectCaseMatchesReference(
  context: WebGpuContext,
  testCase: ExecutionCase,
  shader: GeneratedShader,
): Promise<void> {
  const kernel = getKernel(testCase.kernelId);
  const buffers = makeCaseInputs(kernel, testCase);
  await runWgsl(context, shader, { buffers, params: kernel.params(testCase.shape) });
  const check = checkCase(kernel, testCase, buffers);
  expect(check.nmse).toBeLessThanOrEqual(kernel.tolerance);
  // Not vacuous: the kernel wrote its outputs.
  const energy = kernel.outputs.reduce(
    (sum, name) =>
      sum + Array.from(buffers[name] ?? []).reduce((total, value) => total + value * value, 0),
    0,
  );
  expect(energy).toBeGreaterThan(0);
}
