/// <reference types="webgpu" preserve="true" />
import type { LaunchBinding, LaunchInfo } from '@forge/ir';
import type { WebGpuContext } from './context.js';
import { WebGpuLimitError } from './errors.js';

/** Bind group layouts (one per group index up to the highest used) and the pipeline layout. */
export interface ExplicitLayout {
  readonly groups: GPUBindGroupLayout[];
  readonly pipelineLayout: GPUPipelineLayout;
}

function bufferType(binding: LaunchBinding): GPUBufferBindingType {
  if (binding.kind === 'params' || binding.access === 'uniform') return 'uniform';
  return binding.access === 'read_write' ? 'storage' : 'read-only-storage';
}

/**
 * The layout the bindings describe. Explicit rather than `layout: 'auto'`, so that a binding the
 * entry point never touches still binds (an auto layout drops it and the bind group fails).
 */
export function explicitLayout(
  device: GPUDevice,
  bindings: readonly LaunchBinding[],
): ExplicitLayout {
  const groupCount = bindings.reduce((count, binding) => Math.max(count, binding.group + 1), 0);
  const groups: GPUBindGroupLayout[] = [];
  for (let group = 0; group < groupCount; group++) {
    const entries = bindings
      .filter((binding) => binding.group === group)
      .sort((a, b) => a.binding - b.binding)
      .map((binding): GPUBindGroupLayoutEntry => ({
        binding: binding.binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: bufferType(binding) },
      }));
    groups.push(device.createBindGroupLayout({ entries }));
  }
  return { groups, pipelineLayout: device.createPipelineLayout({ bindGroupLayouts: groups }) };
}

/** Workgroup size and workgroup memory against the device's limits, with a clear message. */
export function checkLaunchLimits(
  context: WebGpuContext,
  launch: Pick<LaunchInfo, 'workgroupSize' | 'sharedBytes'>,
): void {
  const limits = context.device.limits;
  const [x, y, z] = launch.workgroupSize;
  const perAxis: [string, number, number][] = [
    ['maxComputeWorkgroupSizeX', x, limits.maxComputeWorkgroupSizeX],
    ['maxComputeWorkgroupSizeY', y, limits.maxComputeWorkgroupSizeY],
    ['maxComputeWorkgroupSizeZ', z, limits.maxComputeWorkgroupSizeZ],
  ];
  perAxis.forEach(([limit, value, maximum], axis) => {
    if (value > maximum)
      throw new WebGpuLimitError(limit, value, maximum, `workgroup size ${'xyz'[axis]}`);
  });
  const invocations = x * y * z;
  if (invocations > limits.maxComputeInvocationsPerWorkgroup) {
    throw new WebGpuLimitError(
      'maxComputeInvocationsPerWorkgroup',
      invocations,
      limits.maxComputeInvocationsPerWorkgroup,
      'invocations per workgroup',
    );
  }
  if (launch.sharedBytes > limits.maxComputeWorkgroupStorageSize) {
    throw new WebGpuLimitError(
      'maxComputeWorkgroupStorageSize',
      launch.sharedBytes,
      limits.maxComputeWorkgroupStorageSize,
      'workgroup memory (bytes)',
    );
  }
}
