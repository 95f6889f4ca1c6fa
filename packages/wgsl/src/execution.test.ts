import { afterAll, describe, expect, it } from 'vitest';
import { executionCasesFor, testTier } from '@forge/test-fixtures';
import {
  GOLDEN_FEATURE_SETS,
  caseShader,
  expectCaseMatchesReference,
} from './execution-case.test-support.js';
import { closeSharedWebGpu, sharedWebGpu } from './runner/index.js';

afterAll(closeSharedWebGpu);

// The execution suite shared by every engine, instantiated here for WebGPU (Dawn on lavapipe)
// once per golden feature set (every case in `pnpm test:full`, one a kernel in `pnpm test`);
// src/execution.browser.test.ts runs every case in headless Chromium.
// subgroup-sizes.test.ts leaves lavapipe's own size to this suite: every subgroup case below runs
// at it, so it must be one size, the 8 lanes of its default 256-bit vectors.
describe('the adapter the subgroup cases run on', () => {
  it('runs subgroups of exactly 8 lanes', async () => {
    const context = await sharedWebGpu(['subgroups']);
    const { subgroupMinSize, subgroupMaxSize } = context.adapter.info;
    expect(
      [subgroupMinSize, subgroupMaxSize],
      `${context.description}: LP_NATIVE_VECTOR_WIDTH must be unset or 256`,
    ).toEqual([8, 8]);
  });
});

for (const features of GOLDEN_FEATURE_SETS) {
  describe(`execution cases on WebGPU, features ${features.join(',') || 'none'}`, () => {
    it.each(
      executionCasesFor('webgpu', testTier()).map((testCase) => [testCase.name, testCase] as const),
    )(
      '%s',
      async (_name, testCase) => {
        const shader = caseShader(testCase, features);
        const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
        await expectCaseMatchesReference(context, testCase, shader);
      },
      // lavapipe compiles the largest attention shaders (heads=8) in ~40 s alone, more beside
      // the other suites.
      180_000,
    );
  });
}
