// Probes WebGPU the way the tests use it: Dawn (the `webgpu` package of @forge/wgsl) on whatever
// Vulkan driver the machine has. Prints one line describing the adapter and exits 0 when an
// adapter and a device are available; exits 1 when there is no adapter, 2 when the `webgpu`
// package is not installed (run `pnpm install` first). Used by tools/setup-webgpu.sh.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const wgslPackage = fileURLToPath(new URL('../packages/wgsl/package.json', import.meta.url));
let entry;
try {
  entry = createRequire(wgslPackage).resolve('webgpu');
} catch {
  console.log('webgpu-probe: the webgpu package is not installed; run `pnpm install` first');
  process.exit(2);
}

let adapter;
let device;
try {
  const { create, globals } = await import(pathToFileURL(entry).href);
  Object.assign(globalThis, globals);
  adapter = await create([]).requestAdapter();
  if (adapter === null || adapter === undefined) {
    console.log('webgpu-probe: no WebGPU adapter (Dawn found no usable Vulkan driver)');
    process.exit(1);
  }
  device = await adapter.requestDevice();
} catch (error) {
  console.log(`webgpu-probe: WebGPU failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
const { vendor, architecture, device: name, description } = adapter.info;
const wanted = ['shader-f16', 'subgroups'].filter((feature) => adapter.features.has(feature));
const what = [vendor, architecture, name, description].filter((part) => part !== '').join(' / ');
console.log(
  `webgpu-probe: adapter ${what || '(no info)'}; features ${wanted.join(', ') || 'none of shader-f16, subgroups'}; ` +
    `maxComputeInvocationsPerWorkgroup ${adapter.limits.maxComputeInvocationsPerWorkgroup}`,
);
device.destroy();
process.exit(0);
