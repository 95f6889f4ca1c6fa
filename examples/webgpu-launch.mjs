// Runs a kernel from `forge emit <id> --target wgsl --json` on a WebGPU device, using nothing but
// the JSON: the WGSL source and `launch` (entry point, bindings, params struct layout, grid).
import { evaluateSizeExpression } from '@forge/ir';

/**
 * `shader` is the parsed JSON; `buffers` holds one typed array per buffer binding (by the spec's
 * name: Float32Array for f32, Uint32Array for u32 words, ...), `params` one number per scalar param.
 * A kernel of several dispatches (`launch.dispatches`) runs them in order, over scratch buffers
 * this allocates (`launch.scratch`). Resolves to the contents of every read_write buffer after the
 * kernel ran.
 */
export async function launchOnWebGpu(device, shader, buffers, params) {
  const { launch } = shader;
  // An explicit layout from launch.bindings: an 'auto' layout would drop a binding the code never reads.
  const groupLayouts = [];
  for (const binding of launch.bindings) {
    const type =
      binding.kind === 'params'
        ? 'uniform'
        : binding.access === 'read'
          ? 'read-only-storage'
          : 'storage';
    (groupLayouts[binding.group] ??= []).push({
      binding: binding.binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type },
    });
  }
  const bindGroupLayouts = groupLayouts.map((entries) => device.createBindGroupLayout({ entries }));
  const layout = device.createPipelineLayout({ bindGroupLayouts });
  const module = device.createShaderModule({ code: shader.source });
  // One pipeline per dispatch: each is an entry point of the module, over the same bindings.
  const dispatches = (launch.dispatches ?? [launch]).map((dispatch) => ({
    dispatch,
    pipeline: device.createComputePipeline({
      layout,
      compute: { module, entryPoint: dispatch.entryPoint },
    }),
  }));

  // The params struct: each scalar at its byte offset, little-endian, in a uniform buffer.
  const block = new DataView(new ArrayBuffer(launch.parameterBytes));
  for (const { name, type, offset } of launch.parameters) {
    if (type === 'f32') block.setFloat32(offset, params[name], true);
    else if (type === 'i32') block.setInt32(offset, params[name], true);
    else block.setUint32(offset, params[name], true);
  }

  const gpuBuffers = new Map();
  const groupEntries = [];
  for (const binding of launch.bindings) {
    const usage =
      binding.kind === 'params'
        ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST
        : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    let buffer;
    if (binding.kind === 'scratch') {
      // Scratch: what one dispatch hands the next; a dispatch writes it before another reads it.
      const { bytes } = launch.scratch.find((entry) => entry.name === binding.name);
      const size = Math.ceil(evaluateSizeExpression(bytes, params) / 4) * 4;
      buffer = device.createBuffer({ size, usage });
    } else {
      const data = binding.kind === 'params' ? new Uint8Array(block.buffer) : buffers[binding.name];
      buffer = device.createBuffer({ size: Math.ceil(data.byteLength / 4) * 4, usage });
      device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    }
    gpuBuffers.set(binding, buffer);
    (groupEntries[binding.group] ??= []).push({ binding: binding.binding, resource: { buffer } });
  }

  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  groupEntries.forEach((entries, group) =>
    pass.setBindGroup(group, device.createBindGroup({ layout: bindGroupLayouts[group], entries })),
  );
  // Dispatches in order (WebGPU orders a pass's dispatches); grids are size expressions over the
  // params, such as `min(ceil_div(n, 256), 65535)`.
  for (const { dispatch, pipeline } of dispatches) {
    pass.setPipeline(pipeline);
    const [x, y, z] = dispatch.grid.map((expression) => evaluateSizeExpression(expression, params));
    pass.dispatchWorkgroups(x, y, z);
  }
  pass.end();

  const readBacks = [];
  for (const [binding, buffer] of gpuBuffers) {
    if (binding.kind !== 'buffer' || binding.access !== 'read_write') continue; // not scratch
    const staging = device.createBuffer({
      size: buffer.size,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
    readBacks.push({ binding, staging });
  }
  device.queue.submit([encoder.finish()]);

  const results = {};
  for (const { binding, staging } of readBacks) {
    await staging.mapAsync(GPUMapMode.READ);
    const like = buffers[binding.name];
    results[binding.name] = new like.constructor(
      staging.getMappedRange().slice(0, like.byteLength),
    );
    staging.unmap();
  }
  return results;
}
