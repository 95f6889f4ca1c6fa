/// <reference types="webgpu" preserve="true" />
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedShader } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { executionCasesFor } from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import {
  GOLDEN_FEATURE_SETS,
  caseShader,
  expectCaseMatchesReference,
} from './execution-case.test-support.js';
import {
  explicitLayout,
  normalizeFeatures,
  openWebGpu,
  type GpuEntry,
  type WebGpuContext,
} from './runner/index.js';
import { wgslTarget, type WgslFeature } from './targets.js';

// The execution cases shared by every engine, for every WGSL golden entry (kernel, feature set,
// schedule), run in headless Chromium (vitest.browser.config.ts) on the page's own navigator.gpu
// (SwiftShader there), so Dawn is never loaded. A case the adapter cannot take (a feature it lacks,
// a limit it is under) is skipped with the reason in its name; no adapter at all is a failure.

const SETUP_HINT =
  'the browser suite needs Chromium with WebGPU (SwiftShader): run `bash tools/setup-browser.sh` (as root)';

// Chromium's requestAdapter() can answer null on its first call; one retry settles it.
async function requestAdapter(gpu: GPU | undefined): Promise<GPUAdapter | null> {
  if (gpu === undefined) return null;
  return (await gpu.requestAdapter()) ?? (await gpu.requestAdapter());
}

// The package's types are Node's (no DOM lib): navigator is read off globalThis.
const browserGpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
const probeAdapter = await requestAdapter(browserGpu);

const gpuEntry: GpuEntry = {
  async requestAdapter() {
    const adapter = await requestAdapter(browserGpu);
    if (adapter === null)
      throw new Error(
        `Chromium offers no WebGPU adapter (navigator.gpu ${browserGpu === undefined ? 'is missing' : 'answered null twice'}); ${SETUP_HINT}`,
      );
    return adapter;
  },
};

const contexts = new Map<string, Promise<WebGpuContext>>();
function browserWebGpu(features: readonly string[]): Promise<WebGpuContext> {
  const key = normalizeFeatures(features).join(',');
  const cached = contexts.get(key);
  if (cached !== undefined) return cached;
  const opened = openWebGpu({ gpu: gpuEntry, features });
  contexts.set(key, opened);
  return opened;
}
// Pipelines compiled ahead (see prewarm), held until the end so Dawn's cache keeps them.
const warmPipelines: GPUComputePipeline[] = [];
afterAll(async () => {
  warmPipelines.length = 0;
  for (const result of await Promise.allSettled(contexts.values()))
    if (result.status === 'fulfilled') result.value.destroy();
});

/**
 * Compiles the shaders' pipelines up front, exactly as runWgsl describes them (same module, layout
 * and entry points), and holds them, so Dawn's pipeline cache hands each case's runWgsl the same
 * pipeline: SwiftShader's compiles (up to seconds each) are most of the suite's time, and a
 * pipeline dropped between cases would be compiled again. A failure is left to the test.
 */
async function prewarm(shaders: readonly GeneratedShader[]): Promise<void> {
  const unique = new Map(shaders.map((shader) => [shader.source, shader]));
  await Promise.allSettled(
    [...unique.values()].map(async (shader) => {
      const { bindings, requiredFeatures } = shader.launch;
      if (bindings === undefined) return;
      const { device } = await browserWebGpu(requiredFeatures ?? []);
      const module = device.createShaderModule({ code: shader.source });
      const { pipelineLayout } = explicitLayout(device, bindings);
      for (const dispatch of shader.launch.dispatches ?? [shader.launch])
        warmPipelines.push(
          await device.createComputePipelineAsync({
            layout: pipelineLayout,
            compute: { module, entryPoint: dispatch.entryPoint },
          }),
        );
    }),
  );
}

it('Chromium offers a WebGPU adapter', () => {
  expect(
    probeAdapter,
    `${browserGpu === undefined ? 'navigator.gpu is missing' : 'requestAdapter() answered null twice'}; ${SETUP_HINT}`,
  ).not.toBeNull();
});

/** Why the adapter cannot take a shader: features it lacks, limits it is under (none: it can). */
function adapterCannotTake(shader: GeneratedShader): string[] {
  if (probeAdapter === null) return [];
  const { features, limits } = probeAdapter;
  const reasons = (shader.launch.requiredFeatures ?? [])
    .filter((feature) => !features.has(feature))
    .map((feature) => `it lacks ${feature}`);
  for (const dispatch of shader.launch.dispatches ?? [shader.launch]) {
    const invocations = dispatch.workgroupSize.reduce((product, size) => product * size, 1);
    if (invocations > limits.maxComputeInvocationsPerWorkgroup)
      reasons.push(
        `maxComputeInvocationsPerWorkgroup ${limits.maxComputeInvocationsPerWorkgroup} < ${invocations}`,
      );
    if (dispatch.sharedBytes > limits.maxComputeWorkgroupStorageSize)
      reasons.push(
        `maxComputeWorkgroupStorageSize ${limits.maxComputeWorkgroupStorageSize} < ${dispatch.sharedBytes}`,
      );
  }
  return [...new Set(reasons)];
}

/**
 * The sources of a kernel's WGSL golden entries on a feature set, as packages/cli/src/golden/
 * entries.ts pins them: the default schedule on every golden feature set (its GOLDEN_SCHEDULES
 * pin other schedules on PTX only, which its test holds to).
 */
const goldenSources = new Map<string, Set<string>>();
function isGoldenShader(
  kernelId: string,
  features: readonly WgslFeature[],
  source: string,
): boolean {
  const key = `${kernelId}:${features.join(',')}`;
  let sources = goldenSources.get(key);
  if (sources === undefined) {
    const kernel = getKernel(kernelId);
    sources = new Set([emitWgsl(kernel.spec, {}, wgslTarget(features)).source]);
    goldenSources.set(key, sources);
  }
  return sources.has(source);
}

// Decided while the file loads (describe callbacks run later) so the console line below can list
// the skips. Cases at schedules no golden entry pins run in the Node suite only.
const summary: string[] = [];
const plans = GOLDEN_FEATURE_SETS.map((features) => {
  const label = features.join(',') || 'none';
  const all = executionCasesFor('webgpu').map((testCase) => ({
    testCase,
    shader: caseShader(testCase, features),
  }));
  const cases = all
    .filter(({ testCase, shader }) => isGoldenShader(testCase.kernelId, features, shader.source))
    .map((plan) => ({ ...plan, reasons: adapterCannotTake(plan.shader) }));
  const skips = cases.filter((plan) => plan.reasons.length > 0);
  const why = [...new Set(skips.flatMap((plan) => plan.reasons))].join(', ');
  summary.push(
    `features ${label}: ${cases.length} of ${all.length} cases at golden schedules, ${skips.length} skipped for adapter${skips.length > 0 ? ` (${why})` : ''}`,
  );
  return { label, cases };
});

for (const { label, cases } of plans) {
  describe(`golden WGSL execution cases in Chromium, features ${label}`, () => {
    // Compiling is time, not a test: 39 s for f16,subgroups on an idle 2-core machine, past the
    // 60 s hookTimeout beside another package's suite, which skipped every case of the set.
    beforeAll(async () => {
      const start = performance.now();
      await prewarm(cases.filter((plan) => plan.reasons.length === 0).map((plan) => plan.shader));
      console.log(
        `browser WebGPU: features ${label}: pipelines compiled in ${((performance.now() - start) / 1000).toFixed(1)} s`,
      );
    }, 600_000);
    for (const { testCase, shader, reasons } of cases) {
      if (reasons.length > 0) {
        it.skip(`${testCase.name} (skipped for adapter: ${reasons.join(', ')})`, () => {});
        continue;
      }
      it(testCase.name, async () => {
        const context = await browserWebGpu(shader.launch.requiredFeatures ?? []);
        await expectCaseMatchesReference(context, testCase, shader, 'rounding');
      });
    }
  });
}

const adapterLine =
  probeAdapter === null
    ? 'no adapter'
    : [
        [probeAdapter.info.vendor, probeAdapter.info.architecture, probeAdapter.info.description]
          .filter((part) => part !== '')
          .join(' / '),
        ['shader-f16', 'subgroups']
          .map((feature) => `${feature} ${probeAdapter.features.has(feature) ? 'yes' : 'no'}`)
          .join(', '),
        `subgroup size ${probeAdapter.info.subgroupMinSize}..${probeAdapter.info.subgroupMaxSize}`,
        `${probeAdapter.limits.maxComputeInvocationsPerWorkgroup} invocations per workgroup`,
      ].join('; ');
console.log(`browser WebGPU: ${adapterLine}\nbrowser WebGPU: ${summary.join('; ')}`);
