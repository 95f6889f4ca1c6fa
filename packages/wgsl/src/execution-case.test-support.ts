import { expect } from 'vitest';
import type { ElementArray, GeneratedShader } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs, normalizedMse } from '@forge/ir/kernels';
import type { ExecutionCase } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { runWgsl, type WebGpuContext } from './runner/index.js';
import { wgslTarget, type WgslFeature } from './targets.js';
import { runWgslOnCpu } from './wgsl-interpreter/run.test-support.js';

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
  agreement: InterpreterAgreement = 'bits',
): Promise<void> {
  const kernel = getKernel(testCase.kernelId);
  const buffers = makeCaseInputs(kernel, testCase);
  await runWgsl(context, shader, { buffers, params: kernel.params(testCase.shape) });
  if ((shader.launch.requiredFeatures ?? []).includes('subgroups'))
    expectInterpreterMatchesDevice(context, testCase, shader, buffers, agreement);
  const check = checkCase(kernel, testCase, buffers);
  expect(check.nmse).toBeLessThanOrEqual(check.tolerance);
  // Not vacuous: the kernel wrote its outputs (outputs start zeroed; a NaN written counts).
  const written = kernel.outputs.some((name) =>
    Array.from(buffers[name] ?? []).some((value) => value !== 0),
  );
  expect(written).toBe(true);
}

// lavapipe's exp2 and log2 differ from the correctly rounded ones the interpreter uses (WGSL allows
// 3 + 2|x| ulp); its sqrt and division, which WGSL also lets be inexact, are found to match.
const APPROXIMATE_BUILTINS = /\b(exp2|log2)\(/;

/**
 * How closely the interpreter must reproduce a device: `bits` (Dawn on lavapipe: bit for bit, as
 * measured, or within 1e-12 relative squared error where the shader calls exp2 or log2, quantized
 * words within their reference tolerance) or
 * `rounding` (SwiftShader, whose quantized mat-vecs differ in the last bits: within 1e-10).
 */
export type InterpreterAgreement = 'bits' | 'rounding';

/**
 * The interpreter (src/wgsl-interpreter) at the adapter's subgroup size and with an unfused `fma`
 * (lavapipe and SwiftShader round the product first) gives the device's outputs, as closely as
 * `agreement` says: the check that its results at the subgroup sizes no adapter here has
 * (subgroup-sizes-interpreted.test.ts) can be trusted.
 */
export function expectInterpreterMatchesDevice(
  context: WebGpuContext,
  testCase: ExecutionCase,
  shader: GeneratedShader,
  deviceBuffers: Readonly<Record<string, ElementArray>>,
  agreement: InterpreterAgreement,
): void {
  const kernel = getKernel(testCase.kernelId);
  const { subgroupMinSize, subgroupMaxSize } = context.adapter.info;
  expect(subgroupMinSize, 'the adapter runs one subgroup size').toBe(subgroupMaxSize);
  const buffers = makeCaseInputs(kernel, testCase);
  runWgslOnCpu(
    shader,
    { buffers, params: kernel.params(testCase.shape) },
    { subgroupSize: subgroupMinSize ?? Number.NaN, fusedFma: false },
  );
  const exact = agreement === 'bits' && !APPROXIMATE_BUILTINS.test(shader.source);
  const bound = agreement === 'bits' ? 1e-12 : 1e-10;
  for (const name of kernel.outputs) {
    const device = deviceBuffers[name];
    const interpreted = buffers[name];
    if (device === undefined || interpreted === undefined) throw new Error(`no output ${name}`);
    // Object.is: -0 is not +0, and a NaN matches any NaN (a JS number need not keep its payload).
    const differing = Array.from(device).findIndex(
      (theirs, index) => !Object.is(interpreted[index], theirs),
    );
    const relative = normalizedMse(interpreted, device);
    const where = `${name}[${differing}]: interpreter ${interpreted[differing]}, device ${device[differing]}; relative squared error ${relative.toExponential(2)}`;
    // Words quantized from inexact values (exp2's last bit) may round a tie the other way: such an
    // output agrees within its own reference tolerance.
    const within = Math.max(bound, kernel.outputTolerance?.[name] ?? 0);
    if (exact) expect(differing, where).toBe(-1);
    // Identical outputs agree even where the error is not finite (an argmax of NaN logits).
    else if (differing !== -1) expect(relative, where).toBeLessThanOrEqual(within);
  }
}
