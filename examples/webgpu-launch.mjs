// Runs a kernel from `forge emit <id> --target wgsl --json` on a WebGPU device, using nothing but
// the JSON: the WGSL source and `launch` (entry point, bindings, params struct layout, grid).
import { evaluateSizeExpression } from '@forge/ir';

/**
 * `shader` is the parsed JSON; `buffers` holds one typed array per buffer binding (by the spec's
 * name: Float32Array for f32, Uint32Array for u32 words, ...), `params` one number per scalar param.
 * Resolves to the contents of every read_write buffer after the kernel ran.
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
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts }),
    compute: {
      module: device.createShaderModule({ code: shader.source }),
      entryPoint: launch.entryPoint,
    },
  });

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
    const data = binding.kind === 'params' ? new Uint8Array(block.buffer) : buffers[binding.name];
    const usage =
      binding.kind === 'params'
        ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST
        : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const buffer = device.createBuffer({ size: Math.ceil(data.byteLength / 4) * 4, usage });
    device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    gpuBuffers.set(binding, buffer);
    (groupEntries[binding.group] ??= []).push({ binding: binding.binding, resource: { buffer } });
  }

  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  groupEntries.forEach((entries, group) =>
    pass.setBindGroup(group, device.createBindGroup({ layout: bindGroupLayouts[group], entries })),
  );
  // The grid is size expressions over the params, such as `min(ceil_div(n, 256), 65535)`.
  const [x, y, z] = launch.grid.map((expression) => evaluateSizeExpression(expression, params));
  pass.dispatchWorkgroups(x, y, z);
  pass.end();

  const readBacks = [];
  for (const [binding, buffer] of gpuBuffers) {
    if (binding.kind !== 'buffer' || binding.access !== 'read_write') continue;
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
