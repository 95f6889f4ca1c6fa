/// <reference types="webgpu" preserve="true" />
import { dawnGpu, type GpuEntry } from './dawn.js';
import { WebGpuFeatureError, WebGpuUnavailableError } from './errors.js';

/** An adapter and a device ready to compile and run WGSL. */
export interface WebGpuContext {
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
  /** The features the device was created with (`shader-f16`, `subgroups`), sorted. */
  readonly features: readonly string[];
  /** The adapter as one line: vendor, architecture, device, driver description. */
  readonly description: string;
  /** Destroys the device; the context cannot be used afterwards. Safe to call twice. */
  destroy(): void;
}

/**
 * What openWebGpu opens: the device features to enable, and optionally a WebGPU entry point other
 * than Dawn's.
 */
export interface OpenWebGpuOptions {
  /**
   * Device features to enable: `shader-f16` (or its target name `f16`) and `subgroups`. Each must
   * be offered by the adapter, otherwise openWebGpu throws a WebGpuFeatureError naming it.
   */
  readonly features?: readonly string[];
  /** The WebGPU entry point to use instead of Dawn's (for tests). */
  readonly gpu?: GpuEntry;
}

/**
 * Limits raised from WebGPU's defaults to what the adapter offers: the kernels use up to 1024
 * invocations and 32 KiB of workgroup memory, which a device only gets when it asks for them.
 */
const RAISED_LIMITS = [
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
] as const;

/** Target feature names (`f16`) to WebGPU feature names (`shader-f16`); others pass through. */
export function webGpuFeatureName(feature: string): string {
  return feature === 'f16' ? 'shader-f16' : feature;
}

/** The canonical form of a feature list: WebGPU names, no duplicates, sorted. */
export function normalizeFeatures(features: readonly string[]): string[] {
  return [...new Set(features.map(webGpuFeatureName))].sort();
}

/** Opens an adapter and a device with raised limits and the requested features. */
export async function openWebGpu(options: OpenWebGpuOptions = {}): Promise<WebGpuContext> {
  const features = normalizeFeatures(options.features ?? []);
  const gpu = options.gpu ?? (await dawnGpu());
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WebGpuUnavailableError(`requestAdapter failed: ${reason}`, { cause: error });
  }
  if (adapter === null) {
    throw new WebGpuUnavailableError('Dawn found no usable Vulkan driver');
  }
  for (const feature of features) {
    if (!adapter.features.has(feature)) {
      throw new WebGpuFeatureError(
        feature,
        `is not offered by the adapter (${describeAdapter(adapter)}); it offers: ${[...adapter.features].sort().join(', ')}`,
      );
    }
  }
  const requiredLimits: Record<string, number> = {};
  for (const limit of RAISED_LIMITS) requiredLimits[limit] = adapter.limits[limit];
  const device = await adapter.requestDevice({
    requiredFeatures: features as GPUFeatureName[],
    requiredLimits,
  });
  let destroyed = false;
  return {
    adapter,
    device,
    features,
    description: describeAdapter(adapter),
    destroy() {
      if (destroyed) return;
      destroyed = true;
      device.destroy();
    },
  };
}

function describeAdapter(adapter: GPUAdapter): string {
  const info = adapter.info;
  const parts = [info.vendor, info.architecture, info.device, info.description];
  const text = parts.filter((part) => part !== '').join(' / ');
  return text === '' ? 'unknown adapter' : text;
}
