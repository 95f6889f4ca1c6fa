// Run by subgroup-sizes.test.ts in a child process whose LP_NATIVE_VECTOR_WIDTH gives lavapipe the
// subgroup size under test (the variable must be set before the Vulkan driver loads): shared WebGPU
// execution cases whose shader uses subgroup operations, checked against the kernel's float64
// reference. Prints one JSON line: the adapter's subgroup sizes and each case's NMSE and tolerance.
import { ready } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { executionCasesFor } from '@forge/test-fixtures';
import { emitWgsl, wgslTarget } from '@forge/wgsl';
import { openWebGpu, runWgsl } from '@forge/wgsl/runner';

await ready();
const context = await openWebGpu({ features: ['subgroups'] });
const { subgroupMinSize, subgroupMaxSize } = context.adapter.info;
const results = [];
// `first`: one case a kernel, the one whose WGSL is shortest (lavapipe's compile time grows with
// the code: with the cache off sdpa-decode-f32 takes ~52 s at the default schedule, ~33 s at
// heads 2); otherwise every case.
const firstOnly = process.argv[2] === 'first';
const chosen = new Map();
for (const testCase of executionCasesFor('webgpu')) {
  const kernel = getKernel(testCase.kernelId);
  const shader = emitWgsl(kernel.spec, testCase.schedule, wgslTarget(['subgroups']));
  if (!(shader.launch.requiredFeatures ?? []).includes('subgroups')) continue;
  const key = firstOnly ? testCase.kernelId : testCase.name;
  const before = chosen.get(key);
  if (before === undefined || shader.source.length < before.shader.source.length)
    chosen.set(key, { testCase, kernel, shader });
}
for (const { testCase, kernel, shader } of chosen.values()) {
  const buffers = makeCaseInputs(kernel, testCase);
  await runWgsl(context, shader, { buffers, params: kernel.params(testCase.shape) });
  // The case's tolerance, as the execution suites check it (a quantizing kernel's case allows
  // a quantized word that rounds the other way).
  const { nmse, tolerance } = checkCase(kernel, testCase, buffers);
  results.push({ name: testCase.name, nmse, tolerance });
}
context.destroy();
console.log(JSON.stringify({ subgroupMinSize, subgroupMaxSize, results }));
