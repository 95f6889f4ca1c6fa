// docs/engines.md's "Using Forge from an engine" examples, run as written: the WebGPU one on Dawn, the
// CUDA one through a driver API carried out by the PTX simulator. Both start from `forge emit --json`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareWithReference, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { closeSharedWebGpu, sharedWebGpu } from '@forge/wgsl/runner';
import { launchOnCuda } from '@forge/examples/cuda-launch.mjs';
import { launchOnWebGpu } from '@forge/examples/webgpu-launch.mjs';
import { cudaOnSimulator } from './cuda-on-simulator.mjs';
import { ROOT } from './workspace.mjs';

const forgeBin = join(ROOT, 'packages', 'cli', 'dist', 'bin.js');
const page = readFileSync(join(ROOT, 'docs', 'engines.md'), 'utf8');

/** `forge emit … --json`, parsed, as an engine's build step would produce it. */
function emitJson(...args) {
  return JSON.parse(
    execFileSync(process.execPath, [forgeBin, 'emit', ...args, '--json'], { encoding: 'utf8' }),
  );
}

/** Inputs for a catalog kernel at a shape (seeded; quantized weights where the kernel has them). */
function inputsFor(id, shape) {
  const kernel = getKernel(id);
  const testCase = {
    name: `${id} engine example`,
    kernelId: id,
    schedule: {},
    shape,
    seed: 7,
    magnitude: 1,
  };
  return { kernel, buffers: makeCaseInputs(kernel, testCase), params: kernel.params(shape) };
}

/** A simulated CUDA device holding every buffer, uploaded as an engine does (cuMemAlloc, cuMemcpyHtoD). */
function deviceWith(buffers) {
  const cuda = cudaOnSimulator();
  const pointers = {};
  for (const [name, data] of Object.entries(buffers)) {
    pointers[name] = cuda.cuMemAlloc(data.byteLength);
    cuda.cuMemcpyHtoD(pointers[name], data);
  }
  return { cuda, pointers };
}

const CASES = [
  ['rmsnorm', { n_embd: 4096, rows: 3 }],
  ['q8_0-gemv', { n_in: 512, n_out: 37 }],
  // Two dispatches over scratch: x quantized once, then the rows.
  ['q4k-gemv', { n_in: 512, n_out: 9 }],
];

it.each(['examples/webgpu-launch.mjs', 'examples/cuda-launch.mjs'])(
  'docs/engines.md shows %s verbatim',
  (file) => {
    const source = readFileSync(join(ROOT, file), 'utf8');
    expect(page).toContain(`<!-- ${file} -->\n\n\`\`\`js\n${source}\`\`\`\n`);
  },
);

describe('WebGPU: launchOnWebGpu from docs/engines.md', () => {
  afterAll(closeSharedWebGpu);

  it.each(
    CASES.flatMap(([id, shape]) => [
      [id, shape, []],
      [id, shape, ['f16', 'subgroups']],
    ]),
  )('%s %o with features %o matches the float64 reference', async (id, shape, features) => {
    const shader = emitJson(
      id,
      '--target',
      'wgsl',
      ...(features.length > 0 ? ['--features', features.join(',')] : []),
    );
    const { kernel, buffers, params } = inputsFor(id, shape);
    const { device } = await sharedWebGpu(features);
    const outputs = await launchOnWebGpu(device, shader, buffers, params);
    expect(Object.keys(outputs)).toEqual(kernel.outputs);
    const check = compareWithReference(kernel, buffers, params, outputs);
    expect(check.nmse).toBeLessThanOrEqual(kernel.tolerance);
  });
});

describe('CUDA driver API: launchOnCuda from docs/engines.md, on the PTX simulator', () => {
  it.each(
    CASES.flatMap(([id, shape]) => ['sm_75', 'sm_80', 'sm_90'].map((arch) => [id, shape, arch])),
  )('%s %o for %s matches the float64 reference', (id, shape, arch) => {
    const shader = emitJson(id, '--target', 'ptx', '--arch', arch);
    const { kernel, buffers, params } = inputsFor(id, shape);
    const { cuda, pointers } = deviceWith(buffers);
    launchOnCuda(cuda, shader, pointers, params);
    const outputs = {};
    for (const name of kernel.outputs) {
      outputs[name] = new buffers[name].constructor(buffers[name].length);
      cuda.cuMemcpyDtoH(outputs[name], pointers[name]);
    }
    const check = compareWithReference(kernel, buffers, params, outputs);
    expect(check.nmse).toBeLessThanOrEqual(kernel.tolerance);
    // One launch a dispatch, in order, each with its own block.
    const dispatches = shader.launch.dispatches ?? [shader.launch];
    expect(cuda.launches.map((launch) => launch.block)).toEqual(
      dispatches.map((dispatch) => dispatch.workgroupSize),
    );
  });

  it('a parameter block laid out wrongly is caught (the check can fail)', () => {
    const shader = emitJson('rmsnorm', '--target', 'ptx', '--arch', 'sm_80');
    // Swap the offsets of two params: the kernel then reads n_embd where rows is, and back.
    const parameters = shader.launch.parameters.map((parameter) => ({ ...parameter }));
    const rows = parameters.find((parameter) => parameter.name === 'rows');
    const width = parameters.find((parameter) => parameter.name === 'n_embd');
    [rows.offset, width.offset] = [width.offset, rows.offset];
    const broken = { ...shader, launch: { ...shader.launch, parameters } };
    const { kernel, buffers, params } = inputsFor('rmsnorm', { n_embd: 256, rows: 2 });
    const { cuda, pointers } = deviceWith(buffers);
    launchOnCuda(cuda, broken, pointers, params);
    const y = new Float32Array(buffers.y.length);
    cuda.cuMemcpyDtoH(y, pointers.y);
    expect(compareWithReference(kernel, buffers, params, { y }).nmse).toBeGreaterThan(
      kernel.tolerance,
    );
  });
});
