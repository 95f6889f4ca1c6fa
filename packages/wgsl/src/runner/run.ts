/// <reference types="webgpu" preserve="true" />
import {
  ForgeError,
  evaluateSizeExpression,
  type GeneratedShader,
  type LaunchBinding,
  type LaunchDispatch,
  type LaunchInfo,
} from '@forge/ir';
import { compileWgsl } from './compile.js';
import type { WebGpuContext } from './context.js';
import { WebGpuError, WebGpuFeatureError, WebGpuLimitError } from './errors.js';
import { bytesOf, checkInputs, packParams, roundUp, type WgslInputs } from './inputs.js';
import { checkLaunchLimits, explicitLayout } from './pipeline.js';

/**
 * Options of runWgsl; without any, the grid is the shader's launch grid evaluated over the params.
 */
export interface RunWgslOptions {
  /** Workgroups per dimension, instead of evaluating `launch.grid` over the params. */
  readonly grid?: readonly [number, number, number];
}

/**
 * Timing and geometry of one runWgsl dispatch; outputs are copied into the caller's arrays, not
 * returned.
 */
export interface RunWgslResult {
  /** Wall time from submitting the dispatch until the queue finished it (no upload or readback). */
  readonly milliseconds: number;
  /** The workgroups dispatched per dimension (by the first dispatch of a sequence). */
  readonly grid: readonly [number, number, number];
}

/**
 * The grid of a launch: its size expressions over the params and the schedule; of one of a
 * multi-dispatch launch's `dispatches` when given (the first dispatch, the launch itself, otherwise).
 */
export function launchGrid(
  shader: GeneratedShader,
  params: Readonly<Record<string, number>>,
  dispatch: Pick<LaunchDispatch, 'grid'> = shader.launch,
): [number, number, number] {
  const sizes = { ...params, ...shader.schedule };
  const [x, y, z] = dispatch.grid.map((axis) => evaluateSizeExpression(axis, sizes));
  return [x ?? 1, y ?? 1, z ?? 1];
}

function checkGrid(context: WebGpuContext, grid: readonly [number, number, number]): void {
  const maximum = context.device.limits.maxComputeWorkgroupsPerDimension;
  grid.forEach((count, axis) => {
    const what = `grid dimension ${'xyz'[axis]}`;
    if (!Number.isSafeInteger(count) || count < 0)
      throw new ForgeError(`${what} must be a non-negative integer, got ${count}`);
    if (count > maximum)
      throw new WebGpuLimitError('maxComputeWorkgroupsPerDimension', count, maximum, what);
  });
}

function checkFeatures(context: WebGpuContext, launch: LaunchInfo): void {
  for (const feature of launch.requiredFeatures ?? []) {
    if (!context.device.features.has(feature)) {
      throw new WebGpuFeatureError(
        feature,
        `is needed by the shader but the device lacks it; open the context with features [${(launch.requiredFeatures ?? []).join(', ')}]`,
      );
    }
  }
}

function createBuffer(
  device: GPUDevice,
  bytes: Uint8Array,
  usage: number,
  align: number,
): GPUBuffer {
  const buffer = device.createBuffer({
    size: roundUp(Math.max(bytes.byteLength, align), align),
    usage,
    mappedAtCreation: true,
  });
  new Uint8Array(buffer.getMappedRange()).set(bytes);
  buffer.unmap();
  return buffer;
}

/**
 * Runs a generated WGSL kernel once: compiles it (compile errors first, with line:column),
 * uploads the buffers and the params struct, dispatches the grid, and copies every `read_write`
 * buffer back into the caller's typed array. A multi-dispatch kernel allocates its scratch buffers
 * and runs every dispatch in order in one compute pass. Throws a ValidationError for bad inputs, a
 * WebGpuLimitError for a launch over the device's limits and a WebGpuError for anything WebGPU
 * rejects.
 */
export async function runWgsl(
  context: WebGpuContext,
  shader: GeneratedShader,
  inputs: WgslInputs,
  options: RunWgslOptions = {},
): Promise<RunWgslResult> {
  const { launch } = shader;
  if (launch.bindings === undefined)
    throw new ForgeError(`${shader.kernelId}: launch has no WGSL bindings (not a WGSL shader?)`);
  checkInputs(launch, inputs);
  checkFeatures(context, launch);
  const sequence = launch.dispatches ?? [launch];
  if (options.grid !== undefined && sequence.length > 1)
    throw new ForgeError(`${shader.kernelId}: a grid override needs a single-dispatch kernel`);
  const sizes = { ...inputs.params, ...shader.schedule };
  const grids = sequence.map((dispatch) => {
    checkLaunchLimits(context, dispatch);
    const grid: [number, number, number] =
      options.grid === undefined ? launchGrid(shader, inputs.params, dispatch) : [...options.grid];
    checkGrid(context, grid);
    return grid;
  });
  const scratchBytes = new Map(
    (launch.scratch ?? []).map((scratch) => [
      scratch.name,
      evaluateSizeExpression(scratch.bytes, sizes),
    ]),
  );

  const { module } = await compileWgsl(context, shader.source);
  const { device } = context;
  const created: GPUBuffer[] = [];
  const track = (buffer: GPUBuffer): GPUBuffer => {
    created.push(buffer);
    return buffer;
  };
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  let scopesOpen = true;
  try {
    const layout = explicitLayout(device, launch.bindings);
    // One pipeline per dispatch, all over the same layout and bind groups.
    const pipelines = sequence.map((dispatch) =>
      device.createComputePipeline({
        layout: layout.pipelineLayout,
        compute: { module, entryPoint: dispatch.entryPoint },
      }),
    );
    const resources = new Map<LaunchBinding, GPUBuffer>();
    const readbacks: { binding: LaunchBinding; buffer: GPUBuffer; staging: GPUBuffer }[] = [];
    for (const binding of launch.bindings) {
      if (binding.kind === 'params') {
        const bytes = packParams(launch, inputs.params);
        const usage = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
        resources.set(binding, track(createBuffer(device, bytes, usage, 16)));
        continue;
      }
      if (binding.kind === 'scratch') {
        // Filled with 0xff bytes (NaN for floats), so a read before any write shows.
        const bytes = new Uint8Array(scratchBytes.get(binding.name) ?? 0).fill(0xff);
        resources.set(binding, track(createBuffer(device, bytes, GPUBufferUsage.STORAGE, 4)));
        continue;
      }
      const array = inputs.buffers[binding.name];
      if (array === undefined) continue; // checkInputs rejected this already
      const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      const buffer = track(createBuffer(device, bytesOf(array), usage, 4));
      resources.set(binding, buffer);
      if (binding.access === 'read_write') {
        const staging = track(
          device.createBuffer({
            size: buffer.size,
            usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
          }),
        );
        readbacks.push({ binding, buffer, staging });
      }
    }
    const bindGroups = layout.groups.map((groupLayout, group) =>
      device.createBindGroup({
        layout: groupLayout,
        entries:
          launch.bindings
            ?.filter((binding) => binding.group === group)
            .flatMap((binding) => {
              const buffer = resources.get(binding);
              return buffer === undefined
                ? []
                : [{ binding: binding.binding, resource: { buffer } }];
            }) ?? [],
      }),
    );

    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    bindGroups.forEach((bindGroup, group) => pass.setBindGroup(group, bindGroup));
    // Dispatches of one pass run in order, each seeing the storage writes of those before it.
    pipelines.forEach((pipeline, index) => {
      const grid = grids[index] ?? [0, 0, 0];
      pass.setPipeline(pipeline);
      pass.dispatchWorkgroups(grid[0], grid[1], grid[2]);
    });
    pass.end();
    const dispatch = encoder.finish();
    const copies = device.createCommandEncoder();
    for (const { buffer, staging } of readbacks)
      copies.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
    const copy = copies.finish();

    const start = performance.now();
    device.queue.submit([dispatch]);
    await device.queue.onSubmittedWorkDone();
    const milliseconds = performance.now() - start;
    device.queue.submit([copy]);

    scopesOpen = false;
    const outOfMemory = await device.popErrorScope();
    const invalid = await device.popErrorScope();
    const error = invalid ?? outOfMemory;
    if (error !== null) {
      throw new WebGpuError(
        `${shader.kernelId}: WebGPU rejected the launch: ${error.message.trim()}`,
      );
    }
    for (const { binding, staging } of readbacks) {
      await staging.mapAsync(GPUMapMode.READ);
      const target = inputs.buffers[binding.name];
      if (target !== undefined) {
        const bytes = bytesOf(target);
        bytes.set(new Uint8Array(staging.getMappedRange()).subarray(0, bytes.byteLength));
      }
      staging.unmap();
    }
    const [grid] = grids;
    return { milliseconds, grid: grid ?? [0, 0, 0] };
  } finally {
    if (scopesOpen) {
      // Something threw between push and pop: leave the device's scope stack as it was.
      await device.popErrorScope().catch(() => null);
      await device.popErrorScope().catch(() => null);
    }
    for (const buffer of created) buffer.destroy();
  }
}
